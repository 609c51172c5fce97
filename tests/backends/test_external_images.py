"""An external agent that takes images gets them as ACP image blocks; one that does not
gets a line for each; `@path` attachments reach it as text either way."""

from __future__ import annotations

import base64

from agent_cli.engine.items import NoticeItem
from agent_cli.media import Prompt, image_from_bytes
from tests.backends.test_external import make  # noqa: F401  (the fixture)
from tests.support.images import png

SHOT = image_from_bytes(png(12, 9), "shot.png")


async def test_an_agent_that_takes_images_gets_image_blocks(make):  # noqa: F811
    harness = make({"images": True})
    (harness.workspace / "notes.md").write_text("the notes")
    await harness.session.send(Prompt("see this and @notes.md", images=(SHOT,)))
    (prompt,) = harness.records("prompt")
    assert prompt["images"] == [{"mime": "image/png", "data": base64.b64encode(SHOT.data).decode()}]
    assert prompt["text"] == (
        'see this and @notes.md\n\n<attached file="notes.md">\nthe notes\n</attached>'
    )
    assert not harness.items(NoticeItem)


async def test_an_agent_that_does_not_take_images_is_told_what_was_left_out(make):  # noqa: F811
    harness = make({})
    await harness.session.send(Prompt("see this", images=(SHOT,)))
    (prompt,) = harness.records("prompt")
    assert prompt["images"] == []
    assert prompt["text"] == (
        "see this\n\n[image shot.png 12×9]: not shown — this agent does not take images."
    )
    (notice,) = harness.items(NoticeItem)
    assert notice.text == "Fixture does not take images; they were not sent."
