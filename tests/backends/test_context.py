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
    assert context_window("meta-llama/Llama-3.1-8B-Instruct", None, None) == 131_072
    assert context_window("llama3.2:3b", None, None) == 131_072
    assert context_window("llama3:8b", None, None) == 8_192  # Llama 3.0
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


def test_a_call_id_used_again_in_a_later_round_is_answered_by_its_own_round():
    items = [*turn(1, result="first"), *turn(1, result="second")]  # both rounds call "c1"
    results = [m.content for m in to_messages(items) if m.role == "tool"]
    assert results == ["first", "second"]


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
    older = [*turn(1, result="short"), *turn(2, result="short")]  # for /compact to summarise
    session.conversation.items.extend(older)
    result = await session.send("hi")
    assert result.reason is StopReason.ERROR and "/compact" in result.error
    assert isinstance(session.conversation.items[0], UserItem)  # never dropped


async def test_with_nothing_older_to_summarise_compact_is_not_suggested(tmp_path):
    session, _, _ = make_session(tmp_path, [[ContextTooLong("too long", 400)]])
    result = await session.send("hi")
    assert result.reason is StopReason.ERROR and "/compact" not in result.error
    assert "new conversation" in result.error
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


# ------------------------------------------- refusals through the real HTTP boundary

# The bodies real servers send when a request does not fit, as they send them.
REFUSALS = {
    "openai": (
        400,
        b'{"error": {"message": "This model\'s maximum context length is 128000 tokens. However, '
        b'your messages resulted in 130012 tokens. Please reduce the length of the messages.", '
        b'"type": "invalid_request_error", "param": "messages", '
        b'"code": "context_length_exceeded"}}',
    ),
    "llama.cpp": (
        400,
        b'{"error": {"code": 400, "message": "the request exceeds the available context size, '
        b'try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 5213, '
        b'"n_ctx": 4096}}',
    ),
    "vllm": (
        400,
        b'{"object": "error", "message": "This model\'s maximum context length is 8192 tokens. '
        b"However, you requested 9316 tokens (8292 in the messages, 1024 in the completion). "
        b'Please reduce the length of the messages or completion.", "type": "BadRequestError", '
        b'"param": null, "code": 400}',
    ),
    "vllm-newer": (
        400,
        b'{"object": "error", "message": "The decoder prompt (length 9316) is longer than the '
        b"maximum model length of 8192. Make sure that `max_model_len` is no smaller than the "
        b'number of text tokens.", "type": "BadRequestError", "param": null, "code": 400}',
    ),
}


@pytest.mark.parametrize("server", sorted(REFUSALS))
async def test_each_servers_refusal_shortens_and_asks_again(tmp_path, server):
    from agent_cli.providers.openai import OpenAIProvider
    from agent_cli.providers.retry import RetryPolicy
    from tests.support.fake_openai import FakeOpenAI, http_error, text, tool_calls

    (tmp_path / "a").write_text(BIG)
    status, body = REFUSALS[server]
    with FakeOpenAI() as fake:
        fake.add(
            tool_calls(("c1", "read_file", '{"path": "a"}')),
            http_error(status, "", body=body),
            text("fits now"),
        )
        retry = RetryPolicy(base=0.01, cap=0.02, jitter="none")
        async with OpenAIProvider(fake.base_url, "key", retry=retry) as provider:
            session, _, rec = make_session(tmp_path, [], provider=provider)  # type: ignore[arg-type]
            result = await session.send("read a")
        assert result.reason is StopReason.ANSWERED, result.error
        assert len(fake.requests) == 3  # refused once, not retried as a failure
        sent = [m["content"] for m in fake.requests[2]["messages"] if m["role"] == "tool"]
        assert (
            len(sent[0]) < SHORTENED_CAP + 300
            and len(fake.requests[1]["messages"][-1]["content"]) > 10_000
        )
    notices = [e.text for e in rec.events if e.type == "notice"]
    assert sum("shortened" in n for n in notices) == 1


# ------------------------------------------------ user messages and pairs, long runs


async def test_user_messages_are_sent_whole_however_much_is_shortened(tmp_path):
    """A small window: every long result is shortened, the long user messages never are."""
    long_question = "please look at this: " + "q" * 3_000
    (tmp_path / "a").write_text(BIG)
    turns = []
    for n in range(4):
        turns += [calls((f"c{n}", "read_file", '{"path": "a"}')), answer(f"answer {n}")]
    session, provider, rec = make_session(tmp_path, turns, context_window=9_000)
    for n in range(4):
        result = await session.send(f"{n}: {long_question}")
        assert result.reason is StopReason.ANSWERED, result.error
    last = provider.requests[-1].messages
    users = [m.content for m in last if m.role == "user"]
    assert users == [f"{n}: {long_question}" for n in range(4)]
    tools = [m.content for m in last if m.role == "tool"]
    assert len(tools) == 4 and all(len(t) < SHORTENED_CAP + 300 for t in tools[:3])
    notices = [e.text for e in rec.events if e.type == "notice"]
    assert sum("shortened" in n for n in notices) == 1  # said once


def test_a_second_compaction_cuts_after_the_first_and_never_inside_a_round():
    many_rounds = [
        UserItem("question 3"),
        *[
            item
            for n in range(3)
            for item in (
                AssistantItem(
                    "", streaming=False, tool_calls=[ToolCall(f"r{n}", "read_file", "{}")]
                ),
                ToolItem("read_file", f"r{n}", state="done", result="r"),
            )
        ],
        AssistantItem("answer 3", streaming=False),
    ]
    first = [*turn(1), *turn(2)]
    items = [SummaryItem("earlier", replaced=4), *first, *many_rounds, *turn(4), *turn(5)]
    cut = compaction_cut(items, keep_turns=2)
    assert isinstance(items[cut], UserItem) and items[cut].text == "question 4"
    kept = to_messages([SummaryItem("new", replaced=cut), *items[cut:]])
    answered = {m.tool_call_id for m in kept if m.role == "tool"}
    called = {c.id for m in kept if m.role == "assistant" for c in m.tool_calls}
    assert answered == called  # every call sent has its result, and no result is orphaned
    mid_run = items[: items.index(many_rounds[0]) + 3]  # a call answered, the run goes on
    assert mid_run[compaction_cut(mid_run, keep_turns=2)].text == "question 2"


def test_a_summary_with_nothing_after_it_to_keep_compacts_nothing():
    items = [SummaryItem("earlier", replaced=8), *turn(1), *turn(2)]
    assert compaction_cut(items, keep_turns=2) == 0
