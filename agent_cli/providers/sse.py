"""An incremental Server-Sent Events parser (WHATWG HTML, "event stream interpretation").

Bytes arrive in arbitrary pieces from the network; events come out whole. The
parser never loops over bytes in Python: it finds the last line terminator in
each chunk, decodes everything before it in one go and splits on newlines, so
the cost per chunk is a few C-level calls plus a short loop over its lines.
That matters because a long answer is tens of thousands of tiny events.

Decisions worth knowing:

- Line endings LF, CRLF and a lone CR are all accepted, including a CRLF whose
  CR ends one chunk and whose LF starts the next.
- Text is decoded only up to a line terminator, so a UTF-8 character split
  across chunks is always decoded whole. Invalid UTF-8 becomes U+FFFD, as the
  spec asks, rather than failing the stream.
- One byte-order mark at the very start of the stream is dropped.
- `retry:` and unknown fields are ignored (nothing here reconnects).
- At end of stream (`close`), an event that lacks its terminating blank line
  is discarded, as the spec says: a half-received event may be a truncated JSON
  frame, and the caller learns about truncation from the missing `[DONE]`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["DEFAULT_EVENT_TYPE", "SSEEvent", "SSEParser"]

DEFAULT_EVENT_TYPE = "message"
_BOM = "\ufeff"
_DATA_PREFIX = "data:"
_DATA_PREFIX_LEN = len(_DATA_PREFIX)

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event: its type ("message" unless `event:` said otherwise),
    its data (several `data:` lines joined with "\\n") and the last event id seen."""

    event: str
    data: str
    id: str | None = None


def _data_of(event: str, data: str, event_id: str | None) -> str:
    return data


class SSEParser:
    """Feed it byte chunks as they arrive; it returns the events each chunk completes."""

    __slots__ = ("_data", "_event", "_id", "_pending", "_skip_lf", "_started")

    def __init__(self) -> None:
        self._pending = bytearray()  # an incomplete last line, carried to the next chunk
        self._skip_lf = False  # the previous chunk ended in CR: a leading LF belongs to it
        self._started = False  # the BOM check has been done
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Take the next piece of the stream; return the events it completes, in order."""
        return self._feed(chunk, SSEEvent)

    def feed_data(self, chunk: bytes) -> list[str]:
        """Like `feed`, but return only each event's data.

        The fast path for APIs that ignore event names and ids (OpenAI's chat
        completions): building an `SSEEvent` per delta costs about as much as
        everything else the parser does for it.
        """
        return self._feed(chunk, _data_of)

    def _feed(self, chunk: bytes, make: Callable[[str, str, str | None], _T]) -> list[_T]:
        """Split off complete lines and interpret them; `make` builds each dispatched item."""
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == 0x0A:
                chunk = chunk[1:]
        cut = chunk.rfind(b"\n")
        cr = chunk.rfind(b"\r", cut + 1)
        if cr > cut:
            cut = cr
            self._skip_lf = cr == len(chunk) - 1
        if cut < 0:
            self._pending += chunk
            return []
        if self._pending:
            self._pending += chunk[: cut + 1]
            complete = bytes(self._pending)
            self._pending = bytearray(chunk[cut + 1 :])
        else:
            complete = chunk[: cut + 1] if cut + 1 < len(chunk) else chunk
            if cut + 1 < len(chunk):
                self._pending += chunk[cut + 1 :]
        return self._lines(self._decode(complete), make)

    def close(self) -> list[SSEEvent]:
        """End of stream: drop any unterminated line or event (see the module docstring)."""
        self._pending.clear()
        self._data.clear()
        self._event = ""
        self._skip_lf = False
        return []

    def _decode(self, complete: bytes) -> str:
        """Decode whole lines and normalise their terminators to LF."""
        text = complete.decode("utf-8", "replace")
        if not self._started:
            self._started = True
            if text.startswith(_BOM):
                text = text[1:]
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return text

    def _lines(self, text: str, make: Callable[[str, str, str | None], _T]) -> list[_T]:
        """Interpret complete lines; `text` ends with a line terminator."""
        events: list[_T] = []
        data = self._data
        lines = text.split("\n")
        lines.pop()  # the empty string after the final terminator
        for line in lines:
            if line.startswith(_DATA_PREFIX):
                if line[_DATA_PREFIX_LEN : _DATA_PREFIX_LEN + 1] == " ":
                    data.append(line[_DATA_PREFIX_LEN + 1 :])
                else:
                    data.append(line[_DATA_PREFIX_LEN:])
            elif not line:
                if data:
                    events.append(
                        make(self._event or DEFAULT_EVENT_TYPE, "\n".join(data), self._id)
                    )
                    data.clear()
                self._event = ""
            elif line[0] != ":":  # a line starting with a colon is a comment
                self._field(line)
        return events

    def _field(self, line: str) -> None:
        """A field other than the common `data: ...` form."""
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        # "retry" and unknown fields are ignored.
