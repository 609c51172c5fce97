"""How long to wait before sending a failed request again (SPEC §5).

Only failures before any output are retried, and only those that may pass on
their own: a connection error or timeout, a 5xx, a 429. The waits grow
exponentially so a struggling server is not hammered, carry jitter so many
clients do not retry in lockstep, and are capped so a person is never left
staring at a silent terminal for long. A server's `Retry-After` is honoured
because it knows better than we do, but capped for the same reason.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Literal

__all__ = [
    "DEFAULT_ATTEMPTS",
    "DEFAULT_BASE_SECONDS",
    "DEFAULT_CAP_SECONDS",
    "DEFAULT_RETRY_AFTER_CAP_SECONDS",
    "Jitter",
    "RetryPolicy",
    "parse_retry_after",
]

DEFAULT_ATTEMPTS = 3  # retries after the first try
DEFAULT_BASE_SECONDS = 0.5  # the wait before the first retry, before jitter
DEFAULT_CAP_SECONDS = 8.0  # no backoff wait is longer than this
DEFAULT_RETRY_AFTER_CAP_SECONDS = 30.0  # nor is a wait the server asked for
BACKOFF_FACTOR = 2.0  # each retry waits this many times longer than the one before
MAX_EXPONENT = 32  # keeps BACKOFF_FACTOR ** n finite for absurd attempt numbers

Jitter = Literal["full", "equal", "none"]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many times to retry and how long to wait before each retry.

    `jitter` follows the AWS "exponential backoff and jitter" names: "full"
    waits a uniform random time up to the backoff, "equal" waits at least half
    of it (so a retry never comes back instantly), "none" waits exactly it
    (deterministic, for tests).
    """

    attempts: int = DEFAULT_ATTEMPTS
    base: float = DEFAULT_BASE_SECONDS
    cap: float = DEFAULT_CAP_SECONDS
    retry_after_cap: float = DEFAULT_RETRY_AFTER_CAP_SECONDS
    jitter: Jitter = "equal"

    def allows(self, attempt: int) -> bool:
        """Whether retry number `attempt` (1 for the first retry) is within the budget."""
        return attempt <= self.attempts

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `attempt` (1-based).

        A server-given `retry_after` wins over the backoff schedule, capped at
        `retry_after_cap`; otherwise the capped exponential backoff with jitter.
        """
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.retry_after_cap)
        exponent = min(max(attempt - 1, 0), MAX_EXPONENT)
        backoff = min(self.cap, self.base * BACKOFF_FACTOR**exponent)
        if self.jitter == "full":
            return random.uniform(0.0, backoff)
        if self.jitter == "equal":
            return backoff / 2 + random.uniform(0.0, backoff / 2)
        return backoff


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds from a `Retry-After` header: delta-seconds or an HTTP-date; None if unusable.

    Fractional seconds are accepted although the RFC says integer, because
    some proxies send them; a date in the past means "now" (0 seconds).
    """
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        return _seconds_until(value, now)
    if seconds != seconds or seconds < 0 or seconds == float("inf"):  # NaN, negative, infinite
        return None
    return seconds


def _seconds_until(http_date: str, now: datetime | None) -> float | None:
    """Seconds from `now` until an HTTP-date, or None if it is not one."""
    try:
        when = parsedate_to_datetime(http_date)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000" dates come back naive; HTTP-dates are always GMT
        when = when.replace(tzinfo=UTC)
    current = now if now is not None else datetime.now(UTC)
    return max((when - current).total_seconds(), 0.0)
