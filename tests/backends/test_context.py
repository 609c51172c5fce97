"""The context window: estimates, shortening, refusals, and /compact (SPEC §4)."""

from __future__ import annotations

import json

import pytest

from agent_cli.backends.context import (
    SHORTENED_CAP,
    compaction_cut,
    context_window,
    estimate_item,
    shorten_oldest,
    to_messages,
)
from agent_cli.engine.backend import StopReason
from agent_cli.engine.items import (
    AssistantItem,
    NoticeItem,
    SummaryItem,
    ToolCall,
    ToolItem,
    UserItem,
)
from agent_cli.errors import ContextTooLong
from agent_cli.providers.openai import is_context_refusal
from agent_cli.providers.scripted import answer, calls
from tests.support.sessions import make_session

BIG = "x" * 20_000


def turn(n: int, result: str = BIG) -> list:
    call = ToolCall(f"c{n}", "read_file", '{"path": "a"}')
    return [
        UserItem(f"question {n}"),
        AssistantItem("", streaming=False, tool_calls=[call]),
        ToolItem("read_file", f"c{n}", state="done", result=result),
        AssistantItem(f"answer {n}", streaming=False),
    ]


def test_estimates_are_cheap_and_ignore_notices():
    assert estimate_item(NoticeItem("n" * 10_000)) == 0
    assert estimate_item(UserItem("a" * 400)) > estimate_item(UserItem("a" * 40))
    shortened = ToolItem("read_file", "c", result=BIG, shortened=True)
    assert estimate_item(shortened) < estimate_item(ToolItem("read_file", "c", result=BIG))


def test_context_window_prefers_config_then_server_then_table():
    assert context_window("gpt-4o", 1000, 2000) == 1000
    assert context_window("gpt-4o", None, 2000) == 2000
    assert context_window("openai/gpt-4o-mini", None, None) == 128_000
    assert context_window("qwen2.5-coder-7b", None, None) == 32_768
    assert context_window("my-own-model", None, None) > 0


def test_shortening_takes_the_oldest_long_result_first_and_never_a_user_message():
    items = [*turn(1), *turn(2, result="short"), *turn(3)]
    first = shorten_oldest(items)
    assert first is items[2]
    second = shorten_oldest(items)
    assert second is items[10]  # the short result of turn 2 was passed over
    assert shorten_oldest(items) is None
    assert all(i.text.startswith("question") for i in items if isinstance(i, UserItem))
    messages = to_messages(items)
    assert len(messages[2].content) < SHORTENED_CAP + 300


def test_compaction_cut_never_splits_a_call_from_its_result():
    items = [*turn(1), *turn(2), *turn(3)]
    cut = compaction_cut(items, keep_turns=2)
    assert cut == 4 and isinstance(items[cut], UserItem)
    assert compaction_cut(items[:8], keep_turns=2) == 0


def test_items_before_a_summary_are_not_sent():
    items = [*turn(1), SummaryItem("we read a", replaced=4), *turn(2)]
    messages = to_messages(items)
    assert messages[0].role == "user" and "we read a" in messages[0].content
    assert "question 1" not in json.dumps([m.content for m in messages])
    assert [m.role for m in messages[1:]] == ["user", "assistant", "tool", "assistant"]


@pytest.mark.parametrize(
    ("status", "body", "refusal"),
    [
        (400, b'{"error":{"code":"context_length_exceeded","message":"too long"}}', True),
        (400, b'{"error":{"type":"exceed_context_size_error","n_ctx":4096}}', True),
        (
            400,
            b"This model's maximum context length is 8192 tokens. However, you requested 9000",
            True,
        ),
        (400, b'{"error":{"message":"model not found"}}', False),
        (500, b'{"error":{"code":"context_length_exceeded"}}', False),
    ],
)
def test_context_refusals_are_recognised(status, body, refusal):
    assert is_context_refusal(status, body) is refusal


async def test_a_refusal_shortens_the_oldest_result_and_asks_again(tmp_path):
    (tmp_path / "a").write_text(BIG)
    refused = ContextTooLong("too long", 400)
    turns = [calls(("c1", "read_file", '{"path": "a"}')), [refused], answer("fits now")]
    session, provider, rec = make_session(tmp_path, turns)
    result = await session.send("read a")
    assert result.reason is StopReason.ANSWERED
    tool = next(i for i in session.conversation.items if isinstance(i, ToolItem))
    assert tool.shortened and len(tool.result) > SHORTENED_CAP  # the person keeps it all
    assert len(provider.requests[2].messages[2].content) < SHORTENED_CAP + 300
    notices = [e.text for e in rec.events if e.type == "notice"]
    assert sum("shortened" in n for n in notices) == 1


async def test_the_estimate_shortens_before_sending(tmp_path):
    (tmp_path / "a").write_text(BIG)
    turns = [calls(("c1", "read_file", '{"path": "a"}')), answer("ok")]
    session, provider, _ = make_session(tmp_path, turns, context_window=4_000)
    await session.send("read a")
    assert len(provider.requests[1].messages[2].content) < SHORTENED_CAP + 300


async def test_nothing_left_to_shorten_ends_with_advice_to_compact(tmp_path):
    session, _, _ = make_session(tmp_path, [[ContextTooLong("too long", 400)]])
    result = await session.send("hi")
    assert result.reason is StopReason.ERROR and "/compact" in result.error
    assert isinstance(session.conversation.items[0], UserItem)  # never dropped


async def test_compact_summarises_older_turns_and_keeps_them_stored(tmp_path):
    session, provider, _ = make_session(tmp_path, [answer("Summary: we read a.")])
    session.conversation.items.extend([*turn(1), *turn(2), *turn(3)])
    result = await session.compact("the file a")
    assert result.reason is StopReason.ANSWERED
    items = session.conversation.items
    summary = next(i for i in items if isinstance(i, SummaryItem))
    assert items.index(summary) == 4 and summary.replaced == 4
    assert summary.text == "Summary: we read a."
    assert "Focus on: the file a" in provider.requests[0].messages[-1].content
    assert provider.requests[0].tools == ()
    messages = to_messages(items)
    assert "Summary: we read a." in messages[0].content
    assert sum(m.role == "user" for m in messages) == 3  # the summary and two kept turns
    assert len(items) == 12 + 2  # nothing removed: the summary and a notice were added
