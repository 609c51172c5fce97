"""OpenAI Responses API (`POST /responses`, streamed as SSE), as OpenAI and vLLM serve it.

The loop must not be able to tell this provider from the chat-completions
one, so the events are exactly those `openai.py` yields for the same answer:

- function calls are numbered 0, 1, ... in the order their output items are
  added (the API numbers output items, messages and reasoning included), and
  each call's whole arguments come at the end, in order, before `Usage` and
  `Finished`;
- finish reasons use chat-completions words: "stop", "tool_calls" (an answer
  that called functions), "length" (`max_output_tokens`), "content_filter";
- the call id the loop sees is `call_id`, the one `function_call_output`
  must name, not the output item's own `id`.

Requests are sent with `store: false`: the conversation is ours and is sent
whole every time, so nothing needs to (or should) be kept by the service.
The conduct of the request is `http_common.StreamingProvider`'s.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from typing import Any

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
    EXCERPT_LIMIT,
    PendingCall,
    StreamingProvider,
    error_text,
    parse_json,
)
from agent_cli.providers.images import after_results, followup_text
from agent_cli.providers.message_json import MessageJSON, dumps, join

__all__ = ["ResponsesDecoder", "ResponsesProvider", "encode_responses_request"]

CALL_ID_BYTES = 12  # random bytes in a made-up call id
_NO_EVENTS: list[StreamEvent] = []  # shared, never mutated: most frames yield nothing
_REASONING_DELTAS = frozenset(
    {"response.reasoning_summary_text.delta", "response.reasoning_text.delta"}
)
_INCOMPLETE_REASONS = {"max_output_tokens": "length", "content_filter": "content_filter"}
# The HTTP status an error code inside the stream stands for (retry by status).
_ERROR_STATUS = {
    "server_error": 500,
    "rate_limit_exceeded": 429,
    "context_length_exceeded": 400,
    "invalid_prompt": 400,
    "invalid_request_error": 400,
}


class ResponsesProvider(StreamingProvider):
    """A `Provider` for the Responses API; `base_url` like https://api.openai.com/v1."""

    kind = "openai-responses"
    stream_path = "/responses"
    models_path = "/models"
    api_name = "the OpenAI Responses API"
    base_url_hint = "check the base URL (it usually ends in /v1)"

    @functools.cached_property
    def _messages(self) -> MessageJSON:
        """The last request's messages' JSON: a round encodes only its new ones."""
        return MessageJSON()

    def _encode(self, request: Request) -> bytes:
        return encode_responses_request(request, self._messages)

    def _decoder(self) -> ResponsesDecoder:
        return ResponsesDecoder(self._where, self._redact)


# -- stream decoding -------------------------------------------------------------------


class ResponsesDecoder:
    """Turns the SSE data payloads of one Responses answer into stream events.

    Every payload names its own `type`; text deltas, the common case, are tested first.
    """

    def __init__(self, where: str, redact: Callable[[str], str]) -> None:
        self._where = where
        self._redact = redact
        self._by_output: dict[int, PendingCall] = {}  # by output_index
        self._by_item: dict[str, PendingCall] = {}  # by the output item's id
        self._calls: list[PendingCall] = []  # by call number
        self._usage: Usage | None = None
        self.done = False
        self.finish_reason: str | None = None
        self.produced = False

    @property
    def complete(self) -> bool:
        return self.done or self.finish_reason is not None

    def on_data(self, data: str) -> list[StreamEvent]:
        """Events for one SSE data payload (usually exactly one, often none)."""
        try:
            frame = parse_json(data)
        except ValueError:
            if data.strip() == "[DONE]":  # some servers end this API's streams that way too
                return _NO_EVENTS
            raise self._bad_frame("a frame that is not JSON", data) from None
        if type(frame) is not dict:
            raise self._bad_frame("a frame that is not a JSON object", data)
        try:
            kind = frame["type"]
            if kind == "response.output_text.delta":
                text = frame["delta"]
                if not text:
                    return _NO_EVENTS
                self.produced = True
                return [TextDelta(text)]
            if kind == "response.function_call_arguments.delta":
                call = self._call_of(frame)
                fragment = frame["delta"]
                if call is None or not fragment:
                    return _NO_EVENTS
                call.parts.append(fragment)
                return [ToolCallDelta(call.index, fragment)]
            if kind in _REASONING_DELTAS:
                text = frame["delta"]
                if not text:
                    return _NO_EVENTS
                self.produced = True
                return [ReasoningDelta(text)]
            return self._on_frame(kind, frame)
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
            raise self._bad_frame("a frame it could not read", data) from exc

    def finish(self) -> list[StreamEvent]:
        """The closing events: each call whole (in order), usage, then Finished."""
        events: list[StreamEvent] = [
            ToolCallFinished(call.index, call.id, call.name, "".join(call.parts))
            for call in self._calls
        ]
        if self._usage is not None:
            events.append(self._usage)
        events.append(Finished(self.finish_reason or "stop"))
        return events

    def _on_frame(self, kind: str, frame: dict[str, Any]) -> list[StreamEvent]:
        if kind == "response.output_item.added":
            item = frame["item"]
            if item.get("type") == "function_call":
                return self._start(frame.get("output_index"), item)
        elif kind == "response.function_call_arguments.done":
            call = self._call_of(frame)
            if call is not None:
                return self._whole(call, frame.get("arguments"))
        elif kind == "response.output_item.done":
            item = frame["item"]
            if item.get("type") == "function_call":
                call = self._call_of(frame) or self._by_item.get(item.get("id") or "")
                events = [] if call is not None else self._start(frame.get("output_index"), item)
                call = call or self._calls[-1]
                return events + self._whole(call, item.get("arguments"))
        elif kind == "response.refusal.delta":
            text = frame.get("delta")
            if text:
                self.produced = True
                return [TextDelta(text)]
        elif kind in ("response.completed", "response.incomplete"):
            self._end(frame["response"])
        elif kind == "response.failed":
            raise self._stream_error((frame.get("response") or {}).get("error"))
        elif kind == "error":
            raise self._stream_error(frame.get("error") or frame)
        return _NO_EVENTS  # created, in_progress, content parts, text done, and the like

    def _start(self, output_index: object, item: dict[str, Any]) -> list[StreamEvent]:
        call_id = item.get("call_id") or item.get("id") or "call_" + os.urandom(CALL_ID_BYTES).hex()
        call = PendingCall(len(self._calls), call_id, item.get("name") or "")
        self._calls.append(call)
        if type(output_index) is int:
            self._by_output[output_index] = call
        if item.get("id"):
            self._by_item[item["id"]] = call
        self.produced = True
        events: list[StreamEvent] = [ToolCallStarted(call.index, call.id, call.name)]
        return events + self._whole(call, item.get("arguments"))

    def _whole(self, call: PendingCall, arguments: object) -> list[StreamEvent]:
        """Arguments given whole (in `.done` or by servers that send no deltas): used only
        if no fragment came, so a call cut short keeps what was actually written."""
        if call.parts or not arguments:
            return _NO_EVENTS
        text = arguments if type(arguments) is str else json.dumps(arguments, ensure_ascii=False)
        call.parts.append(text)
        return [ToolCallDelta(call.index, text)]

    def _call_of(self, frame: dict[str, Any]) -> PendingCall | None:
        call = self._by_output.get(frame.get("output_index"))  # type: ignore[arg-type]
        if call is None:
            call = self._by_item.get(frame.get("item_id") or "")
        return call

    def _end(self, response: dict[str, Any]) -> None:
        self.done = True
        usage = response.get("usage")
        if isinstance(usage, dict):
            details = usage.get("input_tokens_details") or {}
            self._usage = Usage(
                int(usage.get("input_tokens") or 0),
                int(usage.get("output_tokens") or 0),
                int(details.get("cached_tokens") or 0),
            )
        reason = (response.get("incomplete_details") or {}).get("reason")
        if response.get("status") == "incomplete" and reason:
            self.finish_reason = _INCOMPLETE_REASONS.get(reason, reason)
        else:
            self.finish_reason = "tool_calls" if self._calls else "stop"

    def _stream_error(self, error: object) -> ProviderError:
        """`response.failed` or an `error` event: retried (before output) by what it means."""
        message = self._redact(error_text(error) or "no details")
        text = f"The {self._where} reported an error: {message}"
        code = error.get("code") if isinstance(error, dict) else None
        status = code if type(code) is int and code >= 400 else None
        if isinstance(code, str):
            status = int(code) if code.isdigit() else _ERROR_STATUS.get(code)
        if status is None:
            return ProviderError(text)
        if code == "context_length_exceeded":
            return ContextTooLong(text, status)
        return ProviderHTTPError(text, status)

    def _bad_frame(self, what: str, data: str) -> ProviderProtocolError:
        excerpt = self._redact(data[:EXCERPT_LIMIT])
        return ProviderProtocolError(
            f"The {self._where} sent {what}: {excerpt!r} — check that it speaks the "
            "OpenAI Responses API."
        )


# -- request encoding --------------------------------------------------------------------


def encode_responses_request(request: Request, cache: MessageJSON | None = None) -> bytes:
    """The JSON body for `/responses`; ASCII-escaped so any string encodes safely.

    With a `cache`, messages the last request had are not encoded again.
    """
    head: dict[str, Any] = {"model": request.model, "stream": True, "store": False}
    if request.system:
        head["instructions"] = request.system
    tail = b"]"
    if request.tools:
        tools = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            }
            for tool in request.tools
        ]
        tail += b',"tools":' + dumps(tools)
    items = (cache or MessageJSON()).encode(request.messages, _message_json)
    # A call's output is text here: a tool's images follow the round's outputs.
    items = after_results(request.messages, items, _tool_images_json)
    return join(dumps(head)[:-1] + b',"input":[', items, tail + b"}")


def _message_json(message: Message) -> bytes:
    """The input items of one message, as JSON (never none)."""
    return b",".join(dumps(item) for item in _items(message))


def _items(message: Message) -> list[dict[str, Any]]:
    """The input items one message becomes: a message, and/or one item per call."""
    if message.role == "tool":
        return [
            {
                "type": "function_call_output",
                "call_id": message.tool_call_id,
                "output": message.content,
            }
        ]
    items: list[dict[str, Any]] = []
    if message.images:
        text = [{"type": "input_text", "text": message.content}] if message.content else []
        items.append({"role": message.role, "content": text + _image_parts(message)})
    elif message.content or not message.tool_calls:
        items.append({"role": message.role, "content": message.content})
    for call in message.tool_calls:
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                # Servers re-parse arguments; "" is not JSON, "{}" is.
                "arguments": call.arguments or "{}",
            }
        )
    return items


def _image_parts(message: Message) -> list[dict[str, Any]]:
    return [{"type": "input_image", "image_url": image.data_uri()} for image in message.images]


def _tool_images_json(results: list[Message]) -> bytes:
    """The user message that shows the model what the round's tools returned as images."""
    parts: list[dict[str, Any]] = []
    for result in results:
        parts += [{"type": "input_text", "text": followup_text(result)}, *_image_parts(result)]
    return dumps({"role": "user", "content": parts})
