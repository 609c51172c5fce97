"""Processes in their own group, and their output kept within a cap.

Shared by the foreground shell tool, background commands and hooks: a command
runs in its own session (so its own process group) and a stop or timeout ends
the *whole group*, SIGTERM first and SIGKILL after a grace period. Output is
kept as head and tail within a cap, counted in between, so a chatty command
cannot fill memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import time
from typing import Any

KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL for a process group."""
READ_CHUNK = 64 * 1024
_POLL = 0.05
# A terminal's escape sequences (colours, titles) and other control characters: a live
# view shows the text, never sends a command's sequences on to the person's terminal.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, links, the clipboard
    r"|\x1b[ -/]*[0-~]?"  # the other escapes (character sets and the like)
    r"|[\x00-\x08\x0b-\x1f\x7f]"
)


def strip_escapes(text: str) -> str:
    """`text` without escape sequences or control characters; tabs and newlines kept."""
    return _ESCAPES.sub("", text)


# ------------------------------------------------------------------ output


def _utf8_head(data: bytes) -> bytes:
    """`data` without a UTF-8 character cut off at its end."""
    for back in range(1, min(4, len(data)) + 1):
        lead = data[-back]
        if lead & 0xC0 == 0x80:
            continue  # a continuation byte: the character started earlier
        size = 2 if 0xC0 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if lead >= 0xF0 else 1
        return data[:-back] if size > back else data
    return data


def _utf8_tail(data: bytes) -> bytes:
    """`data` without the continuation bytes of a character cut off at its start."""
    skip = 0
    while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
        skip += 1
    return data[skip:]


class Output:
    """The first and last bytes of a stream, and how many came in between."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > 2 * self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    def recent(self, size: int = 4096) -> str:
        """About the last `size` bytes that came, for a live view of the output."""
        recent = bytes(self.tail[-size:])
        if len(recent) < size and self.total == len(self.head) + len(self.tail):
            recent = bytes(self.head[len(self.head) - (size - len(recent)) :]) + recent
        return _utf8_tail(recent).decode("utf-8", "replace")

    def text(self) -> str:
        tail = bytes(self.tail[-self.tail_limit :]) if self.tail_limit else b""
        cut = self.total - len(self.head) - len(tail)
        if cut <= 0:
            return (bytes(self.head) + tail).decode("utf-8", "replace")
        head, tail = _utf8_head(bytes(self.head)), _utf8_tail(tail)
        cut = self.total - len(head) - len(tail)
        note = f"\n[... {cut} bytes of output cut here ...]\n"
        return head.decode("utf-8", "replace") + note + tail.decode("utf-8", "replace")


def last_lines(text: str, count: int, width: int = 200) -> str:
    """The last `count` non-blank lines of `text`, each as a terminal last showed it (after
    its last carriage return: a progress bar's latest state) and cut at `width`."""
    shown: list[str] = []
    for line in reversed(text.split("\n")):
        line = _ESCAPES.sub("", line.rstrip("\r").rsplit("\r", 1)[-1]).rstrip()
        if line:
            shown.append(line if len(line) <= width else line[: width - 1] + "…")
            if len(shown) == count:
                break
    return "\n".join(reversed(shown))


async def pump(stream: asyncio.StreamReader, output: Output) -> None:
    while chunk := await stream.read(READ_CHUNK):
        output.feed(chunk)


# ------------------------------------------------------------------ process groups


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies do not count: an init that
    does not reap would otherwise keep a killed group "alive" forever)."""
    if not os.path.isdir("/proc/self"):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


async def _wait_group(pgid: int, seconds: float) -> bool:
    """Wait up to `seconds` for the group to end; True if it did."""
    deadline = time.monotonic() + seconds
    while group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_POLL)
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def kill_group(pgid: int) -> None:
    """SIGTERM the group, SIGKILL whatever is left after the grace period."""
    _signal_group(pgid, signal.SIGTERM)
    try:
        if await _wait_group(pgid, KILL_GRACE):
            return
    except asyncio.CancelledError:
        _signal_group(pgid, signal.SIGKILL)
        raise
    _signal_group(pgid, signal.SIGKILL)
    await _wait_group(pgid, 1.0)


async def start_in_group(*argv: str, **options: Any) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec` in a new session (so its own process group), that
    a stop while it starts cannot leave half done: asyncio alone would kill only the
    leader, and what it had already started would go on. The start is let finish, then
    the whole group is ended."""
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(*argv, start_new_session=True, **options)
    )
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        with contextlib.suppress(OSError):
            started = await starting
            await kill_group(started.pid)
            await started.wait()
        raise
