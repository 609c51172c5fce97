"""A conversation's append-only log, as JSON lines: its records, reading and appending.

Each line is one record. `{"at": N, "item": {...}}` is the item at position N:
it replaces the one there, or (N being how many there are) comes after them.
`{"header": {...}}` is the conversation's other fields and how many items it
has; it commits the records before it. A save appends the items it changed,
then a header, in one write, flushed to disk before the save returns.

A rewind (`/rewind`) appends `{"rewind": {"at": N, "time": T}}`: the items from
position N on leave the conversation for its history (`Conversation.rewound`),
their records staying where they are in the log. A log rewritten whole gives
each earlier rewind as `{"rewound": {"at": N, "time": T, "items": [...]}}`, with
the items it took out, before the conversation's own items.

Reading applies records only up to the last header: a save cut short (a kill,
a full disk) leaves the conversation as the save before it left it, and its
torn last line is never read. A log whose other lines do not read is damaged
(a writer only ever appends whole records after whole records).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, NamedTuple

from agent_cli.engine.items import (
    AssistantItem,
    Conversation,
    Item,
    Rewound,
    item_to_json,
    rewound_to_json,
)

SEPARATORS = (",", ":")
HEADER_START = b'{"header":'
TAIL_BYTES = 16 * 1024  # listing reads this much of a log's end first (a header is ~400)

Fingerprint = tuple[Any, ...]


class FileMark(NamedTuple):
    """What a log file was when this process last wrote it: another writer changes it."""

    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, stat: os.stat_result) -> FileMark:
        return cls(stat.st_ino, stat.st_size, stat.st_mtime_ns)


def item_record(item: Item, at: int) -> bytes:
    text = json.dumps(item_to_json(item), ensure_ascii=False, separators=SEPARATORS)
    return f'{{"at":{at},"item":{text}}}\n'.encode()


def header_record(conversation: Conversation) -> bytes:
    header = {**conversation.header_json(), "items": len(conversation.items)}
    text = json.dumps(header, ensure_ascii=False, separators=SEPARATORS)
    return f'{{"header":{text}}}\n'.encode()


def rewind_record(rewound: Rewound) -> bytes:
    """A rewind as it happens: the items it takes out are in the log already."""
    return _record("rewind", {"at": rewound.at, "time": rewound.time})


def rewound_record(rewound: Rewound) -> bytes:
    """An earlier rewind in a log rewritten whole: with the items it took out."""
    return _record("rewound", rewound_to_json(rewound))


def _record(key: str, value: dict[str, Any]) -> bytes:
    text = json.dumps(value, ensure_ascii=False, separators=SEPARATORS)
    return f'{{"{key}":{text}}}\n'.encode()


def fingerprint(item: Item) -> Fingerprint:
    """Equal exactly when the item's record would be: cheaper than encoding it to compare."""
    values = tuple(vars(item).values())
    if isinstance(item, AssistantItem):  # its one mutable field: copy what the calls are now
        calls = tuple(tuple(vars(call).values()) for call in item.tool_calls)
        return (*values, calls)
    return values


def read_log(data: bytes) -> dict[str, Any]:
    """The conversation as its last complete save left it, in its JSON form.

    Raises ValueError (or KeyError, TypeError) for a log that is damaged or holds
    no complete save.
    """
    *lines, last = data.split(b"\n")
    header: dict[str, Any] | None = None
    items: list[dict[str, Any]] = []
    rewound: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    if last:  # no newline after it: torn, unless it happens to be a whole record
        with contextlib.suppress(ValueError):
            json.loads(last)
            lines.append(last)
    for line in lines:
        if not line:
            continue
        record = json.loads(line)
        if "header" in record:
            for done in pending:
                _apply(done, items, rewound)
            pending = []
            header = dict(record["header"])
        else:
            pending.append(record)
    if header is None:
        raise ValueError("the log holds no complete save")
    count = header.pop("items")
    if count != len(items):
        raise ValueError(f"its last save names {count} items, the log holds {len(items)}")
    return {**header, "items": items, **({"rewound": rewound} if rewound else {})}


def _apply(record: dict[str, Any], items: list[dict[str, Any]], rewound: list[Any]) -> None:
    """One committed record: an item put at its position, a rewind, an earlier rewind."""
    if "rewound" in record:
        rewound.append(record["rewound"])
        return
    if "rewind" in record:
        at = record["rewind"]["at"]
        if not 0 <= at <= len(items):
            raise ValueError(f"a rewind to {at} of {len(items)} items")
        rewound.append({**record["rewind"], "items": items[at:]})
        del items[at:]
        return
    at, item = record["at"], record["item"]
    if at == len(items):
        items.append(item)
    elif 0 <= at < len(items):
        items[at] = item
    else:
        raise ValueError(f"an item at {at} of {len(items)}")


def last_header(path: Path) -> dict[str, Any]:
    """The header of a log's last complete save, read from its end (for listings)."""
    with path.open("rb") as file:
        end = file.seek(0, os.SEEK_END)
        size = TAIL_BYTES
        while True:
            start = max(0, end - size)
            file.seek(start)
            lines = file.read(end - start).split(b"\n")
            if start > 0:
                lines = lines[1:]  # begins inside a line
            for line in reversed(lines):
                if line.startswith(HEADER_START):
                    with contextlib.suppress(ValueError):  # a torn last line
                        header: dict[str, Any] = json.loads(line)["header"]
                        return header
            if start == 0:
                raise ValueError("the log holds no complete save")
            size *= 8  # a save of a long item: its header is further back


def append(path: Path, data: bytes, expected: FileMark) -> FileMark | None:
    """Append one save's records and flush them to disk; the file as it is then.

    On failure (a full disk) the file is cut back to where it was, so what is
    appended next never follows a torn line. None, and nothing written, when the
    file is not as `expected`: another process wrote or removed it.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except FileNotFoundError:
        return None
    try:
        if FileMark.of(os.fstat(fd)) != expected:
            return None
        try:
            view = memoryview(data)
            while view:  # a write may be short (a file-size limit): go on until it fails
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, expected.size)
            raise
        return FileMark.of(os.fstat(fd))
    finally:
        os.close(fd)
