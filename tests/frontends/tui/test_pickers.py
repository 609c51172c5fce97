"""Pickers that behave alike: the current choice marked, type to filter, Enter chooses."""

from __future__ import annotations

import json

from textual.widgets import Input, OptionList, Static

from agent_cli import paths
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.notice_view import NoticeView
from agent_cli.frontends.tui.picker import CURRENT_MARK, Picker
from tests.frontends.tui.support import SIZE, send, shown_text, until
from tests.support.fake_openai import FakeOpenAI


def shown_options(picker: Picker) -> list[str]:
    options = picker.query_one(OptionList)
    return [str(options.get_option_at_index(i).id) for i in range(options.option_count)]


def marked(picker: Picker) -> list[str]:
    options = picker.query_one(OptionList)
    return [
        str(option.id)
        for option in (options.get_option_at_index(i) for i in range(options.option_count))
        if str(option.prompt).startswith(CURRENT_MARK)
    ]


async def open_picker(pilot, app: AgentApp, command: str) -> Picker:
    await send(pilot, app, command)
    await until(pilot, lambda: isinstance(app.screen, Picker))
    await pilot.pause()
    assert isinstance(app.screen, Picker)
    return app.screen


async def last_reply(pilot, app: AgentApp) -> str:
    await until(pilot, lambda: bool(app.transcript.query(NoticeView)))
    await pilot.pause()
    return " ".join(shown_text(app.transcript.query(NoticeView).last()).split())


async def test_mode_picker_marks_the_current_mode_and_filters_as_you_type(app: AgentApp):
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app, "/mode")
        assert shown_options(picker) == ["ask", "auto", "read-only", "full", "plan"]
        assert marked(picker) == ["ask"]
        assert app.focused is picker.query_one(Input), "typing filters at once"
        await pilot.press(*"ONLY")
        assert shown_options(picker) == ["read-only"], "any part, any case"
        await pilot.press("enter")
        await until(pilot, lambda: app.session.mode == "read-only")
        assert app.status.mode == "read-only"


async def test_theme_picker_previews_live_and_escape_puts_the_theme_back(app: AgentApp):
    async with app.run_test(size=SIZE) as pilot:
        was = app.theme
        picker = await open_picker(pilot, app, "/theme")
        assert marked(picker) == [was]
        await pilot.press("down")
        await until(pilot, lambda: app.theme != was)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, Picker))
        assert app.theme == was
        picker = await open_picker(pilot, app, "/theme")
        await pilot.press(*"agent-light")
        assert shown_options(picker)[0] == "agent-light"
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, Picker))
        assert app.theme == "agent-light"
        assert "Theme switched to agent-light" in await last_reply(pilot, app)


async def test_model_picker_shows_the_usage_and_switches(app: AgentApp, fake: FakeOpenAI):
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app, "/model")
        note = str(picker.query_one("#picker-note", Static).render())
        assert "This conversation used 0 input and 0 output tokens" in note
        assert shown_options(picker) == ["m1", "m2"]
        await pilot.press("m", "2", "enter")
        await until(pilot, lambda: app.session.conversation.model.endswith("/m2"))


async def test_model_name_the_server_does_not_list_is_warned(app: AgentApp):
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "/model no-such-model")
        said = await last_reply(pilot, app)
        assert "The server does not list no-such-model" in said
        assert app.session.conversation.model.endswith("/no-such-model")


async def test_skills_picker_switches_a_skill_off(app: AgentApp):
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app, "/skills")
        assert "off review-change" in shown_options(picker)
        await pilot.press(*"review-change", "enter")
        said = await last_reply(pilot, app)
        assert "Skill review-change is off" in said
        await send(pilot, app, "/skills")
        await until(pilot, lambda: isinstance(app.screen, Picker))
        assert "on review-change" in shown_options(app.screen)  # type: ignore[arg-type]


async def test_mcp_picker_restarts_the_chosen_server(app: AgentApp):
    config = paths.config_dir()
    config.mkdir(parents=True, exist_ok=True)
    servers = {"mcpServers": {"docs": {"command": "docs-server"}, "web": {"command": "web"}}}
    (config / "mcp.json").write_text(json.dumps(servers))
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot, app, "/mcp")
        assert shown_options(picker) == ["docs", "web"]
        await pilot.press("w", "enter")
        said = await last_reply(pilot, app)
        assert "web" in said and "docs" not in said
