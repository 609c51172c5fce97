"""Ctrl+G in the TUI: the input goes to $EDITOR (a small script here) and comes back."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from agent_cli.frontends.tui.app import AgentApp
from tests.frontends.tui.support import SIZE


def editor_script(folder: Path, body: str) -> str:
    script = folder / "editor.sh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


async def test_ctrl_g_puts_the_edited_text_back_in_the_input(
    app: AgentApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    editor = editor_script(tmp_path, """printf 'second line\\n' >> "$1" """)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", editor)
    async with app.run_test(size=SIZE) as pilot:
        app.composer.input.set_text("first line")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app.composer.input.text == "first line\nsecond line"
        assert app.focused is app.composer.input


@pytest.mark.parametrize(("body", "said"), [("exit 4", "exited with 4"), ("", "could not")])
async def test_a_failing_or_missing_editor_is_a_notice_and_the_input_stays(
    app: AgentApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, said: str
):
    editor = editor_script(tmp_path, body) if body else str(tmp_path / "no-such-editor")
    monkeypatch.setenv("VISUAL", editor)
    async with app.run_test(size=SIZE) as pilot:
        app.composer.input.set_text("keep me")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app.composer.input.text == "keep me"
        assert any(said in str(n.message) for n in app._notifications)
