"""Images in the TUI: a pasted path or data: text, and Ctrl+V from the clipboard, become
chips above the input that can be removed, and go with the message to the model."""

from __future__ import annotations

import base64
import os
import stat
import threading
from pathlib import Path

import pytest
from textual import events

from agent_cli.engine.items import UserItem
from agent_cli.frontends.clipboard import NO_TOOL
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.user_message import UserMessage
from tests.frontends.tui.support import SIZE, settle, until
from tests.support.fake_openai import FakeOpenAI, held, text
from tests.support.images import png

SHOT = png(40, 30)


def notices(app: AgentApp) -> list[str]:
    return [str(notification.message) for notification in app._notifications]


def fake_clipboard(folder: Path, types: str, data: Path) -> Path:
    """A `wl-paste` that lists `types` and prints the file `data` for any type."""
    folder.mkdir(exist_ok=True)
    script = folder / "wl-paste"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = --list-types ]; then printf "{types}"; exit 0; fi\n'
        f'exec /usr/bin/cat "{data}"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return folder


async def test_a_pasted_image_path_is_a_chip_and_goes_with_the_message(
    app: AgentApp, fake: FakeOpenAI, tmp_path: Path
):
    shot = tmp_path / "shots" / "shot.png"
    shot.parent.mkdir()
    shot.write_bytes(SHOT)
    fake.add(text("A red rectangle."))
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(events.Paste(f"'{shot}'"))  # as a terminal pastes a dropped file
        await until(pilot, lambda: bool(app.composer.chips.images))
        assert app.composer.input.text == "", "the path is not typed into the message"
        assert "[image shot.png 40×30] ✕" in str(app.composer.chips.render())
        await pilot.press(*"what is it?", "enter")
        await settle(pilot, app)
        user = fake.requests[-1]["messages"][-1]
        uri = "data:image/png;base64," + base64.b64encode(SHOT).decode()
        assert user["content"] == [
            {"type": "text", "text": "what is it?"},
            {"type": "image_url", "image_url": {"url": uri}},
        ]
        sent = app.session.conversation.items[0]
        assert isinstance(sent, UserItem) and sent.images[0].data == SHOT
        view = app.transcript.query_one(UserMessage)
        assert "[image shot.png 40×30]" in str(view.render())
        assert not app.composer.chips.images and not app.composer.chips.display


async def test_pasted_data_text_is_a_chip_and_backspace_or_a_click_removes_one(
    app: AgentApp, fake: FakeOpenAI
):
    uri = "data:image/png;base64," + base64.b64encode(SHOT).decode()
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(events.Paste(uri))
        await until(pilot, lambda: len(app.composer.chips.images) == 1)
        app.post_message(events.Paste(uri))  # the same image twice is one chip
        small = "data:image/png;base64," + base64.b64encode(png(3, 3)).decode()
        app.post_message(events.Paste(small))
        await until(pilot, lambda: len(app.composer.chips.images) == 2)
        assert [i.label for i in app.composer.chips.images] == [
            "[image pasted 40×30]", "[image pasted 3×3]"
        ]  # fmt: skip
        await pilot.press("backspace")
        assert [i.label for i in app.composer.chips.images] == ["[image pasted 40×30]"]
        await pilot.click(app.composer.chips, offset=(3, 0))
        await until(pilot, lambda: not app.composer.chips.images)
        await pilot.press("enter")
        await pilot.pause()
        assert fake.requests == [] and app.session.conversation.items == []


async def test_a_pasted_path_that_is_not_an_image_file_goes_in_as_text(app: AgentApp, tmp_path):
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(events.Paste(str(tmp_path / "missing.png")))
        await until(pilot, lambda: "missing.png" in app.composer.input.text)
        assert not app.composer.chips.images


async def test_ctrl_v_reads_the_clipboards_image(
    app: AgentApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    data = tmp_path / "clip.png"
    data.write_bytes(png(64, 16))
    tools = fake_clipboard(tmp_path / "bin", "text/plain\\nimage/png\\n", data)
    monkeypatch.setenv("PATH", str(tools))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+v")
        await until(pilot, lambda: bool(app.composer.chips.images))
        assert app.composer.chips.images[0].label == "[image clipboard 64×16]"


async def test_ctrl_v_without_an_image_or_a_tool_says_so(
    app: AgentApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+v")
        await until(pilot, lambda: NO_TOOL in notices(app))
        words = tmp_path / "words.txt"
        words.write_text("just words")
        bin_dir = fake_clipboard(tmp_path / "bin", "text/plain\\n", words)
        os.environ["PATH"] = str(bin_dir)
        await pilot.press("ctrl+v")
        await until(pilot, lambda: "The clipboard holds no image — copy one first." in notices(app))
        assert not app.composer.chips.images and app.composer.input.text == ""


async def test_images_wait_while_a_run_goes(app: AgentApp, fake: FakeOpenAI):
    gate = threading.Event()
    fake.add(held(text("done"), gate))
    uri = "data:image/png;base64," + base64.b64encode(SHOT).decode()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"first", "enter")
        await until(pilot, lambda: app.session.running)
        app.post_message(events.Paste(uri))
        await until(pilot, lambda: bool(app.composer.chips.images))
        await pilot.press(*"look", "enter")
        await pilot.pause()
        assert app.composer.chips.images, "kept for the next message"
        assert app.composer.input.text == "look"
        gate.set()
        await settle(pilot, app)
