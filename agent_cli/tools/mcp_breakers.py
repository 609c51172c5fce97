"""Each MCP server's circuit breaker, shared by the process and kept where others can see it.

A server that fails 3 times in a row (a crash, a failed start or handshake, a
timeout, a broken transport) is not called for a cooldown (30 s, doubling up to
5 minutes while it keeps failing), then one trial call goes (providers/breaker.py).
One breaker per server and workspace (the listing key) per process, so a new
backend (/new, a model switch) keeps the count. While one is open it is also
written to the user cache dir, so `agent mcp list` and `/mcp` in another
terminal say "cooling down until 12:04:30"; `/mcp restart NAME` and
`agent mcp list` (which checks every server again) remove the file, which ends
the cooldown even for a session already running: a refusing breaker looks for
its file first.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

from agent_cli import paths
from agent_cli.durable import write_atomically
from agent_cli.providers.breaker import CircuitBreaker, Clock

__all__ = ["FAILURES", "ServerBreaker", "breaker_for", "cooling", "refusal", "reset"]

FAILURES = 3  # failures in a row that open a server's breaker


def _file(key: str) -> Path:
    return paths.cache_dir() / "mcp-breakers" / f"{key}.json"


class ServerBreaker(CircuitBreaker):
    """A breaker that keeps its open state in a file while it is open."""

    def __init__(self, key: str, name: str, clock: Clock) -> None:
        super().__init__(FAILURES, clock=clock)
        self.key, self.name = key, name
        kept = _read(key)
        if kept is not None:  # opened by another process (or an earlier session)
            self.failures = int(kept.get("failures", FAILURES))
            self.openings = int(kept.get("openings", 1))
            self.until = float(kept["until"])
            self.last_error = str(kept.get("error", ""))

    def allow(self) -> bool:
        if self.until is not None and not _file(self.key).exists():
            self.success()  # reset by another process: closed
        return super().allow()

    def success(self) -> None:
        was_open = self.until is not None
        super().success()
        if was_open:
            with contextlib.suppress(OSError):
                _file(self.key).unlink()

    def failure(self, error: str = "") -> bool:
        opened = super().failure(error)
        if opened:
            state = {"name": self.name, "until": self.until, "failures": self.failures}
            state |= {"openings": self.openings, "error": self.last_error}
            file = _file(self.key)
            with contextlib.suppress(OSError):  # a cache that cannot be written only forgets
                file.parent.mkdir(parents=True, exist_ok=True)
                write_atomically(file, json.dumps(state).encode(), sync_folder=False)
        return opened


_BREAKERS: dict[str, ServerBreaker] = {}


def breaker_for(key: str, name: str, clock: Clock = time.time) -> ServerBreaker:
    """The process's breaker for the server with listing key `key` (made with `clock`)."""
    found = _BREAKERS.get(key)
    if found is None:
        found = _BREAKERS[key] = ServerBreaker(key, name, clock)
    return found


def cooling(key: str) -> str:
    """ "cooling down until 12:04:30 …" for a server whose breaker is open, else ""."""
    breaker = _BREAKERS.get(key)
    if breaker is not None:
        until, failures, error = breaker.until, breaker.failures, breaker.last_error
        now = breaker.clock()
    else:
        kept = _read(key)
        if kept is None:
            return ""
        until, failures = float(kept["until"]), int(kept.get("failures", FAILURES))
        error = str(kept.get("error", ""))
        now = time.time()
    if until is None:
        return ""
    when = time.strftime("%H:%M:%S", time.localtime(until))
    state = f"cooling down until {when}" if now < until else "the next call is a trial"
    return f"{state} (failed {failures} times in a row: {error[:200]})"


def refusal(name: str, breaker: CircuitBreaker) -> str:
    """What the model reads instead of a result while the server's breaker is open."""
    return (
        f"The MCP server {name!r} failed {breaker.failures} times in a row; not calling it "
        f"until {breaker.until_text()} (last failure: {breaker.last_error[:300]}). Do without "
        f"its tools until then; the person can reset it with `/mcp restart {name}` or "
        "`agent mcp list`."
    )


def reset(key: str) -> bool:
    """End a server's cooldown (a person's restart); True if one was going on."""
    breaker = _BREAKERS.get(key)
    was = breaker is not None and breaker.until is not None
    if breaker is not None:
        breaker.reset()
    try:
        _file(key).unlink()
    except OSError:
        return was
    return True


def _read(key: str) -> dict[str, Any] | None:
    try:
        data = json.loads(_file(key).read_text(encoding="utf-8"))
        float(data["until"])
        return data if isinstance(data, dict) else None
    except (OSError, ValueError, TypeError, KeyError):
        return None
