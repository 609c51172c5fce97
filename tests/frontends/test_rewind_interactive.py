"""`/rewind` and `/fork` as both interactive front ends share them, through a real session."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_cli import wiring
from agent_cli.engine.items import UserItem
from agent_cli.frontends.interactive import Interactive
from agent_cli.settings import Settings, load_settings
from agent_cli.wiring import Opening
from tests.support.fake_openai import FakeOpenAI, held, text
from tests.support.waiting import eventually

TIMEOUT = 30


@pytest.fixture
def settings(fake: FakeOpenAI, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    return load_settings(workspace)


@pytest.fixture
async def interactive(settings: Settings) -> AsyncIterator[Interactive]:
    opened = await wiring.open_interactive(settings, Opening(), "ask")
    try:
        yield opened
    finally:
        await opened.aclose()


async def test_rewind_lists_then_takes_a_message_back(interactive: Interactive, fake: FakeOpenAI):
    fake.add(text("one"), text("two"))
    for message in ("first", "second | with a bar"):
        await asyncio.wait_for(interactive.session.send(message), TIMEOUT)

    listing = await interactive.handle("/rewind")
    assert listing.action == "pick_rewind"
    assert "1. first\n2. second \\| with a bar\n" in listing.text

    reply = await interactive.handle("/rewind 2")
    assert reply.action == "rewound" and reply.argument == "second | with a bar"
    assert "2 items" in reply.text
    assert interactive.rewind_offer is None, "no file was changed: nothing to offer"
    items = interactive.session.conversation.items
    assert [i.text for i in items if isinstance(i, UserItem)] == ["first"]


async def test_rewind_says_what_is_wrong(interactive: Interactive, fake: FakeOpenAI):
    assert "no message to rewind to yet" in (await interactive.handle("/rewind")).text
    fake.add(text("one"))
    await asyncio.wait_for(interactive.session.send("first"), TIMEOUT)
    wrong = await interactive.handle("/rewind 3")
    assert wrong.level == "warn" and "lists 1–1" in wrong.text
    unknown = await interactive.handle("/rewind abc")
    assert unknown.level == "error" and "`/rewind` lists them" in unknown.text
    assert len(interactive.session.conversation.items) == 2


async def test_an_external_agents_conversation_cannot_be_rewound(
    interactive: Interactive, fake: FakeOpenAI
):
    fake.add(text("one"))
    await asyncio.wait_for(interactive.session.send("first"), TIMEOUT)
    await interactive.session.switch_agent("claude-code")  # handed over: its session, not ours

    reply = await interactive.handle("/rewind")

    assert reply.level == "error"
    assert "worked by claude-code" in reply.text and "cannot be rewound" in reply.text
    assert "/agent builtin" in reply.text
    assert any(isinstance(i, UserItem) for i in interactive.session.conversation.items)


async def test_rewind_and_fork_are_refused_during_a_run(interactive: Interactive, fake: FakeOpenAI):
    gate = threading.Event()
    fake.add(text("one"), held(text("held back until the test is done"), gate))
    await asyncio.wait_for(interactive.session.send("first"), TIMEOUT)
    run = asyncio.ensure_future(interactive.session.send("second"))
    try:
        await eventually(lambda: interactive.session.running, "the run to start")
        for command in ("/rewind", "/rewind 1", "/fork"):
            reply = await interactive.handle(command)
            assert reply.level == "error" and "stop it first" in reply.text, command
    finally:
        gate.set()
        await asyncio.wait_for(run, TIMEOUT)


async def test_a_message_steered_into_a_run_says_its_changes_cannot_be_told_apart(
    interactive: Interactive, fake: FakeOpenAI
):
    gate = threading.Event()
    fake.add(held(text("first answer"), gate), text("read the steer"))
    run = asyncio.ensure_future(interactive.session.send("first"))
    await eventually(lambda: interactive.session.running, "the run to start")
    interactive.session.steer("and also this")
    gate.set()
    await asyncio.wait_for(run, TIMEOUT)
    points = [point.text for point in interactive.session.rewind_points()]
    assert points == ["first", "and also this"]

    reply = await interactive.handle("/rewind 2")

    assert reply.argument == "and also this"
    assert "steered into a run" in reply.text and "`/undo`" in reply.text
