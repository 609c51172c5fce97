"""The OpenAI `/chat/completions` wire format: request bodies out, stream frames in.

Kept apart from the conduct of a request — the HTTP client, TLS, retries and
the error messages about them — which is `http_common.StreamingProvider`'s. What is here is pure
translation between our types and the API's JSON, with no I/O: the body a
`Request` becomes, the events each `data:` payload of the answer becomes, and
the models a `/models` listing names. That is also the per-delta hot path, so it
stays flat: one JSON parse, a few dict lookups, one event per delta.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from agent_cli.errors import ProviderError, ProviderHTTPError, ProviderProtocolError
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
    ToolSpec,
    Usage,
)
from agent_cli.providers.http_common import EXCERPT_LIMIT, error_text, parse_json
from agent_cli.providers.images import after_results, followup_text
from agent_cli.providers.message_json import MessageJSON, dumps, join

__all__ = ["EXCERPT_LIMIT", "ChunkDecoder", "encode_chat_request", "error_text"]

DONE_SENTINEL = "[DONE]"
CALL_ID_BYTES = 12  # random bytes in a made-up tool call id
_NO_EVENTS: list[StreamEvent] = []  # shared, never mutated: most frames yield nothing


# -- stream decoding -----------------------------------------------------------


class _PartialCall:
    """A tool call being assembled from fragments that share its `index`."""

    __slots__ = ("id", "index", "name", "parts", "started")

    def __init__(self, index: int, call_id: str) -> None:
        self.index = index
        self.id = call_id
        self.name = ""
        self.parts: list[str] = []
        self.started = False


class ChunkDecoder:
    """Turns the `data:` payloads of one response into stream events.

    Keeps what must outlive a frame: tool calls by index, usage, the finish
    reason, whether [DONE] came, and whether anything was shown yet.
    """

    def __init__(self, where: str, redact: Callable[[str], str]) -> None:
        self._where = where
        self._redact = redact
        self._calls: dict[int, _PartialCall] = {}
        self._last_raw_id = ""
        self.done = False
        self.finish_reason: str | None = None
        self.produced = False
        self.usage: Usage | None = None

    @property
    def complete(self) -> bool:
        """[DONE] came, or at least a finish reason (some servers omit [DONE])."""
        return self.done or self.finish_reason is not None

    def on_data(self, data: str) -> list[StreamEvent]:
        """Events for one SSE data payload (usually exactly one, often none)."""
        if data == DONE_SENTINEL:
            self.done = True
            return _NO_EVENTS
        try:
            chunk = parse_json(data)
        except ValueError:
            if data.strip() == DONE_SENTINEL:  # "[DONE]" with stray whitespace
                self.done = True
                return _NO_EVENTS
            raise self._bad_frame("a frame that is not JSON", data) from None
        if type(chunk) is not dict:
            raise self._bad_frame("a frame that is not a JSON object", data)
        try:
            return self._on_chunk(chunk)
        except (AttributeError, TypeError, KeyError, IndexError) as exc:
            raise self._bad_frame("a frame it could not read", data) from exc

    def finish(self) -> list[StreamEvent]:
        """The closing events: each call whole (in index order), usage, then Finished."""
        events: list[StreamEvent] = []
        for index in sorted(self._calls):
            call = self._calls[index]
            if not call.started:  # never named: still report it so the loop can refuse it
                call.id = call.id or _new_call_id()
                events.append(ToolCallStarted(index, call.id, call.name))
            events.append(ToolCallFinished(index, call.id, call.name, "".join(call.parts)))
        if self.usage is not None:
            events.append(self.usage)
        events.append(Finished(self.finish_reason or "stop"))
        return events

    def _on_chunk(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        error = chunk.get("error")
        if error:
            raise self._stream_error(error)
        usage = chunk.get("usage")
        if usage:
            self.usage = _usage(usage)
        choices = chunk.get("choices")
        if not choices:
            return _NO_EVENTS
        choice = choices[0]
        reason = choice.get("finish_reason")
        if reason:
            self.finish_reason = reason
        delta = choice.get("delta")
        if not delta:
            return _NO_EVENTS
        events: list[StreamEvent] = []
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            events.append(ReasoningDelta(_as_text(reasoning)))
        content = delta.get("content")
        if content:
            events.append(TextDelta(content if type(content) is str else _as_text(content)))
        fragments = delta.get("tool_calls")
        if fragments:
            for fragment in fragments:
                self._on_fragment(fragment, events)
        if events:
            self.produced = True
        return events

    def _on_fragment(self, fragment: dict[str, Any], events: list[StreamEvent]) -> None:
        """Add one tool-call fragment; announce the call once it has a name."""
        call = self._call_for(fragment)
        function = fragment.get("function") or {}
        name = function.get("name")
        if name and not call.name:
            call.name = name
        arguments = function.get("arguments")
        if arguments is not None and type(arguments) is not str:
            arguments = json.dumps(arguments, ensure_ascii=False)  # already parsed by the server
        if not call.started and call.name:
            call.started = True
            call.id = call.id or _new_call_id()
            events.append(ToolCallStarted(call.index, call.id, call.name))
            if call.parts:  # arguments that came before the name
                events.append(ToolCallDelta(call.index, "".join(call.parts)))
        if arguments:
            call.parts.append(arguments)
            if call.started:
                events.append(ToolCallDelta(call.index, arguments))

    def _call_for(self, fragment: dict[str, Any]) -> _PartialCall:
        """The call a fragment belongs to: by `index`, or by `id` when a server omits it."""
        raw_id = fragment.get("id") or ""
        index = fragment.get("index")
        if type(index) is not int:
            same_call = self._calls and (not raw_id or raw_id == self._last_raw_id)
            index = max(self._calls) if same_call else len(self._calls)
        if raw_id:
            self._last_raw_id = raw_id
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _PartialCall(index, raw_id)
        elif raw_id and not call.id:
            call.id = raw_id
        return call

    def _stream_error(self, error: object) -> ProviderError:
        """An `error` object sent inside the stream (llama.cpp, vLLM do this)."""
        message = self._redact(error_text(error) or "no details")
        text = f"The {self._where} reported an error: {message}"
        code = error.get("code") if isinstance(error, dict) else None
        if type(code) is int and code >= 400:
            return ProviderHTTPError(text, code)
        return ProviderError(text)

    def _bad_frame(self, what: str, data: str) -> ProviderProtocolError:
        excerpt = self._redact(data[:EXCERPT_LIMIT])
        return ProviderProtocolError(
            f"The {self._where} sent {what}: {excerpt!r} — check that it is an "
            "OpenAI-compatible API."
        )


# -- request encoding ----------------------------------------------------------


def encode_chat_request(request: Request, cache: MessageJSON | None = None) -> bytes:
    """The JSON body for `/chat/completions`; ASCII-escaped so any string encodes safely.

    With a `cache`, messages the last request had are not encoded again.
    """
    messages = (cache or MessageJSON()).encode(request.messages, _message_json)
    # Tool messages are text only: a tool's images follow the round's results.
    messages = after_results(request.messages, messages, _tool_images_json)
    if request.system:
        messages.insert(0, dumps({"role": "system", "content": request.system}))
    rest: dict[str, Any] = {"stream": True, "stream_options": {"include_usage": True}}
    if request.tools:
        rest["tools"] = [
            {"type": "function", "function": _as_function(tool)} for tool in request.tools
        ]
    # The keys in the order they always had: model, messages, then the rest.
    head = b'{"model":' + dumps(request.model) + b',"messages":['
    return join(head, messages, b"]," + dumps(rest)[1:])


def _as_function(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}


def _message_json(message: Message) -> bytes:
    return dumps(_encode_message(message))


def _encode_message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            # Null, not "", beside tool calls: some servers reject an empty text part.
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    # Servers re-parse arguments; "" is not JSON, "{}" is.
                    "function": {"name": call.name, "arguments": call.arguments or "{}"},
                }
                for call in message.tool_calls
            ],
        }
    if message.images:
        text = [{"type": "text", "text": message.content}] if message.content else []
        return {"role": message.role, "content": text + _image_parts(message)}
    return {"role": message.role, "content": message.content}


def _image_parts(message: Message) -> list[dict[str, Any]]:
    return [{"type": "image_url", "image_url": {"url": i.data_uri()}} for i in message.images]


def _tool_images_json(results: list[Message]) -> bytes:
    """The user message that shows the model what the round's tools returned as images."""
    parts: list[dict[str, Any]] = []
    for result in results:
        parts += [{"type": "text", "text": followup_text(result)}, *_image_parts(result)]
    return dumps({"role": "user", "content": parts})


# -- small helpers ---------------------------------------------------------------


def _as_text(value: object) -> str:
    """Text from a content value that is not a plain string (a list of parts, say)."""
    if isinstance(value, list):
        return "".join(part.get("text") or "" for part in value if isinstance(part, dict))
    return str(value)


def _usage(usage: dict[str, Any]) -> Usage:
    details = usage.get("prompt_tokens_details") or {}
    return Usage(
        int(usage.get("prompt_tokens") or 0),
        int(usage.get("completion_tokens") or 0),
        int(details.get("cached_tokens") or 0),
    )


def _new_call_id() -> str:
    return "call_" + os.urandom(CALL_ID_BYTES).hex()
