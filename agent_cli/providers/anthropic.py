"""Anthropic Messages (`POST /v1/messages`, streamed as SSE; SPEC §5).

The loop must not be able to tell this provider from the OpenAI one, so the
events it yields are exactly those `openai.py` yields for the same answer:

- tool calls are numbered 0, 1, ... in the order they start (Anthropic numbers
  content blocks, text and thinking included), and each call's whole
  arguments come at the end, in order, before `Usage` and `Finished`;
- finish reasons use OpenAI's words (`end_turn` → "stop", `tool_use` →
  "tool_calls", `max_tokens` → "length"), which is what the loop and the
  front ends already know;
- `Usage.input_tokens` counts the whole prompt, cached parts included, as
  OpenAI's `prompt_tokens` does (Anthropic reports cache reads and writes
  apart from `input_tokens`); `cached_tokens` is the cache reads.

The request side folds our flat message list into Anthropic's alternating
turns: tool results are `tool_result` blocks in a user turn, and consecutive
turns of one role are merged (the API rejects two user turns in a row).

The conduct of the request — client, retries (529 "overloaded" included),
error messages — is `http_common.StreamingProvider`'s.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from typing import Any, ClassVar

import httpx

from agent_cli.errors import ContextTooLong, ProviderError, ProviderHTTPError, ProviderProtocolError
from agent_cli.providers.base import (
    Finished,
    Message,
    ReasoningDelta,
    Request,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from agent_cli.providers.http_common import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_READ_TIMEOUT,
    EXCERPT_LIMIT,
    PendingCall,
    StreamingProvider,
    error_text,
    is_context_refusal,
    parse_json,
)
from agent_cli.providers.message_json import MessageJSON, dumps, join
from agent_cli.providers.retry import RetryPolicy

__all__ = ["ANTHROPIC_VERSION", "DEFAULT_MAX_TOKENS", "AnthropicProvider", "encode_messages"]

ANTHROPIC_VERSION = "2023-06-01"  # the API version every request names
# The API requires a cap on the answer. Current models accept this; Claude 3 Haiku and
# Opus stop at 4096 (pass `max_tokens=4096` for those).
DEFAULT_MAX_TOKENS = 8192
CALL_ID_BYTES = 12  # random bytes in a made-up tool call id
_NO_EVENTS: list[StreamEvent] = []  # shared, never mutated: most frames yield nothing

# Anthropic's stop reasons in OpenAI's words (others pass through unchanged).
_FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
# The HTTP status each error type of an in-stream `error` event stands for (retry by status).
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class AnthropicProvider(StreamingProvider):
    """A `Provider` for Anthropic's Messages API (and services that copy it).

    `base_url` is the service root, like https://api.anthropic.com; a trailing
    `/v1` is accepted too, since people copy it from other providers' settings.
    """

    kind = "anthropic"
    stream_path = "/v1/messages"
    models_path = "/v1/models?limit=1000"  # the largest page: every model in one answer
    api_name = "the Anthropic Messages API"
    base_url_hint = "check the base URL (like https://api.anthropic.com)"
    fixed_headers: ClassVar[dict[str, str]] = {"anthropic-version": ANTHROPIC_VERSION}

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        name: str = "anthropic",
        headers: dict[str, str] | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        super().__init__(
            base_url.strip().rstrip("/").removesuffix("/v1"),
            api_key,
            name=name,
            headers=headers,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            retry=retry,
            transport=transport,
        )
        self.max_tokens = max_tokens

    def _auth_headers(self, api_key: str) -> dict[str, str]:
        return {"x-api-key": api_key}

    @functools.cached_property
    def _messages(self) -> MessageJSON:
        """The last request's messages' JSON: a round encodes only its new ones."""
        return MessageJSON()

    def _encode(self, request: Request) -> bytes:
        return encode_messages(request, self.max_tokens, self._messages)

    def _decoder(self) -> MessagesDecoder:
        return MessagesDecoder(self._where, self._redact)


# -- stream decoding -------------------------------------------------------------------


class MessagesDecoder:
    """Turns the SSE data payloads of one Messages answer into stream events.

    Every payload names its own `type`, so SSE event names are not needed. The
    common case — a `content_block_delta` with a `text_delta` — is tested first.
    """

    def __init__(self, where: str, redact: Callable[[str], str]) -> None:
        self._where = where
        self._redact = redact
        self._blocks: dict[int, PendingCall] = {}  # by content block index
        self._calls: list[PendingCall] = []  # by call number
        self._usage: dict[str, int] = {}
        self.done = False
        self.finish_reason: str | None = None
        self.produced = False

    @property
    def complete(self) -> bool:
        """`message_stop` came, or at least the stop reason (the answer is whole)."""
        return self.done or self.finish_reason is not None

    def on_data(self, data: str) -> list[StreamEvent]:
        """Events for one SSE data payload (usually exactly one, often none)."""
        try:
            frame = parse_json(data)
        except ValueError:
            raise self._bad_frame("a frame that is not JSON", data) from None
        if type(frame) is not dict:
            raise self._bad_frame("a frame that is not a JSON object", data)
        try:
            if frame["type"] == "content_block_delta":
                delta = frame["delta"]
                kind = delta["type"]
                if kind == "text_delta":
                    text = delta["text"]
                    if not text:
                        return _NO_EVENTS
                    self.produced = True
                    return [TextDelta(text)]
                return self._on_delta(kind, delta, frame)
            return self._on_frame(frame)
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
            raise self._bad_frame("a frame it could not read", data) from exc

    def finish(self) -> list[StreamEvent]:
        """The closing events: each call whole (in order), usage, then Finished."""
        events: list[StreamEvent] = [
            ToolCallFinished(call.index, call.id, call.name, "".join(call.parts))
            for call in self._calls
        ]
        if self._usage:
            usage = self._usage
            cached = usage.get("cache_read_input_tokens", 0)
            prompt = usage.get("input_tokens", 0) + cached
            prompt += usage.get("cache_creation_input_tokens", 0)
            events.append(Usage(prompt, usage.get("output_tokens", 0), cached))
        events.append(Finished(self.finish_reason or "stop"))
        return events

    def _on_delta(
        self, kind: str, delta: dict[str, Any], frame: dict[str, Any]
    ) -> list[StreamEvent]:
        if kind == "input_json_delta":
            call = self._blocks.get(frame.get("index", -1))
            if call is None and "index" not in frame and self._calls:
                call = self._calls[-1]  # a server that leaves the block index out
            fragment = delta.get("partial_json") or ""
            if call is None or not fragment:
                return _NO_EVENTS
            call.parts.append(fragment)
            return [ToolCallDelta(call.index, fragment)]
        if kind == "thinking_delta":
            thinking = delta.get("thinking")
            if not thinking:
                return _NO_EVENTS
            self.produced = True
            return [ReasoningDelta(thinking)]
        return _NO_EVENTS  # signature_delta, citations_delta, kinds yet to come

    def _on_frame(self, frame: dict[str, Any]) -> list[StreamEvent]:
        kind = frame["type"]
        if kind == "content_block_start":
            return self._on_block_start(frame.get("index", -1), frame["content_block"])
        if kind == "message_start":
            self._add_usage(frame["message"].get("usage"))
        elif kind == "message_delta":
            reason = (frame.get("delta") or {}).get("stop_reason")
            if reason:
                self.finish_reason = _FINISH_REASONS.get(reason, reason)
            self._add_usage(frame.get("usage"))
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            raise self._stream_error(frame.get("error"))
        return _NO_EVENTS  # ping, content_block_stop, and kinds yet to come

    def _on_block_start(self, index: int, block: dict[str, Any]) -> list[StreamEvent]:
        kind = block["type"]
        if kind == "tool_use":
            call_id = block.get("id") or "call_" + os.urandom(CALL_ID_BYTES).hex()
            call = PendingCall(len(self._calls), call_id, block.get("name") or "")
            self._calls.append(call)
            self._blocks[index] = call
            self.produced = True
            events: list[StreamEvent] = [ToolCallStarted(call.index, call.id, call.name)]
            given = block.get("input")
            if given:  # arguments that came whole (Anthropic itself sends {} and deltas)
                text = given if type(given) is str else json.dumps(given, ensure_ascii=False)
                call.parts.append(text)
                events.append(ToolCallDelta(call.index, text))
            return events
        said = block.get("text") if kind == "text" else None
        if kind == "thinking":
            thinking = block.get("thinking")
            if thinking:
                self.produced = True
                return [ReasoningDelta(thinking)]
        elif said:
            self.produced = True
            return [TextDelta(said)]
        return _NO_EVENTS

    def _add_usage(self, usage: object) -> None:
        """Usage counts are running totals: a later frame's value replaces an earlier one."""
        if isinstance(usage, dict):
            for key, value in usage.items():
                if type(value) is int:
                    self._usage[key] = value

    def _stream_error(self, error: object) -> ProviderError:
        """An `error` event inside the stream (an overload, most often)."""
        message = self._redact(error_text(error) or "no details")
        text = f"The {self._where} reported an error: {message}"
        kind = error.get("type") if isinstance(error, dict) else None
        status = _ERROR_STATUS.get(kind) if isinstance(kind, str) else None
        if status is None:
            return ProviderError(text)
        if is_context_refusal(status, message.encode()):
            return ContextTooLong(text, status)
        return ProviderHTTPError(text, status)

    def _bad_frame(self, what: str, data: str) -> ProviderProtocolError:
        excerpt = self._redact(data[:EXCERPT_LIMIT])
        return ProviderProtocolError(
            f"The {self._where} sent {what}: {excerpt!r} — check that it speaks the "
            "Anthropic Messages API."
        )


# -- request encoding --------------------------------------------------------------------


def encode_messages(
    request: Request, max_tokens: int = DEFAULT_MAX_TOKENS, cache: MessageJSON | None = None
) -> bytes:
    """The JSON body for `/v1/messages`; ASCII-escaped so any string encodes safely.

    With a `cache`, messages the last request had are not encoded again.
    """
    head: dict[str, Any] = {"model": request.model, "max_tokens": max_tokens, "stream": True}
    if request.system:
        head["system"] = request.system
    tail = b"]"
    if request.tools:
        tools = [
            {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
            for tool in request.tools
        ]
        tail += b',"tools":' + dumps(tools)
    blocks = (cache or MessageJSON()).encode(request.messages, _blocks_json)
    turns = _turns(request.messages, blocks)
    return join(dumps(head)[:-1] + b',"messages":[', turns, tail + b"}")


def _turns(messages: tuple[Message, ...], blocks: list[bytes]) -> list[bytes]:
    """Alternating user/assistant turns of content blocks; same-role neighbours merged.

    Results of one round's calls become one user turn, and a user message
    sent after them joins that turn (after the results, where the API wants them).
    """
    turns: list[bytes] = []
    role = b""
    content: list[bytes] = []
    for message, data in zip(messages, blocks, strict=True):
        if not data:  # the API refuses empty turns and empty text blocks
            continue
        this = b"assistant" if message.role == "assistant" else b"user"
        if this != role and content:
            turns.append(join(b'{"role":"' + role + b'","content":[', content, b"]}"))
            content = []
        role = this
        content.append(data)
    if content:
        turns.append(join(b'{"role":"' + role + b'","content":[', content, b"]}"))
    return turns


def _blocks_json(message: Message) -> bytes:
    """The content blocks of one message, as JSON (b"" when it has none)."""
    return b",".join(dumps(block) for block in _blocks(message))


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        content: str | list[dict[str, Any]] = message.content
        if message.images:  # a result's images go inside its block
            text = [{"type": "text", "text": message.content}] if message.content else []
            content = text + _image_blocks(message)
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": content,
                "is_error": message.is_error,
            }
        ]
    blocks: list[dict[str, Any]] = _image_blocks(message)  # before the text, as advised
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": _input(call.arguments)}
        )
    return blocks


def _image_blocks(message: Message) -> list[dict[str, Any]]:
    return [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": image.media_type, "data": image.base64()},
        }
        for image in message.images
    ]


def _input(arguments: str) -> dict[str, Any]:
    """A call's arguments as the object the API wants; `{}` when they are not one
    (a call the model wrote badly was refused, and its record must still be sendable)."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
