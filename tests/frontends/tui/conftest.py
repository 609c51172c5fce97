"""Fixtures for the TUI tests: a real Interactive against the loopback fake server."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_cli import wiring
from agent_cli.frontends.interactive import Interactive
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.markdown_flow import BUDGET
from agent_cli.settings import Settings, load_settings
from agent_cli.wiring import Opening
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture(autouse=True)
def unhurried_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every block of the app renders in the first frame that shows it. How many blocks a
    frame's render budget covers depends on how busy the machine is, never on what a
    test looks at (test_markdown_flow drives a budget of its own, with its own clock)."""
    monkeypatch.setattr(BUDGET, "seconds", math.inf)


@pytest.fixture
def settings(fake: FakeOpenAI, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    # No spinner: screens are compared and read without a clock in them.
    return dataclasses.replace(load_settings(workspace), reduce_motion=True)


@pytest.fixture
async def interactive(settings: Settings) -> AsyncIterator[Interactive]:
    opened = await wiring.open_interactive(settings, Opening(), "ask")
    try:
        yield opened
    finally:
        await opened.aclose()


@pytest.fixture
def app(interactive: Interactive, settings: Settings) -> AgentApp:
    opened = AgentApp(interactive, settings)
    # Its cards' key guard on a clock a second on at each read: a test's `y` is never early.
    opened.approvals.clock = itertools.count(start=1000.0).__next__
    return opened
