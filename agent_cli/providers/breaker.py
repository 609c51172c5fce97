"""Circuit breakers: stop calling what keeps failing, for a while (issue 21).

A breaker counts consecutive failures. At `threshold` it opens: calls are
refused at once until `until`. The cooldown is `cooldown` seconds, doubled
each time the breaker opens again without a success in between, up to
`max_cooldown`. Once it has passed, one trial call is let through (the others
are still refused): a success closes the breaker, a failure opens it again for
longer. Time comes from an injected clock of wall-clock seconds, because
`until` is said to a person as a time of day, so tests never sleep.

Two kinds of callers use one: each MCP server (tools/mcp.py: a crash, a failed
start, a timeout, a broken transport) and the model service of a long session
(`GuardedProvider` here: a request that failed even after its retries).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

from agent_cli.errors import ProviderError, ProviderUnavailable
from agent_cli.providers.base import ModelInfo, Provider, Request, StreamEvent

__all__ = [
    "COOLDOWN_SECONDS",
    "MAX_COOLDOWN_SECONDS",
    "PROVIDER_FAILURES",
    "CircuitBreaker",
    "Clock",
    "GuardedProvider",
    "shared_breaker",
]

COOLDOWN_SECONDS = 30.0  # the first cooldown; each one after it doubles
MAX_COOLDOWN_SECONDS = 300.0
PROVIDER_FAILURES = 5  # requests failed in a row (each after its retries) that open it

Clock = Callable[[], float]
BreakerState = Literal["closed", "open", "trial"]


class CircuitBreaker:
    """Consecutive failures of one thing; refuses calls while it cools down."""

    def __init__(
        self,
        threshold: int,
        *,
        cooldown: float = COOLDOWN_SECONDS,
        max_cooldown: float = MAX_COOLDOWN_SECONDS,
        clock: Clock = time.time,
    ) -> None:
        self.threshold = threshold
        self.cooldown = cooldown
        self.max_cooldown = max_cooldown
        self.clock = clock
        self.failures = 0  # in a row, since the last success
        self.openings = 0  # times it opened since the last success
        self.until: float | None = None  # while open: when a trial call may go
        self.last_error = ""
        self._trial = False  # the one trial call is under way

    @property
    def state(self) -> BreakerState:
        if self.until is None:
            return "closed"
        return "trial" if self._trial or self.clock() >= self.until else "open"

    def allow(self) -> bool:
        """Whether a call may go now; past the cooldown the first one asking is the trial."""
        if self.until is None:
            return True
        if self._trial or self.clock() < self.until:
            return False
        self._trial = True
        return True

    def success(self) -> None:
        """The call worked (or the other side answered): closed, counts cleared."""
        self.failures = self.openings = 0
        self.until, self.last_error, self._trial = None, "", False

    def failure(self, error: str = "") -> bool:
        """One more failure in a row; True when this one opened the breaker."""
        self.failures += 1
        self.last_error = error or self.last_error
        if not self._trial and self.failures < self.threshold:
            return False
        self._trial = False
        self.openings += 1
        seconds = min(self.cooldown * 2 ** (self.openings - 1), self.max_cooldown)
        self.until = self.clock() + seconds
        return True

    def abandon(self) -> None:
        """The call ended with no answer either way (stopped): a trial may go again."""
        self._trial = False

    def reset(self) -> None:
        """A person's restart: as if it had never failed."""
        self.success()

    def until_text(self) -> str:
        """When the next trial may go, as a local time of day ("12:04:30")."""
        return time.strftime("%H:%M:%S", time.localtime(self.until or self.clock()))


_SHARED: dict[str, CircuitBreaker] = {}


def shared_breaker(key: str, threshold: int, clock: Clock = time.time) -> CircuitBreaker:
    """The process's one breaker for `key` (made on first use, with `clock`), so every
    session and scheduled task of a process that talks to one service shares its count."""
    found = _SHARED.get(key)
    if found is None:
        found = _SHARED[key] = CircuitBreaker(threshold, clock=clock)
    return found


class GuardedProvider:
    """A provider behind a breaker: after `PROVIDER_FAILURES` requests in a row that failed
    even after their retries, the next ones fail at once until the cooldown has passed.

    Only failures that say the service is down count (`retryable` ones: no connection, a
    timeout, a 5xx, a 429); an answer of any other kind (a bad key, too long a request,
    a stream broken after it began) shows the service is up, and clears the count.
    """

    def __init__(self, provider: Provider, breaker: CircuitBreaker) -> None:
        self.provider = provider
        self.breaker = breaker
        self.name = provider.name

    def __getattr__(self, name: str) -> Any:  # base_url and the like, for hints
        return getattr(self.provider, name)

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        breaker = self.breaker
        if not breaker.allow():
            raise ProviderUnavailable(
                f"The model service {self.name!r} failed {breaker.failures} requests in a row, "
                f"each after its retries; it is not asked again until {breaker.until_text()} — "
                "wait until then, or point /model or the config at another model or service."
            )
        try:
            async for event in self.provider.stream(request):
                yield event
        except ProviderError as e:
            if e.retryable:
                breaker.failure(str(e))
            else:
                breaker.success()
            raise
        except BaseException:  # stopped, or the consumer let go: no verdict on the service
            breaker.abandon()
            raise
        breaker.success()

    async def list_models(self) -> list[ModelInfo]:
        return await self.provider.list_models()

    async def aclose(self) -> None:
        await self.provider.aclose()
