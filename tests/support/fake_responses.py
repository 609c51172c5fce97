"""A loopback fake of the OpenAI Responses API that replays scripted answers.

The same server as `fake_openai` (through `fake_anthropic.RoutedFake`),
answering `POST /v1/responses`; the base URL ends in /v1 as OpenAI's does:

    with FakeResponses() as fake:
        fake.add(text("Hello"), http_error(500, "boom"))
        provider = ResponsesProvider(fake.base_url, KEY)
        assert fake.requests[0]["store"] is False

Streams look like OpenAI's: every payload has `type` and `sequence_number`
and sits under an `event:` line; errors use the OpenAI error body.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support.fake_anthropic import RoutedFake
from tests.support.fake_openai import Scripted, _even_pieces, _words, http_error, json_body, raw

__all__ = [
    "FakeResponses",
    "Scripted",
    "events",
    "failed",
    "http_error",
    "json_body",
    "raw",
    "text",
    "tool_calls",
]

ARGUMENT_PIECES = 4  # argument delta fragments per function call
RESPONSE_ID = "resp_fake"
_SEQUENCE = re.compile(rb'"sequence_number": -1')


class FakeResponses(RoutedFake):
    """Responses at `POST /v1/responses`, models at `GET /v1/models`."""

    route = "/v1/responses"
    base_path = "/v1"

    def __enter__(self) -> FakeResponses:
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
    cached: int = 0,
    model: str = "m1",
) -> Scripted:
    """A whole answer: a reasoning summary (if `reasoning`), a message, `response.completed`."""
    parts = [_opening(model)]
    output: list[dict[str, Any]] = []
    if reasoning:
        parts.append(_reasoning(len(output), _words(reasoning)))
        output.append({"type": "reasoning", "id": "rs_0", "summary": []})
    pieces = _words(answer) if chunks is None else _even_pieces(answer, chunks)
    parts.append(_message(len(output), pieces))
    output.append(_message_item(len(output), answer))
    parts.append(_completed(model, usage, cached, output))
    return Scripted(_numbered(b"".join(parts)))


def tool_calls(
    *calls: tuple[str, str, str],
    text: str = "",
    usage: tuple[int, int] = (10, 5),
    model: str = "m1",
) -> Scripted:
    """Calls `(call_id, name, arguments_json)`, each a `function_call` item, arguments in pieces."""
    parts = [_opening(model)]
    output: list[dict[str, Any]] = []
    if text:
        parts.append(_message(0, _words(text)))
        output.append(_message_item(0, text))
    for call_id, name, arguments in calls:
        index = len(output)
        item = {
            "type": "function_call",
            "id": f"fc_{index}",
            "call_id": call_id,
            "name": name,
            "arguments": "",
            "status": "in_progress",
        }
        parts.append(events(_frame("response.output_item.added", output_index=index, item=item)))
        size = max(1, -(-len(arguments) // ARGUMENT_PIECES))
        pieces = [arguments[i : i + size] for i in range(0, len(arguments), size)]
        common = {"item_id": item["id"], "output_index": index}
        parts.append(_deltas("response.function_call_arguments.delta", pieces, common))
        done = {**item, "arguments": arguments, "status": "completed"}
        parts.append(
            events(
                _frame("response.function_call_arguments.done", arguments=arguments, **common),
                _frame("response.output_item.done", output_index=index, item=done),
            )
        )
        output.append(done)
    parts.append(_completed(model, usage, 0, output))
    return Scripted(_numbered(b"".join(parts)))


def failed(code: str, message: str, model: str = "m1") -> bytes:
    """`response.created` then `response.failed` with this error."""
    response = _response(model, "failed") | {"error": {"code": code, "message": message}}
    return _numbered(_opening(model) + events(_frame("response.failed", response=response)))


def frame(kind: str, **fields: Any) -> dict[str, Any]:
    """One payload of this type (for scripting unusual streams with `events`)."""
    return _frame(kind, **fields)


def completed(
    usage: tuple[int, int] = (10, 5), *, status: str = "completed", **extra: Any
) -> bytes:
    """`response.completed` (or `.incomplete` with `status="incomplete"`) with usage."""
    response = _response("m1", status) | {"usage": _usage(usage, 0)} | extra
    return _numbered(events(_frame(f"response.{status}", response=response)))


def _frame(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "sequence_number": -1, **fields}


def _numbered(body: bytes) -> bytes:
    """Give every payload its `sequence_number` in stream order, as the service does."""
    counter = iter(range(1 << 30))
    return _SEQUENCE.sub(lambda _: b'"sequence_number": %d' % next(counter), body)


def _response(model: str, status: str) -> dict[str, Any]:
    return {
        "id": RESPONSE_ID,
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": model,
        "output": [],
        "store": False,
    }


def _opening(model: str) -> bytes:
    response = _response(model, "in_progress")
    return events(
        _frame("response.created", response=response),
        _frame("response.in_progress", response=response),
    )


def _reasoning(index: int, pieces: list[str]) -> bytes:
    item = {"type": "reasoning", "id": f"rs_{index}", "summary": []}
    common = {"item_id": item["id"], "output_index": index, "summary_index": 0}
    return b"".join(
        [
            events(_frame("response.output_item.added", output_index=index, item=item)),
            _deltas("response.reasoning_summary_text.delta", pieces, common),
            events(_frame("response.output_item.done", output_index=index, item=item)),
        ]
    )


def _message_item(index: int, answer: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": answer, "annotations": []}]
    return {"type": "message", "id": f"msg_{index}", "role": "assistant", "content": content}


def _message(index: int, pieces: list[str]) -> bytes:
    item = {**_message_item(index, ""), "content": [], "status": "in_progress"}
    common = {"item_id": item["id"], "output_index": index, "content_index": 0}
    part = {"type": "output_text", "text": "", "annotations": []}
    whole = "".join(pieces)
    return b"".join(
        [
            events(
                _frame("response.output_item.added", output_index=index, item=item),
                _frame("response.content_part.added", part=part, **common),
            ),
            _deltas("response.output_text.delta", pieces, common),
            events(
                _frame("response.output_text.done", text=whole, **common),
                _frame("response.content_part.done", part={**part, "text": whole}, **common),
                _frame(
                    "response.output_item.done",
                    output_index=index,
                    item=_message_item(index, whole),
                ),
            ),
        ]
    )


def _deltas(kind: str, pieces: list[str], common: dict[str, Any]) -> bytes:
    """Many deltas of one kind, rendered from a template (fast for 20,000)."""
    if not pieces:
        return b""
    marker = "\x00"
    template = events(_frame(kind, delta=marker, **common)).decode()
    head, tail = template.split(json.dumps(marker))
    return "".join(f"{head}{json.dumps(piece)}{tail}" for piece in pieces).encode()


def _usage(usage: tuple[int, int], cached: int) -> dict[str, Any]:
    prompt, completion = usage
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }


def _completed(
    model: str, usage: tuple[int, int], cached: int, output: list[dict[str, Any]]
) -> bytes:
    response = _response(model, "completed") | {"output": output, "usage": _usage(usage, cached)}
    return events(_frame("response.completed", response=response))
