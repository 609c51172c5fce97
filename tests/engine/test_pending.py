"""Steer and queue (issue 16): what the person types while a run goes.

A tool of the test's holds the run at a known point (it waits for an event the
test sets), so "while it runs" is a fact, not a race.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_cli.engine.items import UserItem
from agent_cli.engine.pending import PendingChanged
from agent_cli.errors import UsageError
from agent_cli.providers.scripted import ScriptedProvider, answer, calls
from agent_cli.tools.base import Effect, ToolContext, ToolResult, tool
from tests.support.sessions import make_session
from tests.support.waiting import GENEROUS

HELD: dict[str, Callable[[], None]] = {}


@tool("hold", Effect.READ)
async def hold(ctx: ToolContext) -> ToolResult:
    """Wait while the test types."""
    HELD["while_held"]()
    return ToolResult("held")


def user_texts(messages) -> list[str]:
    return [m.content for m in messages if m.role == "user"]


def held_session(tmp_path: Path, turns, while_held: Callable[[], None]):
    HELD["while_held"] = while_held
    return make_session(tmp_path, turns, tools=[hold], mode="full")


async def test_a_steered_message_reaches_the_next_request_of_the_same_run(tmp_path):
    session: list = []
    turns = [calls(("c1", "hold", "{}")), answer("Done both.")]
    made, provider, recorder = held_session(
        tmp_path, turns, lambda: session[0].steer("also check the tests")
    )
    session.append(made)
    result = await made.send("fix the bug")
    assert result.reason == "answered" and made.conversation.agent == "builtin"
    assert len(provider.requests) == 2  # one run: the steer did not start another
    assert user_texts(provider.requests[1].messages) == ["fix the bug", "also check the tests"]
    kinds = [type(item).__name__ for item in made.conversation.items]
    assert kinds == ["UserItem", "AssistantItem", "ToolItem", "UserItem", "AssistantItem"]
    shown = [e for e in recorder.of(PendingChanged)]
    assert [len(e.pending) for e in shown] == [1, 0] and shown[0].pending[0].kind == "steer"


async def test_a_steer_during_the_answer_goes_on_in_the_same_run(tmp_path):
    provider = ScriptedProvider([answer("First answer."), answer("Read it.")])
    made, _, _ = make_session(tmp_path, [], provider=provider)
    steered = False

    def on_delta(event) -> None:
        nonlocal steered
        if event.type == "delta" and not steered:
            steered = True
            made.steer("one more thing")

    made.events.subscribe(on_delta)
    result = await made.send("hello")
    assert result.reason == "answered" and result.rounds == 2
    assert user_texts(provider.requests[1].messages) == ["hello", "one more thing"]


async def test_queued_messages_run_after_in_order_each_its_own_run(tmp_path):
    session: list = []

    def type_two() -> None:
        session[0].queue("then this")
        session[0].queue("and last this")

    turns = [calls(("c1", "hold", "{}")), answer("One."), answer("Two."), answer("Three.")]
    made, provider, recorder = held_session(tmp_path, turns, type_two)
    session.append(made)
    result = await made.send("first")
    assert result.reason == "answered"
    assert user_texts(provider.requests[-1].messages) == ["first", "then this", "and last this"]
    assert recorder.types().count("run_started") == 3
    texts = [i.text for i in made.conversation.items if isinstance(i, UserItem)]
    assert texts == ["first", "then this", "and last this"]
    assert made.pending.messages == ()


async def test_pending_messages_can_be_edited_and_dropped(tmp_path):
    session: list = []

    def type_then_change() -> None:
        s = session[0]
        kept = s.queue("typo here")
        dropped = s.steer("never mind")
        assert s.pending.edit(kept.id, "fixed text")
        assert s.pending.drop(dropped.id) == dropped
        assert s.pending.drop("p-unknown") is None

    turns = [calls(("c1", "hold", "{}")), answer("One."), answer("Two.")]
    made, provider, _ = held_session(tmp_path, turns, type_then_change)
    session.append(made)
    await made.send("first")
    assert user_texts(provider.requests[-1].messages) == ["first", "fixed text"]


async def test_a_stop_gives_every_waiting_message_back_unsent(tmp_path):
    reached, release = asyncio.Event(), asyncio.Event()

    @tool("wait_here", Effect.READ)
    async def wait_here(ctx: ToolContext) -> ToolResult:
        """Wait until released."""
        reached.set()
        await release.wait()
        return ToolResult("released")

    turns = [calls(("c1", "wait_here", "{}")), answer("never")]
    made, provider, recorder = make_session(tmp_path, turns, tools=[wait_here], mode="full")
    running = asyncio.create_task(made.send("first"))
    await asyncio.wait_for(reached.wait(), GENEROUS)
    made.queue("after")
    made.steer("during")
    made.stop()  # as a front end does, from its own task
    result = await asyncio.wait_for(running, GENEROUS)
    assert result.reason == "stopped"
    assert recorder.of(PendingChanged)[-1].returned == ("after", "during")
    assert made.pending.messages == () and len(provider.requests) == 1


async def test_steering_or_queueing_when_idle_is_refused(tmp_path):
    made, _, _ = make_session(tmp_path, [answer("Hi.")])
    with pytest.raises(UsageError, match="send the message instead"):
        made.steer("x")
    with pytest.raises(UsageError, match="send the message instead"):
        made.queue("x")


async def test_a_steer_after_the_last_request_starts_the_next_run(tmp_path):
    """The model answered and the run is ending when the steer comes: a run of its own."""
    provider = ScriptedProvider([answer("One."), answer("Two.")])
    made, _, _ = make_session(tmp_path, [], provider=provider)
    steered = asyncio.Event()

    def on_finished_answer(event) -> None:
        # The answer item is done: the loop has no request left to put the steer into.
        if (
            event.type == "item_updated"
            and getattr(event.item, "text", "") == "One."
            and (not steered.is_set())
        ):
            steered.set()
            made.steer("late")

    made.events.subscribe(on_finished_answer)
    await asyncio.wait_for(made.send("hello"), GENEROUS)
    assert steered.is_set()
    texts = [i.text for i in made.conversation.items if isinstance(i, UserItem)]
    assert texts == ["hello", "late"]
    assert user_texts(provider.requests[-1].messages) == ["hello", "late"]


async def test_a_steered_prompt_command_attaches_only_what_its_typed_arguments_mention(
    tmp_path,
):
    """A prompt command steered into a run keeps `Prompt.mentions`: the command file's own
    `@secret.txt` attaches nothing, the person's `@a.py` does (as when it is sent)."""
    from agent_cli.media import Prompt

    (tmp_path / "secret.txt").write_text("SECRET-IN-FILE\n")
    (tmp_path / "a.py").write_text("A-PY-CONTENT\n")
    command = Prompt("Read @secret.txt first.\n\nAsked about: @a.py", mentions="@a.py")
    session: list = []
    turns = [calls(("c1", "hold", "{}")), answer("Done.")]
    made, provider, _ = held_session(tmp_path, turns, lambda: session[0].steer(command))
    session.append(made)
    await made.send("start")
    steered = made.conversation.items[3]
    assert isinstance(steered, UserItem) and steered.text == command.text
    assert [a.label for a in steered.attachments] == ["a.py"]
    assert "SECRET-IN-FILE" not in str(provider.requests[1].messages)
