"""The TUI while it works and after (issue 20): honest results, /undo, the live status."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent_cli.engine.items import NoticeItem
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.notice_view import NoticeView
from agent_cli.frontends.tui.tool_card import ToolCard
from tests.frontends.tui.support import SIZE, Events, send, settle, shown_text, until
from tests.support.fake_openai import FakeOpenAI, http_error, text, tool_calls


def git(workspace: Path, *args: str) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", *identity, *args], cwd=workspace, check=True, capture_output=True)


async def test_undo_refreshes_the_dirty_marker_at_once_and_says_what_it_reverted(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "a.txt").write_text("before\n")
    git(workspace, "add", "a.txt")
    git(workspace, "commit", "-qm", "first")
    arguments = json.dumps({"path": "a.txt", "content": "after\n"})
    fake.add(tool_calls(("c1", "write_file", arguments)), text("Written."))
    app.session.set_mode("full")
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "change it")
        await settle(pilot, app)
        await until(pilot, lambda: app.status.branch == "main*")
        await send(pilot, app, "/undo")
        await until(pilot, lambda: app.status.branch == "main")

        def said() -> list[NoticeView]:
            return [v for v in app.transcript.query(NoticeView) if "/undo" in v.text]

        await until(pilot, said)
        await pilot.pause()
        notices = said()
        assert len(notices) == 1, "said once: the notice, no second reply"
        assert "Restored 1 file" in shown_text(notices[0])


async def test_a_retry_notice_is_replaced_by_the_outcome_once_the_model_answers(
    app: AgentApp, fake: FakeOpenAI
):
    fake.add(
        http_error(503, "busy", retry_after=0.01),
        http_error(503, "busy", retry_after=0.01),
        text("Here now."),
    )
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "hello")
        await settle(pilot, app)
        notices = list(app.transcript.query(NoticeView))
        assert len(notices) == 1, [n.text for n in notices]
        shown = shown_text(notices[0])
        assert "it answered after retrying 2 times" in shown and "trying again" not in shown
        assert notices[0].has_class("-info") and not notices[0].has_class("-warn")
        stored = [i for i in app.session.conversation.items if isinstance(i, NoticeItem)]
        assert [i.text for i in stored] == [notices[0].text]


async def test_the_status_line_says_what_the_run_does_and_escape_stops_it(
    interactive, settings, fake: FakeOpenAI
):
    now = [100.0]
    app = AgentApp(interactive, settings, clock=lambda: now[0])
    command = json.dumps({"command": "sleep 30", "timeout": 60})
    fake.add(tool_calls(("c1", "exec_shell_command", command)), text("Not reached."))
    app.session.set_mode("full")
    recorder = Events()
    app.session.events.subscribe(recorder)
    async with app.run_test(size=(140, 20)) as pilot:
        await send(pilot, app, "wait a while")
        await until(pilot, lambda: app.status.activity == "running `sleep 30`")
        now[0] += 75
        app.status.refresh()
        await pilot.pause()
        shown = str(app.status.render())
        assert shown.startswith("… running `sleep 30` · 1m 15s · ↑10 ↓5 · esc to interrupt · ")
        assert "project" in shown and "ask" not in shown
        await pilot.press("escape")
        await settle(pilot, app)
        assert recorder.finished() == ["stopped"]
        assert app.status.state == "idle" and "esc to interrupt" not in str(app.status.render())
        assert str(app.status.render()).endswith("idle")


LONG_COMMAND = "sleep 30 && echo a-rather-long-command-line-for-the-status-line-to-shorten"


@pytest.mark.parametrize("width", [60, 80])
async def test_on_a_narrow_terminal_the_status_line_shortens_what_runs_not_its_time_or_keys(
    interactive, settings, fake: FakeOpenAI, width: int
):
    now = [100.0]
    app = AgentApp(interactive, settings, clock=lambda: now[0])
    command = json.dumps({"command": LONG_COMMAND, "timeout": 60})
    fake.add(tool_calls(("c1", "exec_shell_command", command)), text("Not reached."))
    app.session.set_mode("full")
    async with app.run_test(size=(width, 20)) as pilot:
        await send(pilot, app, "wait a while")
        await until(pilot, lambda: app.status.activity.startswith("running `sleep 30 && echo"))
        now[0] += 75
        app.status.refresh()
        await pilot.pause()
        shown = app.status.render_line(0).text  # as painted, the line's cut included
        assert len(shown) == width - 2, "inside the padding"
        said, rest = shown.strip().split(" · ", 1)
        assert said.startswith("… running `sleep") and said.endswith("…`"), said
        assert rest.startswith("1m 15s · ↑10 ↓5 · esc to interrupt"), shown
        await pilot.press("escape")
        await settle(pilot, app)
        assert app.status.state == "idle"


async def test_on_a_narrow_terminal_the_quit_hint_is_shown_first(app: AgentApp):
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+c")
        await until(pilot, lambda: bool(app.status.hint))
        await pilot.pause()
        shown = app.status.render_line(0).text.strip()
        assert shown.startswith("Ctrl+C again to quit · "), shown


async def test_the_welcome_shows_where_and_how_and_goes_with_the_first_message(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    from agent_cli.frontends.tui.welcome import Welcome

    fake.add(text("Hello."))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        (welcome,) = app.transcript.query(Welcome)
        shown = str(welcome.render())
        assert f"agent in {workspace.name}" in shown and "openai/m1" in shown
        assert "mode ask" in shown
        for hint in ("/help", "@", "!", "Ctrl+J"):
            assert hint in shown
        await send(pilot, app, "hi")
        await settle(pilot, app)
        assert not app.transcript.query(Welcome), "gone with the first message"
        await send(pilot, app, "/new")
        await until(pilot, lambda: bool(app.transcript.query(Welcome)))


async def test_a_running_commands_card_shows_a_timer_and_its_last_lines_as_they_come(
    interactive, settings, fake: FakeOpenAI, workspace: Path
):
    now = [100.0]
    app = AgentApp(interactive, settings, clock=lambda: now[0])
    command = "seq 1 8; while [ ! -e gate ]; do sleep 0.02; done; echo after"
    arguments = json.dumps({"command": command, "timeout": 100})
    fake.add(tool_calls(("c1", "exec_shell_command", arguments)), text("Counted."))
    app.session.set_mode("full")
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "count")
        cards = lambda: list(app.transcript.query(ToolCard))  # noqa: E731
        await until(pilot, lambda: cards() and cards()[0].tail.is_attached)
        card = cards()[0]
        assert str(card.tail.render()).split() == ["4", "5", "6", "7", "8"], "its last 5 lines"
        now[0] += 12
        await until(pilot, lambda: "running · 12s" in str(card.header.render()))
        (workspace / "gate").touch()
        await settle(pilot, app)
        header = str(card.header.render())
        assert "✓" in header and "running" not in header and "12s" not in header
        assert not card.tail.is_attached, "collapsed as before once it ended"
