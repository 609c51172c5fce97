"""Ctrl+G in the line REPL: the input goes to $EDITOR (a small script) and comes back."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.frontends.test_line import PROMPT, enter, leave, repl
from tests.support.fake_openai import FakeOpenAI, text

CTRL_G = "\x07"


def editor_script(folder: Path, body: str) -> str:
    script = folder / "editor.sh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


@pytest.fixture
def env(fake: FakeOpenAI) -> dict[str, str]:
    return dict(
        os.environ,
        OPENAI_BASE_URL=fake.base_url,
        TERM="xterm",
        NO_COLOR="1",
        PROMPT_TOOLKIT_NO_CPR="1",
        VISUAL="",
    )


def test_ctrl_g_edits_the_input_and_enter_sends_the_edit(fake, workspace, env, tmp_path):
    env["EDITOR"] = editor_script(tmp_path, """sed -i 's/draft/edited draft/' "$1" """)
    fake.add(text("Got it."))
    child = repl(workspace, env)
    child.send("a draft")
    child.send(CTRL_G)
    child.expect_exact("edited draft")  # the prompt shows the edit
    enter(child, "")
    child.expect_exact("Got it.")
    child.expect_exact(PROMPT)
    assert fake.requests[0]["messages"][-1]["content"] == "a edited draft"
    assert leave(child) == 0


def test_a_missing_editor_is_a_notice_and_the_input_stays(fake, workspace, env, tmp_path):
    env["EDITOR"] = str(tmp_path / "no-such-editor")
    fake.add(text("Kept."))
    child = repl(workspace, env)
    child.send("keep me")
    child.send(CTRL_G)
    child.expect_exact("Not edited: the editor could not be started")
    enter(child, "")
    child.expect_exact("Kept.")
    child.expect_exact(PROMPT)
    assert fake.requests[0]["messages"][-1]["content"] == "keep me"
    assert leave(child) == 0
