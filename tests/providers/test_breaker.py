"""Circuit breakers (providers/breaker.py): the counting, with an injected clock, and the
model service's breaker in a long session, against the fake server refusing connections."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_cli import wiring
from agent_cli.engine.events import Event, NoticeEvent
from agent_cli.errors import ProviderConnectionError, ProviderHTTPError, ProviderUnavailable
from agent_cli.providers.base import Finished, ModelInfo, Request, StreamEvent, TextDelta
from agent_cli.providers.breaker import CircuitBreaker, GuardedProvider
from agent_cli.settings import load_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.waiting import within

START = 1_000_000.0


class Clock:
    """Wall-clock seconds that move only when the test says."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def test_three_failures_open_it_and_the_cooldown_doubles_up_to_the_cap() -> None:
    clock = Clock()
    breaker = CircuitBreaker(3, cooldown=30, max_cooldown=100, clock=clock)
    assert breaker.allow() and not breaker.failure("one") and not breaker.failure("two")
    assert breaker.state == "closed"
    assert breaker.failure("three"), "the third failure in a row opens it"
    assert breaker.state == "open" and breaker.until == START + 30
    assert not breaker.allow()
    clock.now += 30
    assert breaker.state == "trial"
    assert breaker.allow(), "past the cooldown, one trial call goes"
    assert not breaker.allow(), "and only one"
    assert breaker.failure("again") and breaker.until == clock.now + 60  # doubled
    clock.now += 60
    assert breaker.allow() and breaker.failure() and breaker.until == clock.now + 100  # capped
    clock.now += 100
    assert breaker.allow()
    breaker.success()
    assert breaker.state == "closed" and breaker.failures == 0 and breaker.until is None


def test_a_stopped_trial_lets_the_next_call_be_the_trial() -> None:
    clock = Clock()
    breaker = CircuitBreaker(1, clock=clock)
    breaker.failure()
    clock.now += 30
    assert breaker.allow()
    breaker.abandon()
    assert breaker.allow()


class Failing:
    """A provider whose every request fails as given."""

    name = "down"

    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.requests = 0

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        self.requests += 1
        if self.error is not None:
            raise self.error
        yield TextDelta("fine")
        yield Finished()

    async def list_models(self) -> list[ModelInfo]:
        return []

    async def aclose(self) -> None:
        return None


async def drain(provider: GuardedProvider) -> None:
    async for _ in provider.stream(Request("m", "", ())):
        pass


async def test_only_failures_that_say_the_service_is_down_count() -> None:
    clock = Clock()
    inner = Failing(ProviderHTTPError("bad key", 401))
    guarded = GuardedProvider(inner, CircuitBreaker(2, clock=clock))
    for _ in range(3):
        with pytest.raises(ProviderHTTPError):
            await drain(guarded)
    assert guarded.breaker.state == "closed", "a 401 is an answer: the service is up"
    inner.error = ProviderConnectionError("no connection")
    for _ in range(2):
        with pytest.raises(ProviderConnectionError):
            await drain(guarded)
    with pytest.raises(ProviderUnavailable, match=r"failed 2 requests in a row.*/model"):
        await drain(guarded)
    assert inner.requests == 5, "the refused request never reached the service"
    clock.now += 30
    inner.error = None
    await drain(guarded)  # the trial works: closed again
    assert guarded.breaker.state == "closed"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder.resolve()


@pytest.fixture
async def refused(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    """The address of a fake model server that has stopped: every connection is refused."""
    with FakeOpenAI(models=["m1"]) as fake:
        address = fake.base_url
    monkeypatch.setenv("OPENAI_BASE_URL", address)
    monkeypatch.setenv("AGENT_MODEL", "m1")  # nothing to list: the session opens regardless
    yield address


async def test_a_long_session_stops_asking_a_service_that_is_down(
    workspace: Path, refused: str
) -> None:
    """The session as the TUI opens it: five messages fail after their retries, the sixth
    at once, saying until when; past the cooldown one message tries again."""
    clock = Clock()
    interactive = await wiring.open_interactive(load_settings(workspace), wiring.Opening(), "ask")
    try:
        route = interactive.route
        assert isinstance(route, wiring.Route)
        guarded, _ = await route.get()
        assert isinstance(guarded, GuardedProvider)
        guarded.breaker.clock = clock
        heard: list[Event] = []
        interactive.session.events.subscribe(heard.append)

        async def send(text: str) -> list[NoticeEvent]:
            heard.clear()
            result = await within(interactive.session.send(text))
            assert result.reason.value == "error"
            return [e for e in heard if isinstance(e, NoticeEvent)]

        for number in range(1, 6):
            said = await send(f"message {number}")
            assert any("trying again" in n.text for n in said), f"message {number} retried"
            assert "No server answers" in said[-1].text
        said = await send("message 6")
        assert not any("trying again" in n.text for n in said), "the sixth was not sent at all"
        until = time.strftime("%H:%M:%S", time.localtime(START + 30))
        assert [n.level for n in said] == ["error"]
        assert "failed 5 requests in a row" in said[0].text and until in said[0].text
        assert "/model" in said[0].text
        clock.now += 30
        said = await send("message 7")
        assert any("trying again" in n.text for n in said), "past the cooldown: one trial"
        said = await send("message 8")
        later = time.strftime("%H:%M:%S", time.localtime(clock.now + 60))
        assert not any("trying again" in n.text for n in said) and later in said[-1].text
    finally:
        await interactive.aclose()
