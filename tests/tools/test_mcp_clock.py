"""A server's request deadlines stand still while a person is waited on (tools/mcp_clock.py),
with the loop's clock moved by the test rather than waited for."""

from __future__ import annotations

import asyncio

import pytest

from agent_cli.tools.mcp_clock import PersonClock
from tests.support.waiting import GENEROUS, movable_clock, within


async def held(clock: PersonClock, seconds: float, gate: asyncio.Event) -> None:
    with clock.deadline(seconds):
        await gate.wait()


async def timed_out(task: asyncio.Task[None]) -> bool:
    """Whether the task ended by its deadline (`within` would take its TimeoutError for
    its own)."""
    done, _ = await asyncio.wait({task}, timeout=GENEROUS)
    assert done, "the task did not end"
    return isinstance(task.exception(), TimeoutError)


async def turns(count: int = 3) -> None:
    """A few turns of the loop: a deadline that is due fires within them."""
    for _ in range(count):
        await asyncio.sleep(0)


async def test_a_deadline_runs_out_when_nobody_is_waited_on(monkeypatch: pytest.MonkeyPatch):
    forward, clock = movable_clock(monkeypatch), PersonClock()
    task = asyncio.ensure_future(held(clock, 5, asyncio.Event()))
    await turns()
    forward(6)
    assert await timed_out(task)


async def test_the_persons_time_is_not_counted_and_what_was_left_runs_on_after(
    monkeypatch: pytest.MonkeyPatch,
):
    forward, clock, gate = movable_clock(monkeypatch), PersonClock(), asyncio.Event()
    task = asyncio.ensure_future(held(clock, 5, gate))
    await turns()
    forward(3)  # 2 s left
    with clock.person():
        later = asyncio.ensure_future(held(clock, 5, gate))  # opened while the person is away
        forward(600)
        await turns()
        assert not task.done() and not later.done()
    forward(1)  # 1 s left of the first, 4 of the second
    await turns()
    assert not task.done()
    forward(1.5)
    assert await timed_out(task)
    assert not later.done()
    gate.set()
    await within(later)  # it ended in time
