"""The Anthropic Messages provider against a real loopback server (tests/support/fake_anthropic)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from agent_cli.errors import (
    ContextTooLong,
    ProviderError,
    ProviderHTTPError,
    ProviderProtocolError,
    StreamInterrupted,
)
from agent_cli.providers.anthropic import ANTHROPIC_VERSION, AnthropicProvider
from agent_cli.providers.base import (
    Finished,
    Message,
    ReasoningDelta,
    Request,
    Retrying,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallSpec,
    ToolCallStarted,
    ToolSpec,
    Usage,
)
from agent_cli.providers.retry import RetryPolicy
from tests.support.fake_anthropic import (
    FakeAnthropic,
    block_start,
    delta,
    ending,
    events,
    http_error,
    message_start,
    raw,
    stream_error,
    text,
    tool_calls,
)
from tests.support.waiting import FOREVER, within

KEY = "sk-ant-test-0123456789abcdef"
FAST = RetryPolicy(base=0.01, cap=0.02, jitter="none")
HELLO = Request(model="m1", system="be brief", messages=(Message("user", "hi"),))
SHORT_READ_TIMEOUT = 0.3


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(models=["claude-a", "claude-b"]) as server:
        yield server


@pytest.fixture
async def provider(fake: FakeAnthropic) -> AsyncIterator[AnthropicProvider]:
    async with AnthropicProvider(fake.base_url, KEY, retry=FAST) as made:
        yield made


async def collect(provider: AnthropicProvider, request: Request = HELLO) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


async def collect_until_error(
    provider: AnthropicProvider, request: Request = HELLO
) -> tuple[list[StreamEvent], ProviderError]:
    events: list[StreamEvent] = []
    with pytest.raises(ProviderError) as caught:
        async for event in provider.stream(request):
            events.append(event)
    return events, caught.value


def joined(events: list[StreamEvent], kind: type = TextDelta) -> str:
    return "".join(event.text for event in events if type(event) is kind)


def of_type(events: list[StreamEvent], kind: type) -> list[Any]:
    return [event for event in events if type(event) is kind]


# -- streaming ------------------------------------------------------------------------


async def test_text_streams_as_deltas_then_usage_then_finished(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(text("Hello there, world", usage=(12, 3)))
    assert await collect(provider) == [
        TextDelta("Hello "),
        TextDelta("there, "),
        TextDelta("world"),
        Usage(12, 3, 0),
        Finished("stop"),
    ]


async def test_thinking_is_reasoning_before_the_answer(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(text("42", reasoning="Let me think"))
    events = await collect(provider)
    assert joined(events, ReasoningDelta) == "Let me think"
    assert events[events.index(TextDelta("42")) - 1] == ReasoningDelta("think")


async def test_usage_counts_cached_prompt_tokens_in_the_prompt(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(text("ok", usage=(10, 4), cache=(64, 26)))
    assert Usage(100, 4, 64) in await collect(provider)


async def test_tool_calls_split_one_byte_at_a_time(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    read_args = json.dumps({"path": "src/main.py", "limit": 200})
    grep_args = json.dumps({"pattern": "déjà vu 😀", "glob": "**/*.py"})
    scripted = tool_calls(
        ("toolu_a", "read_file", read_args), ("toolu_b", "grep_search", grep_args), text="Looking."
    )
    fake.add(scripted.replace(split=1))
    events = await collect(provider)
    assert joined(events) == "Looking."
    assert of_type(events, ToolCallStarted) == [
        ToolCallStarted(0, "toolu_a", "read_file"),  # numbered by call, not by content block
        ToolCallStarted(1, "toolu_b", "grep_search"),
    ]
    deltas = of_type(events, ToolCallDelta)
    for index, expected in ((0, read_args), (1, grep_args)):
        assert "".join(d.fragment for d in deltas if d.index == index) == expected
    assert events[-4:] == [
        ToolCallFinished(0, "toolu_a", "read_file", read_args),
        ToolCallFinished(1, "toolu_b", "grep_search", grep_args),
        Usage(10, 5, 0),
        Finished("tool_calls"),
    ]


async def test_input_given_whole_at_block_start_is_the_arguments(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    start = {"type": "tool_use", "id": "t1", "name": "ls", "input": {"path": "."}}
    fake.add(raw(message_start() + block_start(0, start) + ending("tool_use")))
    events = await collect(provider)
    assert of_type(events, ToolCallFinished) == [ToolCallFinished(0, "t1", "ls", '{"path": "."}')]


async def test_truncated_tool_json_is_passed_on_not_raised(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    start = {"type": "tool_use", "id": "t1", "name": "write_file", "input": {}}
    cut = '{"path": "a.txt", "content": "hel'
    body = message_start() + block_start(0, start)
    body += delta(0, "input_json_delta", "partial_json", cut) + ending("max_tokens")
    fake.add(raw(body))
    events = await collect(provider)
    assert of_type(events, ToolCallFinished) == [ToolCallFinished(0, "t1", "write_file", cut)]
    assert events[-1] == Finished("length")


async def test_pings_unknown_events_and_fields_are_ignored(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    body = b": a comment\n\n" + message_start(usage=(7, 1))
    body += events({"type": "ping"}, {"type": "novel_event", "x": 1})
    body += block_start(0, {"type": "text", "text": "", "citations": None})
    body += events({"type": "content_block_delta", "index": 0, "delta": {"type": "mystery"}})
    body += delta(0, "text_delta", "text", "hi") + ending("end_turn", output_tokens=1)
    fake.add(raw(body))
    assert await collect(provider) == [TextDelta("hi"), Usage(7, 1, 0), Finished("stop")]


async def test_stream_cut_after_the_stop_reason_is_complete(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    body = message_start() + block_start(0, {"type": "text", "text": ""})
    body += (
        delta(0, "text_delta", "text", "ok") + ending("end_turn").split(b"event: message_stop")[0]
    )
    fake.add(raw(body, drop=True))
    assert await collect(provider) == [TextDelta("ok"), Usage(10, 5, 0), Finished("stop")]
    assert len(fake.requests) == 1


# -- retries before output ---------------------------------------------------------------


@pytest.mark.parametrize(("status", "message"), [(429, "Rate limited"), (529, "Overloaded")])
async def test_429_and_529_wait_for_retry_after_then_succeed(
    fake: FakeAnthropic, provider: AnthropicProvider, status: int, message: str
) -> None:
    fake.add(http_error(status, message, retry_after=0.05), text("done"))
    started = time.monotonic()
    events = await collect(provider)
    assert time.monotonic() - started >= 0.04
    assert events[0] == Retrying(1, 0.05, f"HTTP {status}: {message}")
    assert joined(events) == "done" and len(fake.requests) == 2


async def test_5xx_are_retried_with_backoff_then_succeed(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(http_error(500, "boom"), http_error(503, "unavailable"), text("ok"))
    events = await collect(provider)
    assert of_type(events, Retrying) == [
        Retrying(1, 0.01, "HTTP 500: boom"),
        Retrying(2, 0.02, "HTTP 503: unavailable"),
    ]
    assert joined(events) == "ok"


async def test_overloaded_error_event_before_output_is_retried(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(raw(message_start() + stream_error("overloaded_error", "Overloaded")), text("ok"))
    events = await collect(provider)
    assert of_type(events, Retrying) == [Retrying(1, 0.01, "the service reported error 529")]
    assert joined(events) == "ok"


async def test_stream_ending_early_before_output_is_retried(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(raw(message_start()), text("second time lucky"))
    events = await collect(provider)
    assert of_type(events, Retrying) == [Retrying(1, 0.01, "the stream ended early")]
    assert joined(events) == "second time lucky"


async def test_server_that_goes_silent_before_output_is_retried(fake: FakeAnthropic) -> None:
    fake.add(raw(b"", stall=FOREVER), text("awake"))
    async with AnthropicProvider(
        fake.base_url, retry=FAST, read_timeout=SHORT_READ_TIMEOUT
    ) as provider:
        events = await within(collect(provider))  # only the read timeout ends the stall
    (retrying,) = of_type(events, Retrying)
    assert retrying.reason == f"nothing arrived for {SHORT_READ_TIMEOUT:g} s"
    assert joined(events) == "awake"


# -- failures that are final ----------------------------------------------------------------


async def test_400_fails_at_once_with_the_servers_message(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(http_error(400, "messages: roles must alternate"), text("never"))
    events, error = await collect_until_error(provider)
    assert events == [] and len(fake.requests) == 1
    assert isinstance(error, ProviderHTTPError) and error.status == 400
    assert str(error) == (
        f"The model service at {fake.base_url} answered 400: messages: roles must alternate"
    )


async def test_prompt_too_long_is_context_too_long(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(http_error(400, "prompt is too long: 215000 tokens > 200000 maximum"))
    _, error = await collect_until_error(provider)
    assert isinstance(error, ContextTooLong) and "215000 tokens" in str(error)


async def test_prompt_too_long_inside_the_stream_is_context_too_long(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(raw(stream_error("invalid_request_error", "prompt is too long: 9 > 8")))
    _, error = await collect_until_error(provider)
    assert isinstance(error, ContextTooLong) and len(fake.requests) == 1


async def test_the_key_never_appears_in_error_messages(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(http_error(401, f"invalid x-api-key: {KEY}"))
    _, error = await collect_until_error(provider)
    assert KEY not in str(error) and "***" in str(error) and "check the API key" in str(error)
    fake.add(*[raw(stream_error("api_error", f"echo {KEY}"))] * 4)
    _, error = await collect_until_error(provider)
    assert KEY not in str(error) and KEY not in repr(provider)


async def test_frame_that_is_not_json_is_a_protocol_error(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(raw(b"event: message_start\ndata: {not json\n\n"))
    _, error = await collect_until_error(provider)
    assert isinstance(error, ProviderProtocolError) and "{not json" in str(error)
    assert "Anthropic Messages API" in str(error)


async def test_html_page_names_the_right_kind_of_base_url(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.add(raw(b"<!DOCTYPE html><html></html>", content_type="text/html"))
    _, error = await collect_until_error(provider)
    assert isinstance(error, ProviderProtocolError) and "api.anthropic.com" in str(error)


# -- failures after output ------------------------------------------------------------------


async def test_stream_dropped_mid_answer_is_interrupted_not_retried(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    body = message_start() + block_start(0, {"type": "text", "text": ""})
    body += delta(0, "text_delta", "text", "Half an ") + delta(0, "text_delta", "text", "answer")
    fake.add(raw(body, drop=True), text("never"))
    events, error = await collect_until_error(provider)
    assert isinstance(error, StreamInterrupted) and "broke after the answer" in str(error)
    assert joined(events) == "Half an answer" and len(fake.requests) == 1


async def test_overloaded_after_output_is_interrupted(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    body = message_start() + block_start(0, {"type": "text", "text": "Sta"})
    fake.add(raw(body + stream_error("overloaded_error", "Overloaded")), text("never"))
    events, error = await collect_until_error(provider)
    assert events == [TextDelta("Sta")]
    assert isinstance(error, StreamInterrupted) and len(fake.requests) == 1


async def test_server_that_goes_silent_after_output_is_interrupted(fake: FakeAnthropic) -> None:
    body = message_start() + block_start(0, {"type": "thinking", "thinking": "Hmm"})
    fake.add(raw(body, stall=FOREVER), text("never"))
    async with AnthropicProvider(
        fake.base_url, retry=FAST, read_timeout=SHORT_READ_TIMEOUT
    ) as provider:
        events, error = await within(collect_until_error(provider))
    assert events == [ReasoningDelta("Hmm")]
    assert isinstance(error, StreamInterrupted) and "nothing arrived" in str(error)


# -- the request ----------------------------------------------------------------------------


async def test_request_body_merges_turns_into_content_blocks(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    calls = (
        ToolCallSpec("toolu_1", "read_file", '{"path": "a.txt"}'),
        ToolCallSpec("toolu_2", "read_file", '{"path": "cut'),  # not JSON: sent as {}
    )
    request = Request(
        model="claude-a",
        system="You are terse.",
        messages=(
            Message("user", "read a.txt and b"),
            Message("assistant", "Reading.", tool_calls=calls),
            Message("tool", "hello", tool_call_id="toolu_1"),
            Message("tool", "bad arguments", tool_call_id="toolu_2", is_error=True),
            Message("user", "and now?"),
            Message("assistant", "It says hello."),
        ),
        tools=(ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}}),),
    )
    fake.add(text("ok"))
    await collect(provider, request)
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "hello"}
    assert fake.requests == [
        {
            "model": "claude-a",
            "max_tokens": 8192,
            "stream": True,
            "system": "You are terse.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "read a.txt and b"}]},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Reading."},
                        {
                            "type": "tool_use",
                            "id": "toolu_1",
                            "name": "read_file",
                            "input": {"path": "a.txt"},
                        },
                        {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {**result, "is_error": False},
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_2",
                            "content": "bad arguments",
                            "is_error": True,
                        },
                        {"type": "text", "text": "and now?"},
                    ],
                },
                {"role": "assistant", "content": [{"type": "text", "text": "It says hello."}]},
            ],
            "tools": [
                {
                    "name": "read_file",
                    "description": "Read a file.",
                    "input_schema": {"type": "object", "properties": {}},
                }
            ],
        }
    ]
    headers = fake.request_headers[0]
    assert headers["x-api-key"] == KEY and headers["anthropic-version"] == ANTHROPIC_VERSION
    assert "authorization" not in headers and headers["content-type"] == "application/json"
    assert fake.paths == ["POST /v1/messages"]


async def test_base_url_with_v1_and_without_a_system_prompt(fake: FakeAnthropic) -> None:
    fake.add(text("ok"))
    async with AnthropicProvider(fake.base_url + "/v1/", max_tokens=100) as provider:
        assert provider.base_url == fake.base_url
        await collect(provider, Request("m1", "", (Message("user", "hi"),)))
    assert "system" not in fake.requests[0] and "tools" not in fake.requests[0]
    assert fake.requests[0]["max_tokens"] == 100 and "x-api-key" not in fake.request_headers[0]


async def test_list_models(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    assert [m.id for m in await provider.list_models()] == ["claude-a", "claude-b"]
    assert fake.paths == ["GET /v1/models?limit=1000"]  # one page holds every model
