"""The model's view kept between rounds: every request is `to_messages` of the items."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from agent_cli.backends.context import SHORTENED_CAP, estimate, to_messages
from agent_cli.backends.loop import COMPACT_SYSTEM
from agent_cli.backends.model_view import ModelView
from agent_cli.engine.events import ApprovalRequested
from agent_cli.engine.items import (
    AssistantItem,
    Conversation,
    Item,
    NoticeItem,
    SummaryItem,
    ToolCall,
    ToolItem,
    UserItem,
)
from agent_cli.errors import ContextTooLong
from agent_cli.providers.base import Request, StreamEvent
from agent_cli.providers.scripted import ScriptedProvider, answer, calls
from tests.support.sessions import make_session

BIG = "x" * 20_000
READ_A = '{"path": "a"}'
READ_B = '{"path": "b"}'


class Checked(ScriptedProvider):
    """A scripted model that checks each request against the items as they stand:
    its messages are exactly what `to_messages` makes of them, built afresh."""

    conversation: Conversation | None = None

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        assert self.conversation is not None
        if request.system != COMPACT_SYSTEM:  # a /compact request is another thing
            items = self.conversation.items
            fresh = to_messages([i for i in items if not i.parent])
            assert request.messages == fresh, "the request differs from the items' messages"
        async for event in super().stream(request):
            yield event


def checked(tmp_path: Path, turns: list, **options: object) -> tuple:
    provider = Checked(turns)
    session, _, recorder = make_session(tmp_path, [], provider=provider, **options)  # type: ignore[arg-type]
    provider.conversation = session.conversation
    return session, provider, recorder


def files(tmp_path: Path) -> None:
    (tmp_path / "a").write_text(BIG)
    (tmp_path / "b").write_text("short\n")


async def test_rounds_of_several_calls_over_several_messages_send_what_the_items_say(tmp_path):
    files(tmp_path)
    two = calls(("c1", "read_file", READ_A), ("c2", "read_file", READ_B), text="Reading.")
    swapped = calls(("c1", "read_file", READ_B), ("c2", "read_file", READ_A))
    turns = [two, calls(("c3", "read_file", READ_B)), answer("Done."), swapped, answer("Again.")]
    session, provider, _ = checked(tmp_path, turns)
    await session.send("read both")
    await session.send("and again")  # the same call ids as the first message's
    assert len(provider.requests) == 5
    last = provider.requests[-1].messages
    results = ["short" in m.content for m in last if m.role == "tool"]
    assert results == [False, True, True, True, False]  # each call its own round's result


async def test_kept_messages_are_the_same_objects_round_after_round(tmp_path):
    files(tmp_path)
    turns = [calls(("c1", "read_file", READ_B)), calls(("c2", "read_file", READ_B)), answer("ok")]
    session, provider, _ = checked(tmp_path, turns)
    await session.send("read b twice")
    first, second, third = (r.messages for r in provider.requests)
    assert all(a is b for a, b in zip(first, second, strict=False))
    assert all(a is b for a, b in zip(second, third, strict=False))  # what a provider reuses


async def test_a_refusal_shortens_a_settled_result_and_the_next_request_shows_it(tmp_path):
    files(tmp_path)
    refused = ContextTooLong("too long", 400)
    turns = [
        calls(("c1", "read_file", READ_A)),
        answer("Read."),
        calls(("c2", "read_file", READ_B)),
        [refused],  # the first message's long result is settled by now
        answer("Fits."),
    ]
    session, provider, _ = checked(tmp_path, turns)
    await session.send("read a")
    await session.send("read b")
    old = next(i for i in session.conversation.items if isinstance(i, ToolItem))
    assert old.shortened
    assert len(provider.requests[-1].messages[2].content) < SHORTENED_CAP + 300


async def test_the_estimate_shortens_results_of_earlier_messages_as_the_view_goes(tmp_path):
    files(tmp_path)
    turns = [calls(("c1", "read_file", READ_A)), answer("One.")]
    turns += [calls(("c2", "read_file", READ_A)), answer("Two.")]
    session, provider, _ = checked(tmp_path, turns, context_window=8_000)
    await session.send("read a")
    await session.send("read a again")
    shortened = [i.shortened for i in session.conversation.items if isinstance(i, ToolItem)]
    assert shortened == [True, False]  # the oldest first, one at a time
    assert len(provider.requests) == 4


async def test_a_stopped_call_gets_its_result_in_the_next_message(tmp_path):
    files(tmp_path)
    turns = [calls(("c1", "write_file", '{"path": "c", "content": "x"}')), answer("ok")]
    session, provider, _ = checked(tmp_path, turns, mode="ask")
    session.events.subscribe(lambda e: isinstance(e, ApprovalRequested) and session.stop())
    await session.send("write c")
    await session.send("never mind")
    assert [m.role for m in provider.requests[1].messages] == ["user", "assistant", "tool", "user"]


async def test_a_compaction_summary_put_before_the_last_turns_starts_the_view_again(tmp_path):
    files(tmp_path)
    turns = [answer("One."), answer("Two."), answer("Three.")]
    turns += [answer("Summary."), calls(("c1", "read_file", READ_B)), answer("Four.")]
    session, provider, _ = checked(tmp_path, turns)
    for text in ("one", "two", "three"):
        await session.send(text)
    await session.compact()
    await session.send("four")
    assert any(isinstance(i, SummaryItem) for i in session.conversation.items)
    assert provider.requests[-1].messages[0].content.endswith("Summary.")


def turn(n: int) -> list[Item]:
    return [
        UserItem(f"question {n}"),
        AssistantItem("", streaming=False, tool_calls=[ToolCall(f"c{n}", "read_file", READ_A)]),
        NoticeItem("a notice"),
        ToolItem("read_file", f"c{n}", state="done", result=BIG),
        AssistantItem(f"answer {n}", streaming=False),
    ]


def test_the_view_and_the_functions_agree_on_messages_estimate_and_shortening():
    items: list[Item] = [*turn(1), *turn(2)]
    view = ModelView("")
    view.sync(items)
    assert view.messages() == to_messages(items)
    assert view.estimate("system", 100) == estimate("system", items, 100)
    items += turn(3)
    running = ToolItem("read_file", "c9", state="running")
    items += [AssistantItem("", streaming=False, tool_calls=[ToolCall("c9", "read_file", "")])]
    items.append(running)
    view.sync(items)
    assert view.messages() == to_messages(items)  # a call still running: "did not run"
    shortened = view.shorten_oldest()
    assert shortened is items[3] and shortened.shortened
    assert view.messages() == to_messages(items)
    assert view.estimate("system") == estimate("system", items)
    running.state, running.result = "done", "finished"
    view.sync(items)
    assert view.messages() == to_messages(items)


def test_an_answer_settles_only_once_every_call_of_its_round_has_its_result():
    again = ToolItem("read_file", "c1", state="running")  # a model that used an id twice
    items: list[Item] = [
        UserItem("q"),
        AssistantItem("", streaming=False, tool_calls=[ToolCall("c1", "read_file", READ_A)]),
        ToolItem("read_file", "c1", state="done", result="first"),
        again,
    ]
    view = ModelView("")
    view.sync(items)
    assert view.messages() == to_messages(items)
    again.state, again.result = "done", "second"
    assert view.messages() == to_messages(items)


def test_an_item_of_another_scope_is_not_read_and_an_insertion_starts_again():
    items: list[Item] = turn(1)
    child = UserItem("the sub-agent's prompt", parent="task-1")
    items.append(child)
    view = ModelView("")
    view.sync(items)
    assert child not in view.items and view.messages() == to_messages(items[:5])
    items.insert(1, SummaryItem("earlier", replaced=0))
    view.sync(items)
    assert view.messages() == to_messages([i for i in items if not i.parent])
