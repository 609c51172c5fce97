"""Waiting in tests without betting on the machine's speed.

A test never sleeps for "long enough" and never asserts that something was quick:
it waits for the event itself (a condition, a task, a process) and gives up
only after `GENEROUS` seconds, a bound no busy machine comes near, so only a
hang or a missing event fails it. Where a test must tell a fast path from a
slow one, the slow one is made unreachable within that bound (a server that
stalls for an hour, a child that waits for a gate the test never opens).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

GENEROUS = 60.0  # seconds: only a hang takes this long, on any machine however busy
FOREVER = 3600.0  # seconds: a stall or a sleep that must never end on its own in a test

T = TypeVar("T")


async def eventually(
    condition: Callable[[], object], what: str = "", timeout: float = GENEROUS
) -> None:
    """Return once `condition()` holds; fail, saying `what` it waited for, if it never does."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what or condition}")
        await asyncio.sleep(0.01)


def eventually_sync(
    condition: Callable[[], object], what: str = "", timeout: float = GENEROUS
) -> None:
    """`eventually`, for a test without an event loop (it sleeps the thread)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what or condition}")
        time.sleep(0.01)


async def within(awaitable: Awaitable[T], timeout: float = GENEROUS) -> T:
    """Its result, or a failure if it does not come within `timeout` (a hang, not slowness)."""
    try:
        return await asyncio.wait_for(awaitable, timeout)
    except TimeoutError:
        raise AssertionError(f"did not finish within {timeout:g} s") from None


def movable_clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """The running loop's clock (asyncio's and anyio's deadlines), moved forward on demand:
    a test passes a deadline at once instead of waiting for it. `eventually` keeps to the
    real clock."""
    loop = asyncio.get_running_loop()
    real, offset = loop.time, [0.0]
    monkeypatch.setattr(loop, "time", lambda: real() + offset[0])

    def forward(seconds: float) -> None:
        offset[0] += seconds

    return forward
