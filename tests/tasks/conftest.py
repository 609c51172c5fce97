"""Fixtures for task tests: a clock set by hand in a fixed zone, a task file, a fake model."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from agent_cli import paths
from agent_cli.tasks.clock import Clock
from agent_cli.tasks.store import TaskStore
from tests.support.fixtures import fake, workspace

__all__ = ["fake", "workspace"]  # shared fixtures, re-exported for the tests here

BERLIN = ZoneInfo("Europe/Berlin")  # DST: 2025-03-30 02:00 → 03:00, 2025-10-26 03:00 → 02:00


class HandClock:
    """A clock that shows whatever local Berlin time the test sets."""

    def __init__(self, wall: str) -> None:
        self.utc = datetime.min.replace(tzinfo=UTC)
        self.clock = Clock(zone=BERLIN, now_utc=lambda: self.utc)
        self.set(wall)

    def set(self, wall: str) -> None:
        self.utc = self.clock.instant(datetime.fromisoformat(wall))


@pytest.fixture
def hand() -> HandClock:
    return HandClock("2025-06-02T08:00")  # a Monday


@pytest.fixture
def store() -> TaskStore:
    return TaskStore(paths.tasks_file())
