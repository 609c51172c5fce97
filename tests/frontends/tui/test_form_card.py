"""An MCP server's form in the TUI: the card's fields from the schema, defaults filled in,
accept / decline / cancel — on its own, and through the real app and a real server."""

from __future__ import annotations

import json
import sys

import pytest
from textual.app import App
from textual.widgets import Input, Select, SelectionList, Static, Switch

from agent_cli import mcp_config
from agent_cli.engine.items import ToolItem
from agent_cli.frontends.tui import themes
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.form_card import FormCard
from agent_cli.tools.mcp import McpServers
from agent_cli.tools.mcp_forms import ElicitAnswer, form_of
from tests.frontends.tui.support import SIZE, send, settle, until
from tests.support.fake_openai import text, tool_calls
from tests.support.mcp_servers import SERVER
from tests.support.mcp_servers.server import PIZZA
from tests.support.waiting import GENEROUS

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Your name"},
        "age": {"type": "integer", "default": 30},
        "colour": {"type": "string", "enum": ["red", "green"], "default": "green"},
        "subscribe": {"type": "boolean", "default": True},
    },
    "required": ["name"],
}


class CardApp(App[None]):
    def __init__(self, schema: dict = SCHEMA) -> None:
        super().__init__()
        self.schema = schema
        for bundled in themes.load_themes().themes.values():
            self.register_theme(bundled)
        self.answers: list[ElicitAnswer | None] = []

    def on_mount(self) -> None:
        self.theme = "agent-dark"
        form = form_of("people", "Who are you?", self.schema)
        self.push_screen(FormCard(form), self.answers.append)


async def test_the_card_shows_the_fields_with_their_defaults_and_accepts_the_values():
    app = CardApp()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.screen.query("#field-name"))  # mounted
        await pilot.pause()
        card = app.screen
        assert isinstance(card, FormCard)
        assert str(card.query_one("#form-title", Static).render()) == "The MCP server 'people' asks"
        assert card.query_one("#field-age", Input).value == "30"
        assert card.query_one("#field-colour", Select).value == "green"
        assert card.query_one("#field-subscribe", Switch).value is True
        await pilot.press("ctrl+s")  # the name is required and empty: said, the card stays
        await pilot.pause()
        assert "Still wanted: name." in str(card.query_one("#form-problem", Static).render())
        assert app.answers == []
        card.query_one("#field-name", Input).focus()
        await pilot.press(*"Ann", "ctrl+s")
        await until(pilot, lambda: app.answers)
    assert app.answers == [
        ElicitAnswer("accept", {"name": "Ann", "age": 30, "colour": "green", "subscribe": True})
    ]


async def test_decline_and_cancel_from_the_keys():
    for key, action in (("ctrl+d", "decline"), ("escape", "cancel")):
        app = CardApp()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press(key)
            await until(pilot, lambda app=app: app.answers)
        assert app.answers == [ElicitAnswer(action)]  # type: ignore[arg-type]


async def test_a_servers_form_during_a_call_is_a_card_and_its_answer_reaches_the_server(
    app: AgentApp, fake, monkeypatch: pytest.MonkeyPatch
):
    generous = {**(McpServers.__init__.__kwdefaults__ or {}), "start_timeout": GENEROUS}
    monkeypatch.setattr(McpServers.__init__, "__kwdefaults__", generous)  # a busy machine
    entry = {"command": sys.executable, "args": [str(SERVER), "--name", "c", "--client"]}
    mcp_config.add_server("c", entry)
    fake.add(tool_calls(("call_1", "c_ask", "{}")), text("Hello, Bo."))
    async with app.run_test(size=SIZE) as pilot:
        app.session.set_mode("full")
        await send(pilot, app, "who am I?")
        await until(pilot, lambda: isinstance(app.screen, FormCard), timeout=GENEROUS)
        await until(pilot, lambda: app.screen.query("#field-name"))  # mounted
        await pilot.pause()
        app.screen.query_one("#field-name", Input).focus()
        await pilot.press(*"Bo", "ctrl+s")
        await settle(pilot, app)
        item = next(i for i in app.session.conversation.items if isinstance(i, ToolItem))
    assert item.state == "done", item.result
    assert json.loads(item.result.removeprefix("accept ")) == {
        "age": 30, "colour": "green", "name": "Bo", "subscribe": True,
    }  # fmt: skip


async def test_several_choices_are_checkboxes_with_the_defaults_ticked_and_their_count_checked():
    app = CardApp(PIZZA)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.screen.query("#field-sides"))  # mounted
        await pilot.pause()
        card = app.screen
        toppings = card.query_one("#field-toppings", SelectionList)
        assert toppings.selected == ["cheese"]
        assert card.query_one("#field-size", Select).value == "l"
        assert card.query_one("#field-sides", SelectionList).selected == []
        toppings.focus()
        for row in (1, 2):  # tick ham and olives: three, one too many
            toppings.highlighted = row
            await pilot.press("space")
        await pilot.press("ctrl+s")

        def problem_text() -> str:
            return str(card.query_one("#form-problem", Static).render())

        await until(pilot, lambda: "Toppings" in problem_text())
        problem = problem_text()
        assert "Toppings: choose 1 to 2 (of cheese, ham, olives)." in problem
        assert app.answers == []
        toppings.highlighted = 0
        await pilot.press("space", "ctrl+s")  # cheese untick: two
        await until(pilot, lambda: app.answers)
    assert app.answers == [ElicitAnswer("accept", {"toppings": ["ham", "olives"], "size": "l"})]


async def test_a_servers_form_of_several_choices_reaches_the_server_as_lists(
    app: AgentApp, fake, monkeypatch: pytest.MonkeyPatch
):
    generous = {**(McpServers.__init__.__kwdefaults__ or {}), "start_timeout": GENEROUS}
    monkeypatch.setattr(McpServers.__init__, "__kwdefaults__", generous)  # a busy machine
    entry = {"command": sys.executable, "args": [str(SERVER), "--name", "c", "--client"]}
    mcp_config.add_server("c", entry)
    fake.add(tool_calls(("call_1", "c_ask_many", "{}")), text("A pizza."))
    async with app.run_test(size=SIZE) as pilot:
        app.session.set_mode("full")
        await send(pilot, app, "order a pizza")
        await until(pilot, lambda: isinstance(app.screen, FormCard), timeout=GENEROUS)
        await until(pilot, lambda: app.screen.query("#field-sides"))  # mounted
        await pilot.pause()
        sides = app.screen.query_one("#field-sides", SelectionList)
        sides.focus()
        sides.highlighted = 1
        await pilot.press("space", "ctrl+s")  # the green salad, and the defaults
        await settle(pilot, app)
        item = next(i for i in app.session.conversation.items if isinstance(i, ToolItem))
    assert item.state == "done", item.result
    assert json.loads(item.result.removeprefix("accept ")) == {
        "sides": ["salad"], "size": "l", "toppings": ["cheese"],
    }  # fmt: skip
