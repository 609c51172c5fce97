"""The debug log (`--debug`): one file per run, with every secret redacted (SPEC §13).

A debug log holds request and response bodies, so it is the one place a key
could leak in bulk. Everything written to it passes `Redactor` first, on the
handler itself (a `logging.Filter`), so no logger anywhere — ours, httpx's,
an SDK's — can write around it:

- header values: `Authorization`, `Proxy-Authorization`, `x-api-key` (and
  other `…-key`/`…-token` headers), `Cookie`, `Set-Cookie`;
- the values of keys named like secrets — `api_key`, `apiKey`, `token`,
  `access_token`, `password`, `secret`, `client_secret`, … — in JSON
  (`"token": "…"`, also escaped inside a JSON string), Python reprs
  (`'token': '…'`, `(b'set-cookie', b'…')`) and `key=value` text;
- any secret value given (the configured provider keys), wherever it appears.

A log file is created 0600 in a 0700 folder: it also holds the conversation.
Only the newest `LOG_FILES_KEPT` logs are kept.

Every line names the turn it belongs to (`[t-…]`, or `[-]` between turns): the
Session mints a correlation id when a message starts a run and runs the turn
`in_turn`, so `grep t-3f9a… agent-*.log` finds all the turn did — provider
requests, tool calls, MCP and ACP traffic, hooks. A task that outlives the
turn that started it (an MCP server's connection, an external agent's reader)
keeps a turn that has ended; its lines are put under the turn going on now.
"""

from __future__ import annotations

import contextvars
import logging
import os
import re
import uuid
from collections.abc import Awaitable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TypeVar

__all__ = [
    "LOG_FILES_KEPT",
    "REDACTED",
    "RedactingFilter",
    "Redactor",
    "TurnFilter",
    "current_turn",
    "in_turn",
    "new_turn_id",
    "start",
]

REDACTED = "***"
LOG_FILES_KEPT = 20
MIN_SECRET_LENGTH = 4  # a shorter "secret" would blank out ordinary words everywhere
LOG_FORMAT = "%(asctime)s %(levelname)s [%(turn)s] %(name)s: %(message)s"
NO_TURN = "-"  # what a line logged between turns shows for its turn
T = TypeVar("T")
log = logging.getLogger(__name__)
FILE_MODE = 0o600
FOLDER_MODE = 0o700

# Header names whose whole value is a credential (the rest of the line, unquoted).
_HEADER = r"(?:proxy-)?authorization|x-[a-z0-9-]*(?:api-?key|token|secret)|set-cookie|cookie"
# Key names whose value is a secret: ending in one of these words (any case or separator),
# so `access_token` and `clientSecret` match but `max_tokens` and `token_count` do not.
_KEY = r"[a-z0-9_-]*?(?:api[_-]?key|token|password|passwd|secret|credentials?|session[_-]?id)"
# `name` then `:` or `=` (or `,` after a quoted name: a tuple), its quotes matched:
# 'k', "k", b'k', \"k\" (inside a JSON string) or bare; then the value, quoted or not.
_LEAD = r"""(?P<lead>(?<![a-z0-9_-])(?:b(?=["']))?(?P<q>\\?["'])?(?P<name>{names})(?P=q)?"""
_LEAD += r"""\s*(?(q)[:=,]|[:=])\s*)"""
_QUOTED = r"""\\"(?:[^"\\]|\\[^"])*\\"|b?"(?:[^"\\]|\\.)*"|b?'(?:[^'\\]|\\.)*'"""


def _pairs(names: str, unquoted: str) -> re.Pattern[str]:
    lead = _LEAD.replace("{names}", names)
    return re.compile(f"{lead}(?P<value>{_QUOTED}|{unquoted})", re.IGNORECASE)


# A header's unquoted value is the rest of its line ("Bearer abc"); a key's is one word.
_HEADER_PAIR = _pairs(_HEADER, r"[^\s\[{][^\r\n]*")
_KEY_PAIR = _pairs(_KEY, r"""[^\s,;&)}\]"'\\\[{]+""")
_BEARER = re.compile(r"\b(Bearer|Basic)\s+(?!\*\*\*)[A-Za-z0-9._~+/=-]+", re.IGNORECASE)


class Redactor:
    """Replaces secrets in text: credential-like pairs by form, and known values verbatim."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        """Redact `secret` verbatim from now on (ignored when too short to be a secret)."""
        if secret and len(secret.strip()) >= MIN_SECRET_LENGTH:
            self._secrets.add(secret.strip())

    def __call__(self, text: str) -> str:
        # The longest first: a key that contains another is replaced whole.
        for secret in sorted(self._secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, REDACTED)
        text = _BEARER.sub(rf"\1 {REDACTED}", text)
        text = _HEADER_PAIR.sub(_mask_pair, text)
        return _KEY_PAIR.sub(_mask_pair, text)


def _mask_pair(match: re.Match[str]) -> str:
    value = match["value"]
    if value.startswith('\\"'):
        masked = f'\\"{REDACTED}\\"'
    elif value[:1] in "\"'" or (value[:1] == "b" and value[1:2] in "\"'"):
        prefix = value[: 2 if value[0] == "b" else 1]  # the quote, with a bytes repr's b
        masked = f"{prefix}{REDACTED}{prefix[-1]}"
    else:
        masked = REDACTED
    return match["lead"] + masked


class RedactingFilter(logging.Filter):
    """On a handler: formats each record's message (and traceback) and redacts it."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor
        self._formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            self._redact(record)
        except Exception as e:  # never let a log call fail, and never write it unredacted
            record.msg, record.args = f"(a log message was dropped: redaction failed: {e!r})", None
            record.exc_info = record.exc_text = record.stack_info = None
        return True

    def _redact(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a bad format string: keep what there is, redacted
            message = f"{record.msg!s} {record.args!r}"
        record.msg, record.args = self.redactor(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor(record.stack_info)


class _Turn:
    """One turn going on; `live` turns False when it ends (a task may still hold it)."""

    __slots__ = ("id", "live")

    def __init__(self, turn_id: str) -> None:
        self.id = turn_id
        self.live = True


_TURN: contextvars.ContextVar[_Turn | None] = contextvars.ContextVar("agent_turn", default=None)
_LIVE: list[_Turn] = []  # the turns going on in this process, oldest first


def new_turn_id() -> str:
    """A fresh correlation id for a turn: `t-` and 12 hex digits."""
    return f"t-{uuid.uuid4().hex[:12]}"


def current_turn() -> str:
    """The id of the turn this code runs in ("" between turns).

    The task's own turn while it goes on; else (a task that outlived its turn, or
    one started outside any) the newest turn going on in the process.
    """
    turn = _TURN.get()
    if turn is not None and turn.live:
        return turn.id
    return _LIVE[-1].id if _LIVE else ""


async def in_turn(turn_id: str, work: Awaitable[T]) -> T:
    """Await `work` as the turn `turn_id`: every log line it writes carries the id.

    Meant as the body of the turn's own task (the variable is set in its context).
    """
    turn = _Turn(turn_id)
    token = _TURN.set(turn)
    _LIVE.append(turn)
    log.debug("turn %s begins", turn_id)
    try:
        return await work
    finally:
        log.debug("turn %s ends", turn_id)
        turn.live = False
        _LIVE.remove(turn)
        _TURN.reset(token)


class TurnFilter(logging.Filter):
    """On a handler: gives each record its `turn` (the correlation id, or `-`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.turn = current_turn() or NO_TURN
        return True


def start(folder: Path, secrets: Iterable[str] = ()) -> Path:
    """Send every log record, at debug level, to a new file in `folder`; return its path."""
    folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    _prune(folder, keep=LOG_FILES_KEPT - 1)
    path = folder / f"agent-{datetime.now():%Y%m%d-%H%M%S}-{os.getpid()}.log"
    # Created 0600 before anything is written: the log holds the conversation too.
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE))
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(RedactingFilter(Redactor(secrets)))
    handler.addFilter(TurnFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    return path


def _prune(folder: Path, keep: int) -> None:
    """Remove all but the newest `keep` debug logs (names sort by time)."""
    logs = sorted(folder.glob("agent-*.log"))
    for old in logs[: max(len(logs) - keep, 0)]:
        try:
            old.unlink()
        except OSError:
            continue  # another process's log, or already gone: not worth failing a run for
