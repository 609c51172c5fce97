"""A server's request deadlines, which stand still while a person is waited on.

A call's timeout (`timeout_ms`) bounds the server and the network, not the person:
a login in the browser mid-call (a 401) or a form the server asks to be filled takes
as long as the person takes. While `person()` is open, every deadline of the server
stops with the time it had left, and runs on from there once the person is done; the
login has a bound of its own (`mcp_auth.LOGIN_TIMEOUT`), and a stop cancels it all.

Only anyio, which the SDK runs on, is needed; it is imported when a deadline opens (the
SDK is loaded lazily, SPEC §9, and so is anyio).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import anyio


class PersonClock:
    """The deadlines of one server's requests (`deadline`), paused by `person`."""

    def __init__(self) -> None:
        self._left: dict[anyio.CancelScope, float] = {}  # each open deadline: seconds left
        self._waiting = 0  # how many person-waits are open (a login and a form may overlap)

    @property
    def paused(self) -> bool:
        return self._waiting > 0

    @contextmanager
    def deadline(self, seconds: float) -> Iterator[anyio.CancelScope]:
        """Raise `TimeoutError` once the block has run `seconds` with nobody waited on."""
        import anyio

        with anyio.CancelScope() as scope:
            self._left[scope] = seconds
            if not self.paused:
                scope.deadline = anyio.current_time() + seconds
            try:
                yield scope
            finally:
                del self._left[scope]
        # Not `fail_after`: it compares with the deadline, which a pause moves.
        if scope.cancelled_caught:
            raise TimeoutError

    @contextmanager
    def person(self) -> Iterator[None]:
        """While the block is open, the server's deadlines do not run."""
        import anyio

        if not self._waiting:
            now = anyio.current_time()
            for scope in self._left:
                if not scope.cancel_called:  # one that ran out stays run out
                    self._left[scope] = max(scope.deadline - now, 0.0)
                    scope.deadline = math.inf
        self._waiting += 1
        try:
            yield
        finally:
            self._waiting -= 1
            if not self._waiting:
                now = anyio.current_time()
                for scope, left in self._left.items():
                    if not scope.cancel_called:
                        scope.deadline = now + left
