"""A loopback fake of Anthropic's Messages API that replays scripted answers.

The same server as `fake_openai` (its threads, queues, delivery faults and
records), answering `POST /v1/messages` instead of `/v1/chat/completions`:

    with FakeAnthropic(models=["claude-x"]) as fake:
        fake.add(text("Hello"), http_error(529, "Overloaded", retry_after=0.05))
        provider = AnthropicProvider(fake.base_url, KEY)
        assert fake.requests[0]["system"] == "..."

`RoutedFake` is that server with another POST route; `fake_responses` uses it too.
Builders render whole SSE bodies once, so a 20,000-delta answer is one write.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, ClassVar

from tests.support.fake_openai import (
    EMPTY_QUEUE_MESSAGE,
    HOST,
    FakeOpenAI,
    Scripted,
    _even_pieces,
    _Handler,
    _words,
    json_body,
    raw,
)
from tests.support.fake_openai import http_error as _openai_http_error

__all__ = [
    "FakeAnthropic",
    "RoutedFake",
    "Scripted",
    "events",
    "http_error",
    "json_body",
    "raw",
    "stream_error",
    "text",
    "tool_calls",
]

ARGUMENT_PIECES = 4  # input_json_delta fragments per tool call
MESSAGE_ID = "msg_fake"
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class _RoutedHandler(_Handler):
    """fake_openai's handler, serving the scripted queue at the server's own route."""

    def handle(self) -> None:
        # A client that gave up on a stream closes its connection while this thread
        # waits for the next request on it: that is not an error worth a traceback.
        with contextlib.suppress(ConnectionResetError):
            super().handle()

    def do_POST(self) -> None:
        state = self.server.state
        state.paths.append(f"POST {self.path}")
        payload = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") != self.server.route:  # type: ignore[attr-defined]
            self._send(_openai_http_error(404, f"fake server: no route for {self.path}"))
            return
        try:
            body = json.loads(payload)
        except ValueError:
            body = {"_unparsed": payload.decode("utf-8", "replace")}
        with state.lock:
            state.requests.append(body)
            state.request_headers.append({k.lower(): v for k, v in self.headers.items()})
            scripted = state.chat.popleft() if state.chat else None
        self._send(scripted or _openai_http_error(500, EMPTY_QUEUE_MESSAGE))


class RoutedFake(FakeOpenAI):
    """`FakeOpenAI` whose scripted answers are served at `route`, its base URL `base_path`."""

    route: ClassVar[str] = "/v1/chat/completions"
    base_path: ClassVar[str] = "/v1"

    def __init__(self, models: list[str] | None = None) -> None:
        super().__init__(models)
        # Swapped before anyone knows the port, so no request meets the old handler.
        self._server.RequestHandlerClass = _RoutedHandler
        self._server.route = self.route  # type: ignore[attr-defined]
        self.base_url = f"http://{HOST}:{self.port}{self.base_path}"

    def __enter__(self) -> RoutedFake:
        return self


class FakeAnthropic(RoutedFake):
    """Messages at `POST /v1/messages`, models at `GET /v1/models`; base URL without /v1."""

    route = "/v1/messages"
    base_path = ""

    def __enter__(self) -> FakeAnthropic:
        return self


# -- builders --------------------------------------------------------------------------


def events(*frames: dict[str, Any]) -> bytes:
    """SSE bytes for these payloads, each under an `event:` line naming its `type`."""
    return b"".join(
        f"event: {frame['type']}\ndata: {json.dumps(frame)}\n\n".encode() for frame in frames
    )


def text(
    answer: str,
    *,
    chunks: int | None = None,
    reasoning: str = "",
    usage: tuple[int, int] = (10, 5),
    cache: tuple[int, int] = (0, 0),
    stop_reason: str = "end_turn",
    model: str = "m1",
) -> Scripted:
    """A whole answer: a thinking block (if `reasoning`), a text block, stop, usage.

    `usage` is (prompt tokens not from or into the cache, output tokens);
    `cache` is (cache reads, cache writes), reported apart as Anthropic does.
    """
    parts = [_start(usage, cache, model), events({"type": "ping"})]
    block = 0
    if reasoning:
        parts.append(_block(block, {"type": "thinking", "thinking": ""}))
        parts.append(_deltas(block, "thinking_delta", "thinking", _words(reasoning)))
        signature = {"type": "signature_delta", "signature": "c2ln"}
        parts.append(events(_delta_frame(block, signature), _stop(block)))
        block += 1
    pieces = _words(answer) if chunks is None else _even_pieces(answer, chunks)
    parts.append(_block(block, {"type": "text", "text": ""}))
    parts.append(_deltas(block, "text_delta", "text", pieces))
    parts.append(events(_stop(block)))
    parts.append(_ending(stop_reason, usage[1]))
    return Scripted(b"".join(parts))


def tool_calls(
    *calls: tuple[str, str, str],
    text: str = "",
    usage: tuple[int, int] = (10, 5),
    model: str = "m1",
) -> Scripted:
    """Calls `(id, name, arguments_json)`, each a `tool_use` block with its input in pieces."""
    parts = [_start(usage, (0, 0), model)]
    block = 0
    if text:
        parts.append(_block(block, {"type": "text", "text": ""}))
        parts.append(_deltas(block, "text_delta", "text", _words(text)))
        parts.append(events(_stop(block)))
        block += 1
    for call_id, name, arguments in calls:
        start = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        parts.append(_block(block, start))
        size = max(1, -(-len(arguments) // ARGUMENT_PIECES))
        pieces = [arguments[i : i + size] for i in range(0, len(arguments), size)]
        parts.append(_deltas(block, "input_json_delta", "partial_json", pieces or [""]))
        parts.append(events(_stop(block)))
        block += 1
    parts.append(_ending("tool_use", usage[1]))
    return Scripted(b"".join(parts))


def http_error(
    status: int,
    message: str,
    *,
    retry_after: float | None = None,
    body: bytes | None = None,
    content_type: str = "application/json",
) -> Scripted:
    """An error status with Anthropic's `{"type": "error", "error": {type, message}}` body."""
    if body is None:
        error = {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}
        body = json.dumps({"type": "error", "error": error}).encode()
    return _openai_http_error(
        status, message, retry_after=retry_after, body=body, content_type=content_type
    )


def stream_error(error_type: str, message: str) -> bytes:
    """An `error` event as sent inside a stream (an overload mid-answer, say)."""
    return events({"type": "error", "error": {"type": error_type, "message": message}})


def message_start(usage: tuple[int, int] = (10, 5), model: str = "m1") -> bytes:
    return _start(usage, (0, 0), model)


def block_start(index: int, block: dict[str, Any]) -> bytes:
    return _block(index, block)


def delta(index: int, kind: str, key: str, value: str) -> bytes:
    return events(_delta_frame(index, {"type": kind, key: value}))


def ending(stop_reason: str = "end_turn", output_tokens: int = 5) -> bytes:
    """`message_delta` with the stop reason and output usage, then `message_stop`."""
    return _ending(stop_reason, output_tokens)


def _start(usage: tuple[int, int], cache: tuple[int, int], model: str) -> bytes:
    message = {
        "id": MESSAGE_ID,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage[0],
            "cache_read_input_tokens": cache[0],
            "cache_creation_input_tokens": cache[1],
            "output_tokens": 1,
        },
    }
    return events({"type": "message_start", "message": message})


def _block(index: int, block: dict[str, Any]) -> bytes:
    return events({"type": "content_block_start", "index": index, "content_block": block})


def _delta_frame(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _deltas(index: int, kind: str, key: str, pieces: list[str]) -> bytes:
    """Many deltas of one kind, rendered from a template (fast for 20,000)."""
    if not pieces:
        return b""
    marker = "\x00"
    template = events(_delta_frame(index, {"type": kind, key: marker})).decode()
    head, tail = template.split(json.dumps(marker))
    return "".join(f"{head}{json.dumps(piece)}{tail}" for piece in pieces).encode()


def _ending(stop_reason: str, output_tokens: int) -> bytes:
    return events(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    )
