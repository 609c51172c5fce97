"""Background commands in the TUI (issue 16): /shells offers to end one, and quitting
ends them all (the session ends when `agent` closes it after the app)."""

from __future__ import annotations

import json

from agent_cli.frontends.interactive import Interactive
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.picker import Picker
from tests.frontends.tui.support import SIZE, send, settle, until
from tests.support.fake_openai import FakeOpenAI, text, tool_calls
from tests.support.processes import group_members


def start(command: str, call_id: str = "c1") -> object:
    args = json.dumps({"command": command, "background": True})
    return tool_calls((call_id, "exec_shell_command", args))


async def test_shells_opens_a_picker_that_ends_the_chosen_command(app: AgentApp, fake: FakeOpenAI):
    fake.add(start("sleep 300"), text("It runs."))
    async with app.run_test(size=SIZE) as pilot:
        app.session.set_mode("full")
        await send(pilot, app, "start a server")
        await settle(pilot, app)
        shells = app.session.shells
        assert shells is not None and [j.id for j in shells.running()] == ["bg1"]
        pgid = shells.running()[0].process.pid
        await send(pilot, app, "/shells")
        await until(pilot, lambda: isinstance(app.screen, Picker))
        await pilot.press("enter")
        await until(pilot, lambda: not shells.running())
        assert group_members(pgid) == []


async def test_quitting_ends_every_background_command(
    app: AgentApp, fake: FakeOpenAI, interactive: Interactive
):
    fake.add(start("sleep 300 & sleep 300"), text("They run."))
    async with app.run_test(size=SIZE) as pilot:
        app.session.set_mode("full")
        await send(pilot, app, "start two")
        await settle(pilot, app)
        shells = app.session.shells
        assert shells is not None
        pgid = shells.running()[0].process.pid
        assert group_members(pgid)
        await send(pilot, app, "/quit")
    await interactive.aclose()  # what `agent` does once the app has ended
    assert group_members(pgid) == []
