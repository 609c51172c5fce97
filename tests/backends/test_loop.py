"""The built-in loop driven by a scripted provider, through a real Session."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import pytest

from agent_cli.engine.approval import Decision
from agent_cli.engine.backend import StopReason
from agent_cli.engine.events import ApprovalRequested, Delta, ItemAdded, RunFinished
from agent_cli.engine.items import AssistantItem, NoticeItem, ToolItem, UserItem
from agent_cli.errors import ProviderHTTPError, StreamInterrupted
from agent_cli.providers.base import Finished, TextDelta, ToolCallStarted
from agent_cli.providers.scripted import answer, calls
from agent_cli.tools.base import Effect, ToolContext, ToolResult, tool
from tests.support.sessions import make_session
from tests.support.waiting import FOREVER, eventually, within

LOG: list[str] = []


@tool("note", Effect.WRITE, title=lambda a: f"Note {a.get('text', '')}")
async def note(ctx: ToolContext, text: Annotated[str, "what to note"]) -> ToolResult:
    """Write a note (a change)."""
    LOG.append(f"note {text}")
    return ToolResult(f"noted {text}")


@tool("slow_read", Effect.READ)
async def slow_read(ctx: ToolContext, name: str, seconds: float = 0.2) -> ToolResult:
    """A read that takes a while."""
    LOG.append(f"start {name}")
    await asyncio.sleep(seconds)
    LOG.append(f"end {name}")
    return ToolResult(f"read {name}")


@pytest.fixture(autouse=True)
def _clear_log() -> None:
    LOG.clear()


def kinds(session) -> list[str]:
    return [i.kind for i in session.conversation.items]


async def test_answer_streams_as_deltas_and_ends_answered(tmp_path):
    session, _, rec = make_session(tmp_path, [answer("hello there friend")])
    result = await session.send("hi")
    assert result.reason is StopReason.ANSWERED
    assert "".join(e.text for e in rec.of(Delta)) == "hello there friend"
    assert kinds(session) == ["user", "assistant"]
    assistant = session.conversation.items[1]
    assert assistant.text == "hello there friend" and not assistant.streaming
    assert rec.types()[:2] == ["run_started", "item_added"] and rec.types()[-1] == "run_finished"
    assert session.conversation.state == "idle"
    assert result.usage.input_tokens == 10 and result.rounds == 1


async def test_assistant_item_appears_with_its_first_token(tmp_path):
    session, _, rec = make_session(tmp_path, [answer("one two")])
    await session.send("hi")
    added = [i for i, e in enumerate(rec.events) if isinstance(e, ItemAdded)]
    first_delta = next(i for i, e in enumerate(rec.events) if isinstance(e, Delta))
    assert added[-1] == first_delta - 1


async def test_tool_call_runs_and_result_goes_to_the_next_round(tmp_path):
    turns = [calls(("c1", "get_info", "{}")), answer("done")]
    session, provider, _ = make_session(tmp_path, turns)
    result = await session.send("where am I?")
    assert result.reason is StopReason.ANSWERED
    assert kinds(session) == ["user", "assistant", "tool", "assistant"]
    item = session.conversation.items[2]
    assert item.state == "done" and json.loads(item.result)["cwd"] == str(tmp_path.resolve())
    second = provider.requests[1].messages
    assert [m.role for m in second] == ["user", "assistant", "tool"]
    assert second[1].tool_calls[0].id == "c1" and second[2].tool_call_id == "c1"


async def test_system_prompt_is_byte_identical_across_rounds(tmp_path):
    (tmp_path / "AGENTS.md").write_text("Use tabs.\n")
    turns = [calls(("c1", "get_info", "{}")), calls(("c2", "get_info", "{}")), answer("ok")]
    session, provider, _ = make_session(tmp_path, turns)
    await session.send("go")
    systems = {r.system for r in provider.requests}
    assert len(provider.requests) == 3 and len(systems) == 1
    assert "Use tabs." in systems.pop()


async def test_composing_card_follows_the_arguments(tmp_path):
    args = json.dumps({"text": "a fairly long note to write"})
    session, _, _ = make_session(
        tmp_path, [calls(("c1", "note", args)), answer("ok")], tools=[note], mode="full"
    )
    seen: list[tuple[str, int]] = []  # (title, bytes) at the moment of each update
    session.events.subscribe(
        lambda e: (
            e.type == "item_updated"
            and isinstance(e.item, ToolItem)
            and e.item.state == "composing"
            and seen.append((e.item.title, e.item.bytes))
        )
    )
    await session.send("note it")
    titles = [title for title, _ in seen]
    assert titles[0] == "Note " and titles[-1].startswith("Note a fairly")
    assert [b for _, b in seen] == sorted(b for _, b in seen)


async def test_malformed_arguments_are_refused_and_shown_as_empty_object(tmp_path):
    turns = [calls(("c1", "note", '{"text": "cut off')), answer("sorry")]
    session, provider, _ = make_session(tmp_path, turns, tools=[note], mode="full")
    await session.send("note")
    item = session.conversation.items[2]
    assert item.state == "error" and "not valid JSON" in item.result
    assert item.args == '{"text": "cut off'  # the record keeps what was written
    sent = provider.requests[1].messages[1].tool_calls[0]
    assert sent.arguments == "{}"
    assert LOG == []


async def test_missing_required_parameter_is_an_error_the_model_reads(tmp_path):
    turns = [calls(("c1", "note", "{}")), answer("ok")]
    session, provider, _ = make_session(tmp_path, turns, tools=[note], mode="full")
    await session.send("note")
    assert "'text'" in session.conversation.items[2].result
    assert provider.requests[1].messages[2].is_error


async def test_unknown_tool_lists_the_real_ones(tmp_path):
    turns = [calls(("c1", "rm_rf", "{}")), answer("ok")]
    session, _, _ = make_session(tmp_path, turns)
    await session.send("x")
    assert "no tool 'rm_rf'" in session.conversation.items[2].result
    assert "get_info" in session.conversation.items[2].result


async def test_round_limit_stops_with_a_notice(tmp_path):
    turns = [calls((f"c{i}", "get_info", "{}")) for i in range(3)]
    session, _, _ = make_session(tmp_path, turns, max_rounds=3)
    result = await session.send("loop")
    assert result.reason is StopReason.ROUND_LIMIT and result.rounds == 3
    last = session.conversation.items[-1]
    assert isinstance(last, NoticeItem) and "3 rounds" in last.text


async def test_same_failure_three_times_stops(tmp_path):
    turns = [calls((f"c{i}", "nope", '{"a": 1}')) for i in range(5)]
    session, provider, _ = make_session(tmp_path, turns)
    result = await session.send("x")
    assert result.reason is StopReason.REPEATED_FAILURE
    assert len(provider.requests) == 3
    assert "3 times" in session.conversation.items[-1].text


async def test_two_calls_failing_together_every_round_stop_after_three(tmp_path):
    """Seen with Gemma 3 270M on llama.cpp: the same two failing calls every round went on
    for 22 rounds while a single "last failure" was compared."""
    pair = (("read_file", '{"path": "path_to_file"}'), ("file_glob_search", '{"path": "p"}'))
    turns = [
        calls(*((f"r{r}-{k}", tool, args) for k, (tool, args) in enumerate(pair))) for r in range(8)
    ]
    session, provider, _ = make_session(tmp_path, turns)
    result = await session.send("x")
    assert result.reason is StopReason.REPEATED_FAILURE
    assert len(provider.requests) == 3


async def test_a_failure_that_changes_or_pauses_starts_counting_again(tmp_path):
    turns = [
        calls(("a", "nope", '{"a": 1}')),
        calls(("b", "nope", '{"a": 1}')),
        calls(("c", "get_info", "{}")),  # a round without that failure
        calls(("d", "nope", '{"a": 1}')),
        calls(("e", "nope", '{"a": 2}')),  # other arguments: another failure
        answer("done"),
    ]
    session, _, _ = make_session(tmp_path, turns)
    result = await session.send("x")
    assert result.reason is StopReason.ANSWERED


async def test_reads_run_concurrently_and_results_keep_call_order(tmp_path):
    turn = calls(
        ("a", "slow_read", '{"name": "a", "seconds": 0.2}'),
        ("b", "slow_read", '{"name": "b", "seconds": 0.05}'),
    )
    session, provider, _ = make_session(tmp_path, [turn, answer("ok")], tools=[slow_read])
    await session.send("read")
    assert LOG[:2] == ["start a", "start b"]  # both started before either ended
    tools = [i for i in session.conversation.items if isinstance(i, ToolItem)]
    assert [t.call_id for t in tools] == ["a", "b"]
    assert [m.tool_call_id for m in provider.requests[1].messages[2:]] == ["a", "b"]


async def test_changes_run_one_at_a_time_in_the_model_order(tmp_path):
    turn = calls(
        ("1", "slow_read", '{"name": "r1", "seconds": 0.05}'),
        ("2", "note", '{"text": "w1"}'),
        ("3", "slow_read", '{"name": "r2", "seconds": 0.01}'),
        ("4", "note", '{"text": "w2"}'),
    )
    session, _, _ = make_session(
        tmp_path, [turn, answer("ok")], tools=[note, slow_read], mode="full"
    )
    await session.send("go")
    assert LOG == ["start r1", "end r1", "note w1", "start r2", "end r2", "note w2"]


async def test_read_only_mode_does_not_offer_and_refuses_changes(tmp_path):
    turns = [calls(("c1", "note", '{"text": "x"}')), answer("ok")]
    session, provider, _ = make_session(tmp_path, turns, tools=[note], mode="read-only")
    await session.send("note")
    assert "note" not in [t.name for t in provider.requests[0].tools]
    item = session.conversation.items[2]
    assert item.state == "denied" and "read-only" in item.result
    assert LOG == []


async def test_ask_mode_waits_for_yes_before_the_change_runs(tmp_path):
    turns = [calls(("c1", "note", '{"text": "x"}')), answer("ok")]
    session, _, rec = make_session(tmp_path, turns, tools=[note], mode="ask")

    def approve(event) -> None:
        if isinstance(event, ApprovalRequested):
            assert LOG == []  # nothing has run when the card appears
            assert event.request.item.state == "waiting"
            event.request.resolve(Decision("yes"))

    session.events.subscribe(approve)
    await session.send("note")
    assert LOG == ["note x"]
    assert session.conversation.items[2].state == "done"
    assert "approval_resolved" in rec.types()


async def test_a_no_with_a_reason_reaches_the_model(tmp_path):
    turns = [calls(("c1", "note", '{"text": "x"}')), answer("ok")]
    session, provider, _ = make_session(tmp_path, turns, tools=[note], mode="ask")
    session.events.subscribe(
        lambda e: (
            isinstance(e, ApprovalRequested)
            and e.request.resolve(Decision("no", "use the other file"))
        )
    )
    await session.send("note")
    assert LOG == []
    result = provider.requests[1].messages[2].content
    assert "declined" in result and "use the other file" in result


async def test_mode_switched_while_a_card_waits_applies_to_the_next_call(tmp_path):
    turn = calls(("1", "note", '{"text": "a"}'), ("2", "note", '{"text": "b"}'))
    session, _, rec = make_session(tmp_path, [turn, answer("ok")], tools=[note], mode="ask")

    def approve(event) -> None:
        if isinstance(event, ApprovalRequested):
            session.set_mode("full")
            event.request.resolve(Decision("yes"))

    session.events.subscribe(approve)
    await session.send("go")
    assert LOG == ["note a", "note b"]
    assert len(rec.of(ApprovalRequested)) == 1


async def test_stop_while_a_card_waits_denies_it_and_keeps_items(tmp_path):
    turns = [calls(("c1", "note", '{"text": "x"}'), text="I will note.")]
    session, _, rec = make_session(tmp_path, turns, tools=[note], mode="ask")
    session.events.subscribe(lambda e: isinstance(e, ApprovalRequested) and session.stop())
    result = await session.send("note")
    assert result.reason is StopReason.STOPPED
    assert LOG == []
    tool_item = session.conversation.items[2]
    assert tool_item.state == "denied"
    assert session.conversation.items[1].text == "I will note."
    assert session.conversation.state == "idle"
    assert rec.of(RunFinished)[-1].reason == "stopped"


async def test_stop_during_streaming_keeps_the_partial_answer(tmp_path):
    turn = [TextDelta("partial "), TextDelta("answer"), FOREVER, Finished()]
    session, _, rec = make_session(tmp_path, [turn])
    task = asyncio.ensure_future(session.send("hi"))
    await eventually(lambda: "".join(e.text for e in rec.of(Delta)) == "partial answer")
    session.stop()
    result = await within(task)  # only the stop ends the provider's wait
    assert result.reason is StopReason.STOPPED
    assistant = session.conversation.items[1]
    assert assistant.text == "partial answer" and not assistant.streaming


async def test_stop_while_composing_closes_the_card(tmp_path):
    turn = [ToolCallStarted(0, "c1", "note"), FOREVER]
    session, _, _ = make_session(tmp_path, [turn], tools=[note])
    task = asyncio.ensure_future(session.send("hi"))
    await eventually(lambda: len(session.conversation.items) > 2, "the card")
    session.stop()
    await within(task)
    item = session.conversation.items[2]
    assert item.state == "error" and "stopped" in item.result


async def test_failure_before_any_output_leaves_no_empty_item(tmp_path):
    error = ProviderHTTPError("The model service answered 400: bad model", 400)
    session, _, _ = make_session(tmp_path, [[error]])
    result = await session.send("hi")
    assert result.reason is StopReason.ERROR and "bad model" in result.error
    assert not any(isinstance(i, AssistantItem) for i in session.conversation.items)
    assert isinstance(session.conversation.items[-1], NoticeItem)
    assert session.conversation.items[-1].level == "error"


async def test_stream_broken_after_output_keeps_it_and_ends_in_error(tmp_path):
    turn = [TextDelta("half an ans"), StreamInterrupted("the connection broke — try again")]
    session, _, _ = make_session(tmp_path, [turn])
    result = await session.send("hi")
    assert result.reason is StopReason.ERROR
    assert session.conversation.items[1].text == "half an ans"
    assert "connection broke" in session.conversation.items[-1].text


async def test_next_message_after_a_stopped_call_sends_a_result_for_every_call(tmp_path):
    turns = [calls(("c1", "note", '{"text": "x"}')), answer("ok")]
    session, provider, _ = make_session(tmp_path, turns, tools=[note], mode="ask")
    session.events.subscribe(lambda e: isinstance(e, ApprovalRequested) and session.stop())
    await session.send("note")
    await session.send("never mind")
    roles = [m.role for m in provider.requests[1].messages]
    assert roles == ["user", "assistant", "tool", "user"]
    assert isinstance(session.conversation.items[-2], UserItem)


async def test_a_server_that_refuses_tools_is_asked_again_without_them(tmp_path):
    refusal = ProviderHTTPError(
        "The model service answered 500: tools param requires --jinja flag", 500
    )
    session, provider, rec = make_session(tmp_path, [[refusal], answer("plain answer")])
    result = await session.send("hi")
    assert result.reason is StopReason.ANSWERED
    assert provider.requests[0].tools and provider.requests[1].tools == ()
    notices = [e.text for e in rec.events if e.type == "notice"]
    assert any("--jinja" in n for n in notices)
