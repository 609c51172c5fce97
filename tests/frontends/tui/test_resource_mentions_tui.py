"""`@server:uri` in the TUI: completion lists a server's resources and templates (from a
listing made in the background), and a sent mention attaches the resource.

A real SDK-written server (tests/support/mcp_servers, `--client`: `note://hello`,
`pic://red`, `blob://data`, `note://long`, the template `greeting://{name}`) is configured
for the person; the model is the loopback fake.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator

import pytest

from agent_cli import mcp_config, wiring
from agent_cli.frontends.interactive import Interactive
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.settings import Settings
from agent_cli.wiring import Opening
from tests.frontends.tui.support import SIZE, notice_says, send, settle, until
from tests.support.fake_openai import FakeOpenAI, held, text, tool_calls
from tests.support.mcp_servers import write_client_server


@pytest.fixture
async def interactive(settings: Settings) -> AsyncIterator[Interactive]:
    write_client_server(mcp_config.user_file())
    opened = await wiring.open_interactive(settings, Opening(), "ask")
    try:
        yield opened
    finally:
        await opened.aclose()


def user_text(fake: FakeOpenAI) -> str:
    content = fake.requests[-1]["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part["type"] == "text")


def labels(app: AgentApp) -> list[str]:
    return [c.label for c in app.composer.menu.candidates]


async def test_at_server_lists_its_resources_and_templates_and_a_taken_one_is_sent(
    app: AgentApp, fake: FakeOpenAI
):
    fake.add(text("Read the note."))
    async with app.run_test(size=SIZE) as pilot:
        # Typed before the servers are up: the menu fills in when the listing comes.
        await pilot.press(*"read @docs:")
        await until(pilot, lambda: any("docs:note://hello" in label for label in labels(app)))
        shown = labels(app)
        assert "docs:note://hello  hello" in shown, shown
        assert "docs:greeting://{name}  template" in shown, shown
        assert not any("/" in label.split(":", 1)[0] for label in shown), "no files here"
        await pilot.press(*"note://lo")
        await until(pilot, lambda: labels(app) == ["docs:note://long  long"])
        await pilot.press("tab")
        assert app.composer.input.text == "read @docs:note://long "
        await pilot.press("enter")
        await until(pilot, lambda: len(fake.requests) == 1)
        await settle(pilot, app)
    sent = user_text(fake)
    assert sent.startswith("read @docs:note://long")
    assert '<attached resource="docs:note://long">' in sent and "line 0 of a long note" in sent


async def test_a_template_is_inserted_to_be_filled_in(app: AgentApp, fake: FakeOpenAI):
    fake.add(text("Greeted."))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.interactive.resources.listed())  # listed at the start
        await pilot.press(*"@do")
        await until(pilot, lambda: labels(app)[:1] == ["docs:  5 MCP resource(s)"])
        await pilot.press("tab")  # `@docs:`, and its resources at once
        assert app.composer.input.text == "@docs:"
        await until(pilot, lambda: any("greeting" in label for label in labels(app)))
        await pilot.press(*"gr", "tab")
        assert app.composer.input.text == "@docs:greeting://{name}"
        for _ in range(len("{name}")):
            await pilot.press("backspace")
        await pilot.press(*"Ann please")
        await pilot.press("escape")  # the menu closes; Enter then sends
        await pilot.press("enter")
        await until(pilot, lambda: len(fake.requests) == 1)
        await settle(pilot, app)
    assert "Hello, Ann!" in user_text(fake)


async def test_an_unknown_resource_is_a_notice_and_the_message_goes(
    app: AgentApp, fake: FakeOpenAI
):
    fake.add(text("Sent without it."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "see @docs:note://nothing")
        await until(pilot, lambda: len(fake.requests) == 1)
        await settle(pilot, app)
        assert notice_says(app, "@docs:note://nothing is not attached", "warn")
    assert user_text(fake) == "see @docs:note://nothing"


@pytest.fixture
def gate(fake: FakeOpenAI) -> Iterator[threading.Event]:
    """Opens the held answer; set at the end in any case, so the server can stop."""
    opened = threading.Event()
    yield opened
    opened.set()


async def test_a_message_steered_into_a_run_attaches_its_resource_too(
    app: AgentApp, fake: FakeOpenAI, gate: threading.Event
):
    fake.add(held(text("Working on it."), gate), text("Both done."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "start")
        await until(pilot, lambda: len(fake.requests) == 1 and app.session.running)
        await send(pilot, app, "and @docs:greeting://Bo")  # Enter while it runs: a steer
        await until(pilot, lambda: app.session.pending.messages)
        gate.set()
        await settle(pilot, app)
    assert len(fake.requests) == 2
    assert "Hello, Bo!" in user_text(fake)


async def test_a_resource_the_server_adds_later_is_completed_after_it_says_so(
    app: AgentApp, fake: FakeOpenAI
):
    fake.add(tool_calls(("c1", "docs_grow_resource", "{}")), text("Grew."))
    app.session.set_mode("full")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.interactive.resources.listed())  # listed at the start
        await send(pilot, app, "grow a resource")
        await until(pilot, lambda: len(fake.requests) == 2)
        await settle(pilot, app)
        await pilot.press(*"@docs:note://la")
        await until(pilot, lambda: labels(app) == ["docs:note://later  later"])
