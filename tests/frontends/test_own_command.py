"""`!command` in the line REPL (a real terminal) and the runner itself: the person's own
command, its output shown as it comes and given to the model with the next message."""

from __future__ import annotations

import asyncio
import html
import os
import termios
import time
from pathlib import Path

import pexpect
import pytest

from agent_cli.frontends.own_command import HEAD_CAP, TAIL_CAP, OwnCommand
from tests.frontends.test_line import PROMPT, enter, leave, repl
from tests.support.cli import agent_process
from tests.support.fake_openai import FakeOpenAI, text


@pytest.fixture
def env(fake: FakeOpenAI) -> dict[str, str]:
    return dict(
        os.environ,
        OPENAI_BASE_URL=fake.base_url,
        TERM="xterm",
        NO_COLOR="1",
        PROMPT_TOOLKIT_NO_CPR="1",
        SHELL="/bin/sh",
    )


def cooked(child: pexpect.spawn, timeout: float = 10.0) -> None:
    """Wait until the terminal turns Ctrl-C into a signal again: prompt-toolkit gives the
    terminal back a moment after its prompt has ended."""
    deadline = time.monotonic() + timeout
    while not termios.tcgetattr(child.child_fd)[3] & termios.ISIG:
        assert time.monotonic() < deadline, "the terminal stayed in raw mode"
        time.sleep(0.01)


def told(fake: FakeOpenAI, request: int = 0) -> str:
    return fake.requests[request]["messages"][-1]["content"]


def test_the_output_is_shown_and_goes_with_the_next_message(fake, workspace, env):
    (workspace / "notes.txt").write_text("alpha\n")
    fake.add(text("It failed on purpose."))
    child = repl(workspace, env)
    enter(child, "!cat notes.txt; echo to-$((1 + 1))-stderr >&2; exit 3")
    child.expect_exact("alpha")
    child.expect_exact("to-2-stderr")  # not in the echo of the line typed
    child.expect_exact("exit code 3")
    child.expect_exact(PROMPT)
    assert fake.requests == [], "a command is not a model turn"
    enter(child, "why did it fail?")
    child.expect_exact("It failed on purpose.")
    child.expect_exact(PROMPT)
    message = told(fake)
    assert message.startswith("why did it fail?\n\n")
    command = "cat notes.txt; echo to-$((1 + 1))-stderr >&2; exit 3"
    assert f'<attached command="!{html.escape(command)}">' in message  # the label escaped
    assert f"(exit code 3):\n$ {command}\nalpha\nto-2-stderr\n</attached>" in message
    assert leave(child) == 0


def test_ctrl_c_stops_a_command_and_its_children(fake, workspace, env):
    fake.add(text("ok"))
    child = repl(workspace, env)
    enter(child, "!echo $((40 + 2)) started; sleep 60; echo never")
    child.expect_exact("42 started")  # its output, not the echo of the line typed
    cooked(child)
    child.sendintr()
    child.expect_exact("stopped")
    child.expect_exact(PROMPT)
    enter(child, "and?")
    child.expect_exact("ok")
    child.expect_exact(PROMPT)
    assert told(fake).endswith(
        "(stopped):\n$ echo $((40 + 2)) started; sleep 60; echo never\n42 started\n</attached>"
    )
    assert leave(child) == 0


async def test_the_output_for_the_model_keeps_its_start_and_end(tmp_path: Path):
    shown: list[str] = []
    command = "seq 1 20000"
    own = OwnCommand(command, tmp_path, shown.append)
    attachment = await asyncio.wait_for(own.run(), 30)
    everything = "".join(shown)
    assert everything.endswith("19999\n20000\n"), "the person sees it all"
    assert attachment.label == "!seq 1 20000" and attachment.kind == "command"
    assert attachment.text.count("characters left out") == 1
    assert "\n1\n2\n3\n" in attachment.text and attachment.text.endswith("\n20000")
    assert len(attachment.text) < HEAD_CAP + TAIL_CAP + 200


def test_a_piped_line_starting_with_an_exclamation_mark_is_never_run(fake, workspace):
    """`cat TODO.md | agent` with a repository's `!curl … | sh` line in it: a prompt, not
    the person's own command (only a person at a terminal types those)."""
    fake.add(text("Noted."))
    marker = workspace / "pwned"
    done = agent_process(workspace, stdin=f"!touch {marker}\n", fake=fake)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert told(fake) == f"!touch {marker}"
