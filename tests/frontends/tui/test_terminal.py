"""`agent` on a real pseudo-terminal: the TUI opens, answers, and quits with exit code 0."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect

from tests.support.fake_openai import FakeOpenAI, text

TIMEOUT = 30


def test_agent_opens_the_tui_answers_and_quits_cleanly(fake: FakeOpenAI, workspace: Path):
    fake.add(text("The sky is blue."))
    env = dict(os.environ, OPENAI_BASE_URL=fake.base_url, TERM="xterm-256color")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agent_cli"],
        cwd=str(workspace),
        env=env,
        timeout=TIMEOUT,
        encoding="utf-8",
        dimensions=(30, 100),
    )
    try:
        child.expect_exact("idle")  # the status line: the first frame is on screen
        child.send("why is the sky blue?\r")
        child.expect_exact("The sky is blue.")
        child.expect_exact("idle")
        child.send("\x03")  # Ctrl+C when idle: a hint first
        child.expect_exact("again to quit")
        child.send("\x03")
        child.expect_exact("To go on: agent --continue (or agent --resume ")
        resumed = child.readline().strip().rstrip(")")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0, child.before
    stored = list((Path(os.environ["XDG_DATA_HOME"]) / "agent" / "conversations").glob("*.jsonl"))
    assert len(stored) == 1, "the conversation was saved"
    assert stored[0].stem == resumed, "the line names the conversation just left"
