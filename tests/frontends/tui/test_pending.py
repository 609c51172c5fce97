"""Steer and queue in the TUI (issue 16): the input stays live while a run goes.

The fake server holds the first answer mid-stream until the test opens its gate,
so "while it runs" is a fact: the keys are pressed while the run waits on it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_cli.engine.pending import PendingMessage
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.pending_view import PendingView
from agent_cli.frontends.tui.user_message import UserMessage
from tests.frontends.tui.support import SIZE, send, settle, until
from tests.frontends.tui.test_snapshots import short_conversation_app, steady_cursor
from tests.support.fake_openai import FakeOpenAI, held, text


@pytest.fixture
def gate(fake: FakeOpenAI) -> Iterator[threading.Event]:
    """Opens the held answer; set at the end in any case, so the server can stop."""
    opened = threading.Event()
    yield opened
    opened.set()


def user_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def shown(view: PendingView) -> list[str]:
    return [view.render_line(y).text.rstrip() for y in range(view.size.height)]


async def start_held_run(pilot, app: AgentApp, fake: FakeOpenAI, message: str) -> None:
    await send(pilot, app, message)
    await until(pilot, lambda: len(fake.requests) == 1 and app.session.running)


async def type_and_press(pilot, app: AgentApp, message: str, key: str) -> None:
    app.composer.input.set_text(message)
    await pilot.press(key)
    await pilot.pause()


async def test_enter_while_a_run_goes_steers_into_its_next_request(
    app: AgentApp, fake: FakeOpenAI, gate: threading.Event
):
    fake.add(held(text("Working on it, reading the code."), gate), text("Both done."))
    async with app.run_test(size=SIZE) as pilot:
        await start_held_run(pilot, app, fake, "fix the bug")
        await type_and_press(pilot, app, "also check the tests", "enter")
        assert app.composer.input.text == "", "the steered message left the input"
        assert [(m.kind, m.text) for m in app.session.pending.messages] == [
            ("steer", "also check the tests")
        ]
        await until(pilot, lambda: app.pending_view.display)
        assert shown(app.pending_view)[0].startswith("steer")
        assert "also check the tests" in shown(app.pending_view)[0]
        gate.set()
        await settle(pilot, app)
        assert len(fake.requests) == 2, "the steer joined the same run"
        assert user_texts(fake.requests[1]) == ["fix the bug", "also check the tests"]
        said = [view.text for view in app.transcript.query(UserMessage)]
        assert said == ["fix the bug", "also check the tests"]
        assert not app.pending_view.display


async def test_tab_queues_messages_that_run_after_in_order(
    app: AgentApp, fake: FakeOpenAI, gate: threading.Event
):
    fake.add(held(text("First answer here."), gate), text("Second."), text("Third."))
    async with app.run_test(size=SIZE) as pilot:
        await start_held_run(pilot, app, fake, "first")
        await type_and_press(pilot, app, "then this", "tab")
        await type_and_press(pilot, app, "and last this", "tab")
        assert app.composer.input.text == ""
        await until(pilot, lambda: len(shown(app.pending_view)) == 3)
        lines = shown(app.pending_view)
        assert lines[0].startswith("queued") and "then this" in lines[0]
        assert lines[1].startswith("queued") and "and last this" in lines[1]
        gate.set()
        await settle(pilot, app)
        assert len(fake.requests) == 3, "each queued message is a run of its own"
        assert user_texts(fake.requests[1]) == ["first", "then this"]
        assert user_texts(fake.requests[2]) == ["first", "then this", "and last this"]


async def test_tab_still_completes_a_file_while_a_run_goes(
    app: AgentApp, fake: FakeOpenAI, gate: threading.Event, workspace: Path
):
    (workspace / "notes.md").write_text("hi\n")
    fake.add(held(text("Reading."), gate))
    async with app.run_test(size=SIZE) as pilot:
        await start_held_run(pilot, app, fake, "look")
        await pilot.press(*"see @note")
        await until(pilot, lambda: app.composer.menu.display)
        await pilot.press("tab")
        assert app.composer.input.text == "see @notes.md "
        assert app.session.pending.messages == (), "Tab in the menu completes, not queues"


async def test_up_recalls_the_last_waiting_message_and_escape_drops_one(
    app: AgentApp, fake: FakeOpenAI, gate: threading.Event
):
    fake.add(held(text("Working."), gate), text("Done."))
    async with app.run_test(size=SIZE) as pilot:
        await start_held_run(pilot, app, fake, "start")
        await type_and_press(pilot, app, "keep this", "enter")
        await type_and_press(pilot, app, "fix a typo", "tab")
        await pilot.press("up")
        assert app.composer.input.text == "fix a typo", "Up took the last one back"
        assert [m.text for m in app.session.pending.messages] == ["keep this"]
        await type_and_press(pilot, app, "fixed: no typo", "tab")
        assert [m.text for m in app.session.pending.messages] == ["keep this", "fixed: no typo"]
        await pilot.press("escape")
        assert [m.text for m in app.session.pending.messages] == ["keep this"]
        await until(pilot, lambda: len(shown(app.pending_view)) == 2)
        gate.set()
        await settle(pilot, app)
        assert len(fake.requests) == 2
        assert user_texts(fake.requests[1]) == ["start", "keep this"]


async def test_a_stop_puts_the_waiting_messages_back_into_the_input(
    app: AgentApp, fake: FakeOpenAI, gate: threading.Event
):
    fake.add(held(text("Working."), gate))
    async with app.run_test(size=SIZE) as pilot:
        await start_held_run(pilot, app, fake, "start")
        await type_and_press(pilot, app, "steered", "enter")
        await type_and_press(pilot, app, "queued", "tab")
        app.composer.input.set_text("half typed")
        await pilot.press("ctrl+c")
        await settle(pilot, app)
        await until(pilot, lambda: app.composer.input.text == "half typed\nsteered\nqueued")
        assert app.session.pending.messages == ()
        assert not app.pending_view.display
        assert len(fake.requests) == 1, "a stop sends nothing that waited"


async def test_with_nothing_waiting_up_and_escape_keep_their_meaning(
    app: AgentApp, fake: FakeOpenAI
):
    fake.add(text("ok"))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "earlier message")
        await settle(pilot, app)
        await pilot.press("escape")
        await pilot.press("up")
        assert app.composer.input.text == "earlier message", "Up walks the history"


def test_the_waiting_messages_above_the_input(snap_compare, workspace: Path):
    app = short_conversation_app(workspace, "agent-dark")

    async def show_two(pilot) -> None:
        app.show_pending(
            (
                PendingMessage("p1", "also run the linter on src/", "steer"),
                PendingMessage("p2", "then update the changelog\nwith the new flag", "queue"),
            )
        )
        await steady_cursor(pilot)

    assert snap_compare(app, terminal_size=(90, 30), run_before=show_two)
