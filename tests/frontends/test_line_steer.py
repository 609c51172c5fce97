"""Steer and queue in the line REPL (issue 16): the prompt stays live while a run goes.

The real CLI on a pseudo-terminal; the fake server holds the first answer
mid-stream until the test opens its gate, so the lines are typed while the run
waits on it, not in a race with it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

import pexpect
import pytest

from tests.frontends.test_line import PROMPT, enter, leave, repl
from tests.support.fake_openai import FakeOpenAI, held, text
from tests.support.waiting import eventually_sync

LIVE = "»"  # the end of the prompt while a run goes (after "running")


@pytest.fixture(name="pty_env")
def terminal_env(fake: FakeOpenAI) -> dict[str, str]:
    """As test_line's: the fake server, a plain xterm, no cursor-position requests."""
    return dict(
        os.environ,
        OPENAI_BASE_URL=fake.base_url,
        TERM="xterm",
        NO_COLOR="1",
        PROMPT_TOOLKIT_NO_CPR="1",
    )


@pytest.fixture
def gate(fake: FakeOpenAI) -> Iterator[threading.Event]:
    opened = threading.Event()
    yield opened
    opened.set()  # in any case, so the server can stop


def user_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def start_held_run(child: pexpect.spawn, fake: FakeOpenAI, message: str) -> None:
    enter(child, message)
    child.expect_exact("Working")  # the held answer's first words: the run waits now
    child.expect_exact(LIVE)
    assert len(fake.requests) == 1


def test_enter_during_a_run_steers_into_its_next_request(fake, workspace, pty_env, gate):
    fake.add(held(text("Working on it, reading the code."), gate), text("Both done."))
    child = repl(workspace, pty_env)
    start_held_run(child, fake, "fix the bug")
    enter(child, "also check the tests")
    child.expect_exact("steer:")  # shown above the live prompt
    child.expect_exact("also check the tests")  # shown above the live prompt
    gate.set()
    child.expect_exact("Both done.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0
    assert len(fake.requests) == 2, "the steer joined the same run"
    assert user_texts(fake.requests[1]) == ["fix the bug", "also check the tests"]


def test_tab_during_a_run_queues_messages_in_order(fake, workspace, pty_env, gate):
    fake.add(held(text("Working on it."), gate), text("Second."), text("Third."))
    child = repl(workspace, pty_env)
    start_held_run(child, fake, "first")
    child.send("then this\t")
    child.expect_exact("queued:")  # shown above the live prompt
    child.expect_exact("then this")
    child.send("and last this\t")
    child.expect_exact("queued:")  # shown above the live prompt
    child.expect_exact("and last this")
    gate.set()
    child.expect_exact("Third.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0
    assert len(fake.requests) == 3, "each queued message is a run of its own"
    assert user_texts(fake.requests[1]) == ["first", "then this"]
    assert user_texts(fake.requests[2]) == ["first", "then this", "and last this"]


def test_a_stop_puts_what_waited_back_at_the_next_prompt(fake, workspace, pty_env, gate):
    fake.add(held(text("Working on it."), gate), text("Sent again."))
    child = repl(workspace, pty_env)
    start_held_run(child, fake, "first")
    enter(child, "keep this")
    child.expect_exact("steer:")  # shown above the live prompt
    child.expect_exact("keep this")
    child.send("\x03")  # Ctrl-C: the prompt is live, so it is a key that stops the run
    child.expect_exact(PROMPT)  # the idle prompt is back...
    child.expect_exact("keep this")  # ...with the given-back message as its text
    eventually_sync(lambda: len(fake.requests) == 1, "the stop")
    enter(child, "")  # the given-back text is the prompt's: Enter sends it
    child.expect_exact("Sent again.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0
    assert user_texts(fake.requests[-1])[-1] == "keep this"
