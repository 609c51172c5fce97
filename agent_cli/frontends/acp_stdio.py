"""stdin and stdout as the asyncio streams `agent acp` speaks ACP over.

stdout carries nothing but the protocol: its descriptor is duplicated for
the connection and descriptor 1 is then pointed at stderr, so a stray print
(ours, a library's) lands on stderr instead of corrupting the stream.

Editors connect pipes, which asyncio watches directly. Anything else — a
file (`agent acp < requests.jsonl > replies.jsonl`), a terminal, /dev/null,
which epoll refuses — is read by a thread and written with plain blocking
writes, so the server works the same, just without the event loop's pipe
flow control.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from asyncio.streams import FlowControlMixin
from typing import Any, BinaryIO

BUFFER_LIMIT = 50 * 1024 * 1024
"""Longest line read from the client (a prompt with embedded files can be big)."""


async def protocol_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The client's messages (stdin) and the channel to it (a copy of stdout)."""
    sys.stdout.flush()
    channel = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=BUFFER_LIMIT)
    if _is_pipe(sys.stdin.fileno()):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    else:
        _feed_from_thread(loop, reader, sys.stdin.buffer)
    protocol = FlowControlMixin()
    transport: Any
    if _is_pipe(channel.fileno()):
        transport, _ = await loop.connect_write_pipe(lambda: protocol, channel)
    else:
        transport = _BlockingTransport(channel)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def _is_pipe(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _feed_from_thread(
    loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, source: BinaryIO
) -> None:
    def pump() -> None:
        try:
            while line := source.readline():
                loop.call_soon_threadsafe(reader.feed_data, line)
        except (OSError, ValueError):
            pass  # stdin went away: that is the end of the conversation, as EOF is
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="acp-stdin", daemon=True).start()


class _BlockingTransport(asyncio.WriteTransport):
    """Writes each message at once to a channel asyncio cannot watch (a file, a terminal)."""

    def __init__(self, channel: BinaryIO) -> None:
        super().__init__()
        self._channel = channel
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view and not self._closing:
            view = view[self._channel.write(view) or 0 :]

    def can_write_eof(self) -> bool:
        return False

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def abort(self) -> None:
        self._closing = True
