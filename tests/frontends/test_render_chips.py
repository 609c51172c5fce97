"""A resumed conversation's transcript shows a message's attachments as chips only."""

from __future__ import annotations

import io

from rich.console import Console

from agent_cli.engine.items import UserItem
from agent_cli.frontends.render import transcript
from agent_cli.media import Attachment, image_from_bytes
from tests.support.images import png


def test_attachments_show_as_chips_not_their_content():
    shot = image_from_bytes(png(640, 480), "shot.png")
    item = UserItem(
        "look at @src/util.py", (shot,), (Attachment("file", "src/util.py", "SECRET BODY"),)
    )
    buffer = io.StringIO()
    transcript(Console(file=buffer, width=100, color_system=None), [item])
    shown = buffer.getvalue()
    assert "› look at @src/util.py" in shown
    assert "[image shot.png 640×480] [file src/util.py]" in shown
    assert "SECRET BODY" not in shown
