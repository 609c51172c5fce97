"""The OpenAI-compatible provider against a real loopback server (and MockTransport for units)."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import ssl
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from agent_cli.errors import (
    ConfigError,
    ProviderConnectionError,
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
from agent_cli.providers.openai import OpenAIProvider, _tls_verification
from agent_cli.providers.retry import RetryPolicy
from tests.support.fake_openai import (
    FakeOpenAI,
    chunk,
    frames,
    http_error,
    json_body,
    raw,
    text,
    tool_calls,
)
from tests.support.waiting import FOREVER, within

KEY = "sk-test-0123456789abcdef"
FAST = RetryPolicy(base=0.01, cap=0.02, jitter="none")  # the spec's schedule, 50x faster
HELLO = Request(model="m1", system="be brief", messages=(Message("user", "hi"),))
SHORT_READ_TIMEOUT = 0.3


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(models=["m1", "m2"]) as server:
        yield server


@pytest.fixture
async def provider(fake: FakeOpenAI) -> AsyncIterator[OpenAIProvider]:
    async with OpenAIProvider(fake.base_url, KEY, retry=FAST) as made:
        yield made


async def collect(provider: OpenAIProvider, request: Request = HELLO) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


async def collect_until_error(
    provider: OpenAIProvider, request: Request = HELLO
) -> tuple[list[StreamEvent], ProviderError]:
    """The events yielded before the stream raised, and the error it raised."""
    events: list[StreamEvent] = []
    with pytest.raises(ProviderError) as caught:
        async for event in provider.stream(request):
            events.append(event)
    return events, caught.value


def joined_text(events: list[StreamEvent], kind: type = TextDelta) -> str:
    return "".join(event.text for event in events if isinstance(event, kind))


def of_type(events: list[StreamEvent], kind: type) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# -- streaming ---------------------------------------------------------------------


async def test_text_streams_as_deltas_then_usage_then_finished(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(text("Hello there, world", usage=(12, 3)))
    events = await collect(provider)
    assert events == [
        TextDelta("Hello "),
        TextDelta("there, "),
        TextDelta("world"),
        Usage(12, 3, 0),
        Finished("stop"),
    ]


async def test_reasoning_comes_before_the_answer(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(text("42", reasoning="Let me think"))
    events = await collect(provider)
    assert joined_text(events, ReasoningDelta) == "Let me think"
    assert joined_text(events) == "42"
    first_text = events.index(TextDelta("42"))
    assert all(isinstance(e, ReasoningDelta) for e in events[:first_text])


async def test_reasoning_field_named_reasoning_is_kept(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(
        raw(frames(chunk({"reasoning": "hmm"}), chunk({"content": "ok"}, finish_reason="stop")))
    )
    assert await collect(provider) == [ReasoningDelta("hmm"), TextDelta("ok"), Finished("stop")]


async def test_many_deltas_arrive_in_order(fake: FakeOpenAI, provider: OpenAIProvider) -> None:
    answer = "".join(f"w{i} " for i in range(3000))
    fake.add(text(answer, chunks=3000))
    events = await collect(provider)
    assert joined_text(events) == answer
    assert len(of_type(events, TextDelta)) == 3000


async def test_tool_calls_split_one_byte_at_a_time_and_interleaved(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    read_args = json.dumps({"path": "src/main.py", "limit": 200})
    grep_args = json.dumps({"pattern": "déjà vu 😀", "glob": "**/*.py"})
    scripted = tool_calls(
        ("call_a", "read_file", read_args),
        ("call_b", "grep_search", grep_args),
        text="Looking.",
        interleave=True,
    )
    fake.add(scripted.replace(split=1))
    events = await collect(provider)

    assert joined_text(events) == "Looking."
    assert of_type(events, ToolCallStarted) == [
        ToolCallStarted(0, "call_a", "read_file"),
        ToolCallStarted(1, "call_b", "grep_search"),
    ]
    deltas = of_type(events, ToolCallDelta)
    assert [d.index for d in deltas] != sorted(d.index for d in deltas), "not interleaved"
    for index, expected in ((0, read_args), (1, grep_args)):
        assert "".join(d.fragment for d in deltas if d.index == index) == expected
    assert events[-4:] == [
        ToolCallFinished(0, "call_a", "read_file", read_args),
        ToolCallFinished(1, "call_b", "grep_search", grep_args),
        Usage(10, 5, 0),
        Finished("tool_calls"),
    ]


async def test_tool_call_arguments_sent_as_an_object_become_json_text(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "ls", "arguments": {"path": "."}}}
    fake.add(raw(frames(chunk({"tool_calls": [call]}, finish_reason="tool_calls"))))
    events = await collect(provider)
    (finished,) = of_type(events, ToolCallFinished)
    assert json.loads(finished.arguments) == {"path": "."}
    assert of_type(events, ToolCallDelta) == [ToolCallDelta(0, finished.arguments)]


async def test_tool_call_without_id_gets_a_made_up_one(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(tool_calls(("", "ls", '{"path": "."}'), ("", "pwd", "{}")))
    events = await collect(provider)
    started = of_type(events, ToolCallStarted)
    finished = of_type(events, ToolCallFinished)
    assert [s.id for s in started] == [f.id for f in finished]
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", s.id) for s in started)
    assert started[0].id != started[1].id


async def test_tool_call_fragments_without_index_are_grouped_by_id(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    first = {"id": "a", "function": {"name": "ls", "arguments": '{"p'}}
    more = {"function": {"arguments": '": 1}'}}
    second = {"id": "b", "function": {"name": "pwd", "arguments": "{}"}}
    fragments = [chunk({"tool_calls": [f]}) for f in (first, more, second)]
    fake.add(raw(frames(*fragments, chunk({}, finish_reason="tool_calls"))))
    finished = of_type(await collect(provider), ToolCallFinished)
    assert finished == [
        ToolCallFinished(0, "a", "ls", '{"p": 1}'),
        ToolCallFinished(1, "b", "pwd", "{}"),
    ]


async def test_truncated_tool_call_arguments_are_passed_on_not_raised(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    start = {"index": 0, "id": "c1", "function": {"name": "write_file", "arguments": ""}}
    cut = {"index": 0, "function": {"arguments": '{"path": "a.txt", "content": "hel'}}
    fake.add(raw(frames(chunk({"tool_calls": [start]}), chunk({"tool_calls": [cut]}))))
    events = await collect(provider)
    assert of_type(events, ToolCallFinished) == [
        ToolCallFinished(0, "c1", "write_file", '{"path": "a.txt", "content": "hel')
    ]
    assert events[-1] == Finished("stop")


async def test_null_content_missing_choices_and_unknown_fields_are_ignored(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    body = frames(
        {"id": "x", "object": "chat.completion.chunk", "novel": {"field": 1}},
        chunk({"role": "assistant", "content": None, "refusal": None}),
        chunk({"content": "", "mystery": [1, 2]}),
        {"choices": [{"index": 0, "delta": {"content": "hi"}, "logprobs": None}]},
        {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 1, "extra": 9}},
    )
    fake.add(raw(b": comment from the server\n\n" + body))
    assert await collect(provider) == [TextDelta("hi"), Usage(7, 1, 0), Finished("stop")]


async def test_cached_tokens_are_read_from_usage(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 4,
        "prompt_tokens_details": {"cached_tokens": 64},
    }
    fake.add(
        raw(frames(chunk({"content": "x"}, finish_reason="stop"), {"choices": [], "usage": usage}))
    )
    events = await collect(provider)
    assert Usage(100, 4, 64) in events


async def test_stream_ending_after_finish_reason_without_done_is_complete(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(raw(frames(chunk({"content": "ok"}), chunk({}, finish_reason="length"), done=False)))
    assert await collect(provider) == [TextDelta("ok"), Finished("length")]
    assert len(fake.requests) == 1


# -- retries before output ------------------------------------------------------------


async def test_429_waits_for_retry_after_then_succeeds(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(http_error(429, "Rate limit reached", retry_after=0.05), text("done"))
    started = time.monotonic()
    events = await collect(provider)
    assert time.monotonic() - started >= 0.04  # it waited (timers may fire a hair early)
    retrying = events[0]
    assert isinstance(retrying, Retrying)
    assert (retrying.attempt, retrying.delay) == (1, 0.05)
    assert "429" in retrying.reason and "Rate limit reached" in retrying.reason
    assert joined_text(events) == "done"
    assert len(fake.requests) == 2


async def test_a_long_retry_after_is_capped(fake: FakeOpenAI) -> None:
    capped = RetryPolicy(base=0.01, cap=0.02, retry_after_cap=0.1, jitter="none")
    fake.add(http_error(429, "come back in an hour", retry_after=3600), text("done"))
    async with OpenAIProvider(fake.base_url, KEY, retry=capped) as provider:
        events = await within(collect(provider))  # not an hour
    assert of_type(events, Retrying) == [Retrying(1, 0.1, "HTTP 429: come back in an hour")]
    assert joined_text(events) == "done"


async def test_500s_are_retried_with_backoff_then_succeed(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(http_error(500, "boom"), http_error(503, "overloaded"), text("ok"))
    events = await collect(provider)
    assert of_type(events, Retrying) == [
        Retrying(1, 0.01, "HTTP 500: boom"),
        Retrying(2, 0.02, "HTTP 503: overloaded"),
    ]
    assert joined_text(events) == "ok"
    assert len(fake.requests) == 3


async def test_500_beyond_the_retry_budget_raises_the_last_error(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(*[http_error(500, f"failure {n}") for n in range(4)], text("never"))
    events, error = await collect_until_error(provider)
    assert isinstance(error, ProviderHTTPError)
    assert error.status == 500
    assert "failure 3" in str(error)
    assert [e.attempt for e in of_type(events, Retrying)] == [1, 2, 3]
    assert len(fake.requests) == 4


async def test_400_fails_at_once_with_the_servers_message(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(http_error(400, "model 'nope' not found"), text("never"))
    events, error = await collect_until_error(provider)
    assert events == []
    assert isinstance(error, ProviderHTTPError) and error.status == 400
    assert (
        str(error) == f"The model service at {fake.base_url} answered 400: model 'nope' not found"
    )
    assert len(fake.requests) == 1


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        (b'{"error": "plain string error"}', "application/json", "plain string error"),
        (b'{"message": "top-level message"}', "application/json", "top-level message"),
        (b'{"detail": "fastapi style"}', "application/json", "fastapi style"),
        (b"just   some\ntext", "text/plain", "just some text"),
        (b"<html><title>Bad Gateway</title></html>", "text/html", "Bad Gateway"),
    ],
)
async def test_error_messages_are_read_from_common_body_shapes(
    fake: FakeOpenAI, provider: OpenAIProvider, body: bytes, content_type: str, expected: str
) -> None:
    fake.add(http_error(422, "", body=body, content_type=content_type))
    _, error = await collect_until_error(provider)
    assert str(error).endswith(f"answered 422: {expected}")


async def test_long_error_messages_are_shortened(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(http_error(400, "x" * 5000))
    _, error = await collect_until_error(provider)
    assert len(str(error)) < 400 and str(error).endswith("…")


async def test_401_says_to_check_the_key_and_never_shows_it(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(http_error(401, f"Incorrect API key provided: {KEY}"))
    _, error = await collect_until_error(provider)
    assert KEY not in str(error)
    assert "***" in str(error) and "check the API key" in str(error)


async def test_stream_ending_early_before_output_is_retried(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(raw(b": nothing yet\n\n"), text("second time lucky"))
    events = await collect(provider)
    assert of_type(events, Retrying) == [Retrying(1, 0.01, "the stream ended early")]
    assert joined_text(events) == "second time lucky"


async def test_server_that_goes_silent_before_output_is_retried(fake: FakeOpenAI) -> None:
    fake.add(raw(b"", stall=FOREVER), text("awake"))
    async with OpenAIProvider(
        fake.base_url, retry=FAST, read_timeout=SHORT_READ_TIMEOUT
    ) as provider:
        events = await within(collect(provider))  # only the read timeout ends the stall
    (retrying,) = of_type(events, Retrying)
    assert retrying.reason == f"nothing arrived for {SHORT_READ_TIMEOUT:g} s"
    assert joined_text(events) == "awake"


async def test_connection_refused_raises_after_the_retries() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    async with OpenAIProvider(url, KEY, retry=FAST) as provider:
        events, error = await collect_until_error(provider)
    assert isinstance(error, ProviderConnectionError)
    assert len(of_type(events, Retrying)) == 3
    # A local address: the likely cause is a server not started, and the message says so.
    assert str(error).startswith(f"No server answers at {url.removesuffix('/v1')} — start")
    assert KEY not in str(error)


# -- failures after output ---------------------------------------------------------------


async def test_stream_dropped_mid_answer_is_interrupted_not_retried(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    partial = frames(chunk({"content": "Half an "}), chunk({"content": "answer"}), done=False)
    fake.add(raw(partial, drop=True), text("never"))
    events, error = await collect_until_error(provider)
    assert isinstance(error, StreamInterrupted)
    assert joined_text(events) == "Half an answer"
    assert "broke after the answer had started" in str(error) and "try again" in str(error)
    assert len(fake.requests) == 1


async def test_stream_ending_without_done_after_output_is_interrupted(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(raw(frames(chunk({"content": "cut"}), done=False)), text("never"))
    events, error = await collect_until_error(provider)
    assert events == [TextDelta("cut")]
    assert isinstance(error, StreamInterrupted)
    assert "the stream ended early" in str(error)
    assert len(fake.requests) == 1


async def test_server_that_goes_silent_after_output_is_interrupted(fake: FakeOpenAI) -> None:
    fake.add(raw(frames(chunk({"content": "Thinking"}), done=False), stall=FOREVER), text("never"))
    async with OpenAIProvider(
        fake.base_url, retry=FAST, read_timeout=SHORT_READ_TIMEOUT
    ) as provider:
        events, error = await within(collect_until_error(provider))
    assert isinstance(error, StreamInterrupted)
    assert f"nothing arrived for {SHORT_READ_TIMEOUT:g} s" in str(error)
    assert events == [TextDelta("Thinking")]
    assert len(fake.requests) == 1


# -- answers that are not the API ---------------------------------------------------------


async def test_html_page_with_200_is_a_protocol_error(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    page = b"<!DOCTYPE html><html><head><title>My App</title></head><body>hi</body></html>"
    fake.add(raw(page, content_type="text/html; charset=utf-8"))
    events, error = await collect_until_error(provider)
    assert isinstance(error, ProviderProtocolError)
    assert "answered with an HTML page" in str(error) and "ends in /v1" in str(error)
    assert events == [] and len(fake.requests) == 1


async def test_frame_that_is_not_json_is_a_protocol_error_naming_it(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(raw(b"data: {not json at all\n\n"))
    _, error = await collect_until_error(provider)
    assert isinstance(error, ProviderProtocolError)
    assert "{not json at all" in str(error)


async def test_error_object_inside_the_stream_carries_its_message(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    error_frame = {"error": {"code": 400, "message": "context size exceeded", "type": "x"}}
    fake.add(raw(frames(error_frame)))
    _, error = await collect_until_error(provider)
    assert "context size exceeded" in str(error)
    assert not isinstance(error, StreamInterrupted)
    assert len(fake.requests) == 1


async def test_error_object_with_a_5xx_code_before_output_is_retried(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(raw(frames({"error": {"code": 503, "message": "busy"}})), text("ok"))
    events = await collect(provider)
    assert of_type(events, Retrying) == [Retrying(1, 0.01, "the service reported error 503")]
    assert joined_text(events) == "ok"


async def test_done_with_stray_whitespace_still_ends_the_stream(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(raw(frames(chunk({"content": "ok"}), done=False) + b"data: [DONE] \n\n"))
    assert await collect(provider) == [TextDelta("ok"), Finished("stop")]


async def test_json_error_with_200_status_carries_its_message(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(json_body({"error": {"message": "streaming is disabled"}}))
    _, error = await collect_until_error(provider)
    assert "streaming is disabled" in str(error)


# -- the request --------------------------------------------------------------------------


async def test_request_body_maps_messages_and_tools(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    call = ToolCallSpec("call_1", "read_file", '{"path": "a.txt"}')
    request = Request(
        model="m2",
        system="You are terse.",
        messages=(
            Message("user", "read a.txt"),
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", "hello", tool_call_id="call_1"),
            Message("assistant", "It says hello."),
        ),
        tools=(ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}}),),
    )
    fake.add(text("ok"))
    await collect(provider, request)
    assert fake.requests == [
        {
            "model": "m2",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "read a.txt"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "hello"},
                {"role": "assistant", "content": "It says hello."},
            ],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "read_file",
                        "description": "Read a file.",
                        "parameters": {"type": "object", "properties": {}},
                    },
                }
            ],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    ]
    headers = fake.request_headers[0]
    assert headers["authorization"] == f"Bearer {KEY}"
    assert headers["content-type"] == "application/json"


async def test_no_key_means_no_authorization_header_and_extra_headers_are_sent(
    fake: FakeOpenAI,
) -> None:
    fake.add(text("ok"))
    async with OpenAIProvider(fake.base_url, headers={"X-Team": "blue"}) as provider:
        await collect(provider, Request("m1", "", (Message("user", "hi"),)))
    assert "authorization" not in fake.request_headers[0]
    assert fake.request_headers[0]["x-team"] == "blue"
    assert [m["role"] for m in fake.requests[0]["messages"]] == ["user"], "no empty system"
    assert "tools" not in fake.requests[0]


def test_the_key_is_not_in_the_repr() -> None:
    provider = OpenAIProvider("http://127.0.0.1:9/v1/", f"  {KEY}\n")
    assert KEY not in repr(provider)
    assert provider.base_url == "http://127.0.0.1:9/v1"


def test_plain_http_skips_loading_certificates_unless_a_proxy_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    context = _tls_verification("http://127.0.0.1:8080/v1")
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert _tls_verification("https://api.openai.com/v1") is True
    monkeypatch.setenv("HTTPS_PROXY", "https://proxy.example:3128")
    assert _tls_verification("http://127.0.0.1:8080/v1") is True


def test_a_base_url_that_is_not_http_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not an http"):
        OpenAIProvider("localhost:8080/v1")


async def test_the_connection_is_reused_across_streams(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add(text("one"), text("two"))
    assert joined_text(await collect(provider)) == "one"
    assert joined_text(await collect(provider)) == "two"
    assert fake.connections_accepted == 1


# -- models -------------------------------------------------------------------------------


async def test_list_models(fake: FakeOpenAI, provider: OpenAIProvider) -> None:
    models = await provider.list_models()
    assert [m.id for m in models] == ["m1", "m2"]


async def test_list_models_accepts_llama_cpp_shape(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    listing = {
        "models": [{"name": "qwen.gguf", "model": "qwen.gguf"}],
        "data": [{"id": "qwen.gguf", "max_model_len": 32768}, {"id": "other"}],
    }
    fake.add_models(json_body(listing))
    models = await provider.list_models()
    assert [m.id for m in models] == ["qwen.gguf", "other"]
    assert models[0] == ModelInfo("qwen.gguf", 32768, {"max_model_len": 32768})


async def test_list_models_retries_a_503_and_fails_fast_on_404(
    fake: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake.add_models(http_error(503, "warming up"))
    assert [m.id for m in await provider.list_models()] == ["m1", "m2"]
    fake.add_models(http_error(404, "no such route"))
    with pytest.raises(ProviderHTTPError, match="answered 404: no such route"):
        await provider.list_models()
    assert fake.paths.count("GET /v1/models") == 3


# -- cancellation (MockTransport: we need to see the response closed) ---------------------


class _EndlessStream(httpx.AsyncByteStream):
    """One delta, then silence until closed; records that it was closed."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield frames(chunk({"content": "first"}), done=False)
        await asyncio.Event().wait()

    async def aclose(self) -> None:
        self.closed.set()


def _endless_provider() -> tuple[OpenAIProvider, _EndlessStream]:
    body = _EndlessStream()

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    provider = OpenAIProvider("http://model.test/v1", transport=httpx.MockTransport(handler))
    return provider, body


async def test_closing_the_stream_early_closes_the_response() -> None:
    provider, body = _endless_provider()
    events = provider.stream(HELLO)
    assert await anext(events) == TextDelta("first")
    await events.aclose()
    assert body.closed.is_set()
    await provider.aclose()


async def test_cancelling_the_consumer_closes_the_response() -> None:
    provider, body = _endless_provider()
    seen: list[StreamEvent] = []

    async def consume() -> None:
        async for event in provider.stream(HELLO):
            seen.append(event)

    task = asyncio.create_task(consume())
    while not seen:
        await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(body.closed.wait(), timeout=1.0)
    await provider.aclose()


async def test_redirect_says_which_address_to_use() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(308, headers={"location": "https://api.example/v1/chat/completions"})

    async with OpenAIProvider(
        "http://api.example/v1", transport=httpx.MockTransport(handler)
    ) as provider:
        _, error = await collect_until_error(provider)
    assert isinstance(error, ProviderHTTPError) and error.status == 308
    assert "https://api.example/v1/chat/completions" in str(error)
