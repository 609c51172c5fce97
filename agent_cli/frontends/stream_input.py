"""`agent run --input-format stream-json`: messages as JSON lines on stdin (issue 16).

Each line is a message, `{"type": "user", "text": "..."}` (Claude Code's shape,
`{"type": "user", "message": {"role": "user", "content": ...}}`, is read too). The
first starts a run; one that comes while a run goes is steered into it (the model
reads it with its next request); one that comes when it has ended starts the next.
The run ends when stdin has ended and the last run has finished. A line that is not
a message is said (a notice) and skipped: it never ends the conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, BinaryIO

from agent_cli.engine.backend import RunResult
from agent_cli.engine.session import Session

Said = Callable[[str], None]


def message_text(line: str) -> str:
    """The message a line carries; ValueError saying what is wrong with it otherwise."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as e:
        raise ValueError(f"it is not JSON ({e.msg})") from e
    if not isinstance(data, dict) or data.get("type") != "user":
        raise ValueError('it is not a message: {"type": "user", "text": "..."}')
    text = data.get("text")
    message = data.get("message")
    if text is None and isinstance(message, dict):
        text = _content_text(message.get("content"))
    if not isinstance(text, str) or not text.strip():
        raise ValueError('its "text" is missing or empty')
    return text


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str)) or None
    return None


async def stdin_messages(stream: BinaryIO, said: Said) -> AsyncIterator[str]:
    """The messages of `stream`'s lines, as they come; bad lines are said, not yielded.

    A daemon thread reads (a blocking read the program need not wait for at its end).
    """
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[bytes | None] = asyncio.Queue()

    def read() -> None:
        try:
            for raw in stream:
                loop.call_soon_threadsafe(lines.put_nowait, raw)
        finally:
            loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=read, name="stdin-messages", daemon=True).start()
    number = 0
    while (raw := await lines.get()) is not None:
        number += 1
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            continue
        try:
            yield message_text(line)
        except ValueError as e:
            said(f"stdin line {number} was skipped: {e}.")


async def converse(session: Session, first: str, messages: AsyncIterator[str]) -> RunResult | None:
    """Send `first` (if any) and every message as it comes, steering while a run goes;
    the last run's result once the messages have ended and it has finished."""
    running: asyncio.Task[RunResult] | None = None
    result: RunResult | None = None
    if first:
        running = asyncio.ensure_future(session.send(first))
    try:
        async for text in messages:
            if running is not None and not running.done() and session.running:
                session.steer(text)
                continue
            if running is not None:
                result = await running
            running = asyncio.ensure_future(session.send(text))
        if running is not None:
            result = await running
    finally:
        if running is not None and not running.done():
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await running
    return result
