"""The OpenAI Responses provider against a real loopback server (tests/support/fake_responses)."""

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
from agent_cli.providers.base import (
    Finished,
    Message,
    ModelInfo,
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
from agent_cli.providers.responses import ResponsesProvider
from agent_cli.providers.retry import RetryPolicy
from tests.support.fake_responses import (
    FakeResponses,
    completed,
    events,
    failed,
    frame,
    http_error,
    json_body,
    raw,
    text,
    tool_calls,
)
from tests.support.waiting import FOREVER, within

KEY = "sk-test-0123456789abcdef"
FAST = RetryPolicy(base=0.01, cap=0.02, jitter="none")
HELLO = Request(model="m1", system="be brief", messages=(Message("user", "hi"),))
SHORT_READ_TIMEOUT = 0.3


@pytest.fixture
def fake() -> Iterator[FakeResponses]:
    with FakeResponses(models=["m1", "m2"]) as server:
        yield server


@pytest.fixture
async def provider(fake: FakeResponses) -> AsyncIterator[ResponsesProvider]:
    async with ResponsesProvider(fake.base_url, KEY, retry=FAST) as made:
        yield made


async def collect(provider: ResponsesProvider, request: Request = HELLO) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


async def collect_until_error(
    provider: ResponsesProvider, request: Request = HELLO
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


def call_added(index: int, call_id: str, name: str) -> dict[str, Any]:
    item = {"type": "function_call", "id": f"fc_{index}", "call_id": call_id, "name": name}
    return frame("response.output_item.added", output_index=index, item={**item, "arguments": ""})


def text_delta(piece: str, index: int = 0) -> dict[str, Any]:
    return frame("response.output_text.delta", output_index=index, content_index=0, delta=piece)


# -- streaming ------------------------------------------------------------------------


async def test_text_streams_as_deltas_then_usage_then_finished(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    fake.add(text("Hello there, world", usage=(12, 3), cached=8))
    assert await collect(provider) == [
        TextDelta("Hello "),
        TextDelta("there, "),
        TextDelta("world"),
        Usage(12, 3, 8),
        Finished("stop"),
    ]


async def test_reasoning_summary_and_vllm_reasoning_text_are_reasoning(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    fake.add(text("42", reasoning="Let me think"))
    vllm = frame("response.reasoning_text.delta", output_index=0, delta="hmm")
    fake.add(raw(events(vllm, text_delta("ok", 1)) + completed()))
    events_ = await collect(provider)
    assert joined(events_, ReasoningDelta) == "Let me think" and joined(events_) == "42"
    assert events_[events_.index(TextDelta("42")) - 1] == ReasoningDelta("think")
    assert (await collect(provider))[:2] == [ReasoningDelta("hmm"), TextDelta("ok")]


async def test_function_calls_split_one_byte_at_a_time(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    read_args = json.dumps({"path": "src/main.py", "limit": 200})
    grep_args = json.dumps({"pattern": "déjà vu 😀", "glob": "**/*.py"})
    scripted = tool_calls(
        ("call_a", "read_file", read_args), ("call_b", "grep_search", grep_args), text="Looking."
    )
    fake.add(scripted.replace(split=1))
    events_ = await collect(provider)
    assert joined(events_) == "Looking."
    assert of_type(events_, ToolCallStarted) == [
        ToolCallStarted(0, "call_a", "read_file"),  # call_id, numbered by call not output item
        ToolCallStarted(1, "call_b", "grep_search"),
    ]
    deltas = of_type(events_, ToolCallDelta)
    for index, expected in ((0, read_args), (1, grep_args)):
        assert "".join(d.fragment for d in deltas if d.index == index) == expected
    assert events_[-4:] == [
        ToolCallFinished(0, "call_a", "read_file", read_args),
        ToolCallFinished(1, "call_b", "grep_search", grep_args),
        Usage(10, 5, 0),
        Finished("tool_calls"),
    ]


async def test_arguments_sent_only_whole_are_the_arguments(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    item = {"type": "function_call", "id": "fc_0", "call_id": "c1", "name": "ls"}
    done = frame("response.output_item.done", output_index=0, item={**item, "arguments": "{}"})
    fake.add(raw(events(done) + completed()))
    events_ = await collect(provider)
    assert events_[:3] == [
        ToolCallStarted(0, "c1", "ls"),
        ToolCallDelta(0, "{}"),
        ToolCallFinished(0, "c1", "ls", "{}"),
    ]


async def test_truncated_arguments_are_passed_on_not_raised(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    cut = '{"path": "a.txt", "content": "hel'
    args = frame("response.function_call_arguments.delta", output_index=0, delta=cut)
    body = completed(status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    fake.add(raw(events(call_added(0, "c1", "write_file"), args) + body))
    events_ = await collect(provider)
    assert of_type(events_, ToolCallFinished) == [ToolCallFinished(0, "c1", "write_file", cut)]
    assert events_[-1] == Finished("length")


async def test_unknown_events_and_fields_are_ignored(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    body = b": keep-alive\n\n" + events(
        frame("response.novel", x=1),
        frame("response.output_item.added", output_index=0, item={"type": "web_search_call"}),
        {**text_delta("hi"), "logprobs": [], "obfuscation": "xyz"},
        frame("response.output_text.delta", output_index=0, delta=""),
    )
    fake.add(raw(body + completed((7, 1))))
    assert await collect(provider) == [TextDelta("hi"), Usage(7, 1, 0), Finished("stop")]


# -- retries before output ---------------------------------------------------------------


async def test_429_waits_for_retry_after_then_succeeds(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    fake.add(http_error(429, "Rate limit reached", retry_after=0.05), text("done"))
    started = time.monotonic()
    events_ = await collect(provider)
    assert time.monotonic() - started >= 0.04
    assert events_[0] == Retrying(1, 0.05, "HTTP 429: Rate limit reached")
    assert joined(events_) == "done" and len(fake.requests) == 2


async def test_5xx_and_response_failed_before_output_are_retried(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    fake.add(http_error(502, "bad gateway"), raw(failed("server_error", "oops")), text("ok"))
    events_ = await collect(provider)
    assert of_type(events_, Retrying) == [
        Retrying(1, 0.01, "HTTP 502: bad gateway"),
        Retrying(2, 0.02, "the service reported error 500"),
    ]
    assert joined(events_) == "ok"


async def test_stream_ending_early_before_output_is_retried(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    fake.add(raw(events(frame("response.created", response={}))), text("lucky"))
    events_ = await collect(provider)
    assert of_type(events_, Retrying) == [Retrying(1, 0.01, "the stream ended early")]
    assert joined(events_) == "lucky"


async def test_server_that_goes_silent_before_output_is_retried(fake: FakeResponses) -> None:
    fake.add(raw(b"", stall=FOREVER), text("awake"))
    async with ResponsesProvider(
        fake.base_url, retry=FAST, read_timeout=SHORT_READ_TIMEOUT
    ) as provider:
        events_ = await within(collect(provider))  # only the read timeout ends the stall
    (retrying,) = of_type(events_, Retrying)
    assert retrying.reason == f"nothing arrived for {SHORT_READ_TIMEOUT:g} s"


# -- failures that are final ----------------------------------------------------------------


async def test_400_fails_at_once_with_the_servers_message(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    fake.add(http_error(400, "Invalid value for 'input'"), text("never"))
    events_, error = await collect_until_error(provider)
    assert events_ == [] and len(fake.requests) == 1
    assert isinstance(error, ProviderHTTPError) and error.status == 400
    assert (
        str(error)
        == f"The model service at {fake.base_url} answered 400: Invalid value for 'input'"
    )


async def test_context_length_refusals_are_context_too_long(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    body = b'{"error": {"message": "Too long", "code": "context_length_exceeded"}}'
    fake.add(http_error(400, "", body=body), raw(failed("context_length_exceeded", "Too long")))
    _, error = await collect_until_error(provider)
    assert isinstance(error, ContextTooLong)
    _, error = await collect_until_error(provider)
    assert isinstance(error, ContextTooLong) and len(fake.requests) == 2


async def test_error_event_without_a_known_code_fails_with_its_message(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    fake.add(raw(events({"type": "error", "code": "weird", "message": "no such tool"})))
    _, error = await collect_until_error(provider)
    assert type(error) is ProviderError and "no such tool" in str(error)


async def test_the_key_never_appears_in_error_messages(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    fake.add(http_error(401, f"Incorrect API key provided: {KEY}"))
    _, error = await collect_until_error(provider)
    assert KEY not in str(error) and "***" in str(error) and "check the API key" in str(error)
    fake.add(raw(failed("invalid_prompt", f"echo {KEY}")))
    _, error = await collect_until_error(provider)
    assert KEY not in str(error) and KEY not in repr(provider)


async def test_frame_that_is_not_json_is_a_protocol_error(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    fake.add(raw(b"data: {not json\n\n"))
    _, error = await collect_until_error(provider)
    assert isinstance(error, ProviderProtocolError) and "Responses API" in str(error)


# -- failures after output ------------------------------------------------------------------


async def test_stream_dropped_mid_answer_is_interrupted_not_retried(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    fake.add(raw(events(text_delta("Half an "), text_delta("answer")), drop=True), text("never"))
    events_, error = await collect_until_error(provider)
    assert isinstance(error, StreamInterrupted) and "broke after the answer" in str(error)
    assert joined(events_) == "Half an answer" and len(fake.requests) == 1


async def test_response_failed_after_output_is_interrupted(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    fake.add(raw(events(text_delta("Sta")) + failed("server_error", "oops")), text("never"))
    events_, error = await collect_until_error(provider)
    assert events_ == [TextDelta("Sta")]
    assert isinstance(error, StreamInterrupted) and len(fake.requests) == 1


async def test_server_that_goes_silent_after_output_is_interrupted(fake: FakeResponses) -> None:
    fake.add(raw(events(text_delta("Thinking")), stall=FOREVER), text("never"))
    async with ResponsesProvider(
        fake.base_url, retry=FAST, read_timeout=SHORT_READ_TIMEOUT
    ) as provider:
        events_, error = await within(collect_until_error(provider))
    assert events_ == [TextDelta("Thinking")]
    assert isinstance(error, StreamInterrupted) and "nothing arrived" in str(error)


# -- the request ----------------------------------------------------------------------------


async def test_request_body_has_instructions_input_items_and_store_false(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    call = ToolCallSpec("call_1", "read_file", '{"path": "a.txt"}')
    request = Request(
        model="m2",
        system="You are terse.",
        messages=(
            Message("user", "read a.txt"),
            Message("assistant", "Reading.", tool_calls=(call, ToolCallSpec("call_2", "pwd", ""))),
            Message("tool", "hello", tool_call_id="call_1"),
            Message("tool", "failed", tool_call_id="call_2", is_error=True),
            Message("assistant", "It says hello."),
        ),
        tools=(ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}}),),
    )
    fake.add(text("ok"))
    await collect(provider, request)
    assert fake.requests == [
        {
            "model": "m2",
            "stream": True,
            "store": False,
            "instructions": "You are terse.",
            "input": [
                {"role": "user", "content": "read a.txt"},
                {"role": "assistant", "content": "Reading."},
                {
                    "type": "function_call",
                    "call_id": "call_1",
                    "name": "read_file",
                    "arguments": '{"path": "a.txt"}',
                },
                {"type": "function_call", "call_id": "call_2", "name": "pwd", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "hello"},
                {"type": "function_call_output", "call_id": "call_2", "output": "failed"},
                {"role": "assistant", "content": "It says hello."},
            ],
            "tools": [
                {
                    "type": "function",
                    "name": "read_file",
                    "description": "Read a file.",
                    "parameters": {"type": "object", "properties": {}},
                }
            ],
        }
    ]
    assert fake.request_headers[0]["authorization"] == f"Bearer {KEY}"
    assert fake.paths == ["POST /v1/responses"]


async def test_no_system_prompt_no_tools_no_key(fake: FakeResponses) -> None:
    fake.add(text("ok"))
    async with ResponsesProvider(fake.base_url + "/") as provider:
        assert provider.name == "openai-responses" and provider.kind == "openai-responses"
        await collect(provider, Request("m1", "", (Message("user", "hi"),)))
    assert "instructions" not in fake.requests[0] and "tools" not in fake.requests[0]
    assert "authorization" not in fake.request_headers[0]


async def test_list_models_with_vllm_context_window(
    fake: FakeResponses, provider: ResponsesProvider
) -> None:
    listing = {"data": [{"id": "qwen", "max_model_len": 32768}, {"id": "qwen"}, {"id": "b"}]}
    fake.add_models(json_body(listing))
    assert await provider.list_models() == [
        ModelInfo("qwen", 32768, {"max_model_len": 32768}),
        ModelInfo("b", None, {}),
    ]
    assert fake.paths == ["GET /v1/models"]
