"""`--plain` on a real pseudo-terminal: what is typed during a run never lands in the
answer (it is kept for the prompt), and a finished answer is drawn as Markdown.

The fake server holds the first answer mid-stream until the test opens its gate, so
the keys are typed while the run waits on it, not in a race with it.
"""

from __future__ import annotations

import json
import termios
import threading
from collections.abc import Iterator

import pexpect
import pytest

from tests.frontends.test_line import PROMPT, enter, leave, spawn
from tests.frontends.test_line_steer import LIVE, terminal_env, user_texts
from tests.support.fake_openai import FakeOpenAI, held, text, tool_calls
from tests.support.waiting import eventually_sync

__all__ = ["terminal_env"]  # the pty_env fixture
STYLE = r"(?:\s|\x1b\[[0-9;]*m)*"  # bold on and off (NO_COLOR keeps it), spaces


def reading_keys(child: pexpect.spawn) -> None:
    """Wait until the prompt reads keys one by one: a dumb terminal's prompt is written
    before it does, and a key typed sooner meets the terminal's line editing."""
    eventually_sync(
        lambda: not termios.tcgetattr(child.child_fd)[3] & termios.ICANON, "the prompt to read"
    )


@pytest.fixture
def gate(fake: FakeOpenAI) -> Iterator[threading.Event]:
    opened = threading.Event()
    yield opened
    opened.set()  # in any case, so the server can stop


def test_keys_typed_during_a_run_stay_out_of_the_answer_and_wait_for_the_prompt(
    fake, workspace, pty_env, gate
):
    fake.add(held(text("Working on it, reading the code."), gate), text("Second answer."))
    child = spawn(workspace, pty_env, "--plain")
    enter(child, "first")
    child.expect_exact("Working")
    child.expect_exact(LIVE)
    child.send("typed meanwhile")  # no Enter: neither steered nor queued, just typed
    child.expect_exact("typed meanwhile")  # shown in the live prompt
    gate.set()
    child.expect_exact("reading the code.")
    answer_end = child.after
    child.expect_exact(PROMPT)
    shown = answer_end + child.before
    assert "code.typed" not in shown, "the answer's line ends where the answer does"
    child.expect_exact("typed meanwhile")  # the next prompt has it, to send or edit
    enter(child, "")
    child.expect_exact("Second answer.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0
    assert user_texts(fake.requests[1])[-1] == "typed meanwhile"
    assert len(fake.requests) == 2, "the typed text was sent once, by its own Enter"


def test_an_answer_is_drawn_as_markdown_block_by_block(fake, workspace, pty_env, gate):
    # Held after its first block: that one is raw on screen until the next one begins.
    fake.add(held(text("Use **bold** here:\n\n- one\n- two"), gate, shown=4))
    child = spawn(workspace, pty_env, "--plain")
    enter(child, "show me")
    child.expect_exact("**bold**")  # raw while it streams
    gate.set()
    child.expect_exact("\x1b[2A\r\x1b[J")  # its 2 rows erased once the next block begins
    child.expect(rf"Use {STYLE}bold{STYLE} here:")
    child.expect_exact("\x1b[2A\r\x1b[J")  # the last block's 2 rows, once it has ended
    child.expect(rf"•{STYLE}one")
    child.expect_exact(PROMPT)
    assert leave(child) == 0


def test_an_answer_taller_than_the_screen_is_drawn_block_by_block(fake, workspace, pty_env):
    fake.add(text("\n\n".join(f"Step **{n}** done." for n in range(20))))
    child = spawn(workspace, pty_env, "--plain", size=(12, 60))
    enter(child, "list the steps")
    for n in range(20):  # 40 rows at a 12-row terminal: most scroll off, each drawn first
        child.expect(rf"Step {STYLE}{n}{STYLE} done\.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0


def test_copy_sends_the_last_answer_to_the_terminals_clipboard(fake, workspace, pty_env):
    import base64

    fake.add(text("Copy me."))
    child = spawn(workspace, pty_env, "--plain")
    enter(child, "say it")
    child.expect_exact("Copy me.")
    child.expect_exact(PROMPT)
    enter(child, "/copy")
    child.expect_exact(f"\x1b]52;c;{base64.b64encode(b'Copy me.').decode()}\a")  # OSC 52
    child.expect_exact("Copied the last answer")
    child.expect_exact(PROMPT)
    assert leave(child) == 0


def test_on_a_dumb_terminal_keys_typed_during_a_run_are_not_echoed_and_wait_for_the_prompt(
    fake, workspace, pty_env, gate
):
    fake.add(held(text("Working on it, reading the code."), gate), text("Second answer."))
    child = spawn(workspace, dict(pty_env, TERM="dumb"), "--plain")
    reading_keys(child)
    enter(child, "first")
    child.expect_exact("Working")
    child.send("typed meanwhile")  # no live prompt here: the run has the terminal
    gate.set()
    child.expect_exact("reading the code.")
    answer = child.before + child.after
    child.expect_exact(PROMPT)
    shown = answer + child.before
    assert "typed" not in shown, f"the keys were echoed into the answer: {shown!r}"
    child.expect_exact("typed meanwhile")  # the next prompt has it, to send or edit
    reading_keys(child)
    enter(child, "")
    child.expect_exact("Second answer.")
    child.expect_exact(PROMPT)
    reading_keys(child)
    assert leave(child) == 0
    assert user_texts(fake.requests[1])[-1] == "typed meanwhile"
    assert len(fake.requests) == 2, "the typed text was sent once, by its own Enter"


def test_on_a_dumb_terminal_keys_typed_before_an_approval_card_do_not_answer_it(
    fake, workspace, pty_env, gate
):
    arguments = json.dumps({"path": "a.txt", "content": "hi\n"})
    calls = tool_calls(("call_1", "write_file", arguments), text="Looking first.")
    fake.add(held(calls, gate), text("Not written."))
    child = spawn(workspace, dict(pty_env, TERM="dumb"), "--plain")
    reading_keys(child)
    enter(child, "write it")
    child.expect_exact("Looking")
    enter(child, "y")  # typed ahead, before the card is asked: not its answer
    gate.set()
    child.expect_exact("Allow?")
    enter(child, "n")
    child.expect_exact("Reason for the model")
    enter(child, "")
    child.expect_exact("Not written.")
    child.expect_exact(PROMPT)
    child.expect_exact("y")  # kept for the next prompt instead
    assert not (workspace / "a.txt").exists(), "the key typed ahead did not approve"
    reading_keys(child)
    child.send("\x7f")  # Backspace: the prompt's line is empty again
    assert leave(child) == 0
