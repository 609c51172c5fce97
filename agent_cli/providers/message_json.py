"""Each message's JSON, kept from one request to the next.

Every round sends every earlier message again, and encoding them all each
time made a round's cost grow with the conversation. A provider keeps the
JSON of the messages of its last request, by value — a message is immutable,
so an equal message encodes the same, and a changed one (a result shortened)
is another message — and encodes only the others.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from agent_cli.providers.base import Message

_ENCODER = json.JSONEncoder(separators=(",", ":"))  # one, not one a call as json.dumps makes


def dumps(value: Any) -> bytes:
    """Compact JSON, ASCII-escaped so any string encodes safely."""
    return _ENCODER.encode(value).encode("ascii")


def join(head: bytes, parts: list[bytes], tail: bytes) -> bytes:
    """`head + b",".join(parts) + tail`, copying the long middle once, not twice."""
    if not parts:
        return head + tail
    parts[0] = head + parts[0]
    parts[-1] += tail  # (the same part when there is one)
    return b",".join(parts)


class MessageJSON:
    """The JSON of the last request's messages; one per provider."""

    def __init__(self) -> None:
        self._last: dict[Message, bytes] = {}

    def encode(
        self, messages: Iterable[Message], encode: Callable[[Message], bytes]
    ) -> list[bytes]:
        """Each message's JSON, from `encode` for those the last request did not have."""
        last, kept = self._last, {}
        encoded = []
        for message in messages:
            data = last.get(message)
            if data is None:
                data = encode(message)
            kept[message] = data
            encoded.append(data)
        self._last = kept  # only the last request's: what the next one sends again
        return encoded
