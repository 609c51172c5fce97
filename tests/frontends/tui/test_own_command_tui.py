"""`!command` in the TUI: its output in the transcript as it comes, Ctrl+C stops it, and the
model reads it with the next message."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.own_command_view import OwnCommandView
from tests.frontends.tui.support import SIZE, send, settle, until
from tests.support.fake_openai import FakeOpenAI, text


@pytest.fixture(autouse=True)
def plain_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELL", "/bin/sh")


def shown(view: OwnCommandView) -> str:
    return str(view.render())


async def test_the_output_shows_and_goes_with_the_next_message(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    fake.add(text("Two lines."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "!cat notes.txt")
        await until(pilot, lambda: "exit code 0" in shown(app.transcript.query_one(OwnCommandView)))
        assert "$ cat notes.txt\nalpha\nbeta" in shown(app.transcript.query_one(OwnCommandView))
        assert app.composer.input.text == ""
        assert fake.requests == [], "a command is not a model turn"
        await send(pilot, app, "how many lines?")
        await until(pilot, lambda: len(fake.requests) == 1)
        await settle(pilot, app)
    message = fake.requests[0]["messages"][-1]["content"]
    assert message.startswith('how many lines?\n\n<attached command="!cat notes.txt">')
    assert "(exit code 0):\n$ cat notes.txt\nalpha\nbeta\n</attached>" in message


async def test_ctrl_c_stops_the_command(app: AgentApp, workspace: Path):
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "!echo started; sleep 60")
        await until(pilot, lambda: bool(app.transcript.query(OwnCommandView)))
        view = app.transcript.query_one(OwnCommandView)
        await until(pilot, lambda: "started" in shown(view))
        await pilot.press("ctrl+c")
        await until(pilot, lambda: view.ended.startswith("stopped · the model reads this"))
        assert app.interactive.own.running is None and view.has_class("-failed")
        assert len(app.interactive.own.context) == 1, "what it printed is kept for the model"


async def test_a_bang_while_a_run_goes_is_refused_and_kept_in_the_input(
    app: AgentApp, fake: FakeOpenAI
):
    fake.add(text("slow " * 200, chunks=200).replace(split=50, delay=0.05))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "go")
        await until(pilot, lambda: app.session.running)
        await send(pilot, app, "!echo hi")
        assert not app.transcript.query(OwnCommandView)
        assert app.composer.input.text == "!echo hi"
        app.session.stop()
        await settle(pilot, app)
