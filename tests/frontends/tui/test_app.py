"""The TUI driven as a person would, against the loopback fake server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

from textual.widgets import Static

from agent_cli import wiring
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.assistant_view import AssistantView
from agent_cli.frontends.tui.notice_view import NoticeView
from agent_cli.frontends.tui.tool_card import ToolCard
from agent_cli.wiring import Opening
from tests.frontends.tui.support import (
    RUN_TIMEOUT,
    SIZE,
    Events,
    send,
    settle,
    shown_text,
    until,
)
from tests.support.fake_openai import (
    FakeOpenAI,
    Scripted,
    chunk,
    frames,
    held,
    raw,
    text,
    tool_calls,
)

ANSWER = (
    "Here is the plan.\n\n"
    "1. Read the file\n2. Change the function\n\n"
    "```python\ndef greet(name):\n    return f'hello {name}'\n```\n\n"
    "That is **all** for now."
)


def call_in_steps(scripted: Scripted) -> tuple[Scripted, list[bytes], bytes]:
    """A tool-call answer as its opening, one SSE event per tool-call fragment, and the
    rest (finish reason, usage, [DONE]) in one piece."""
    events = [event + b"\n\n" for event in scripted.body.split(b"\n\n") if event]
    calls = [i for i, event in enumerate(events) if b'"tool_calls": [' in event]
    first, last = calls[0], calls[-1]
    opening = scripted.replace(body=b"".join(events[:first]))
    return opening, events[first : last + 1], b"".join(events[last + 1 :])


async def test_a_streamed_answer_appears_as_markdown(app: AgentApp, fake: FakeOpenAI):
    fake.add(text(ANSWER, chunks=300))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "make a plan")
        await settle(pilot, app)
        views = list(app.transcript.query(AssistantView))
        assert len(views) == 1
        shown = shown_text(views[0])
        assert "Here is the plan." in shown
        assert "def greet(name):" in shown
        assert "That is all for now." in shown, "Markdown bold is rendered, not shown as **"
        assert app.status.state == "idle"
        assert app.status.tokens == 15


async def test_a_tool_card_goes_through_its_states_and_expands(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    arguments = json.dumps({"path": "notes.txt"})
    fake.add(tool_calls(("call_1", "read_file", arguments)), text("It says alpha."))
    recorder = Events()
    app.session.events.subscribe(recorder)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "read the notes")
        await settle(pilot, app)
        states = recorder.tool_states
        assert states[0] == "composing" and states[-1] == "done"
        assert "running" in states
        card = app.transcript.query_one(ToolCard)
        assert card.has_class("-done")
        header = str(card.header.render())
        assert "Read notes.txt" in header and "done" in header
        assert not card.body.children, "a card is compact until expanded"
        card.focus()
        await pilot.press("enter")
        await pilot.pause()
        shown = " ".join(str(s.render()) for s in card.body.query(Static))
        assert "alpha" in shown and "beta" in shown
        await pilot.click(card)
        await pilot.pause()
        assert not card.body.children, "a click folds it again"


async def test_help_shows_the_command_table(app: AgentApp):
    # Tall enough for the whole reply: only what is near the view is drawn.
    async with app.run_test(size=(SIZE[0], 80)) as pilot:
        await send(pilot, app, "/help")
        await until(pilot, lambda: bool(app.transcript.query(NoticeView)))
        await pilot.pause()
        shown = shown_text(app.transcript.query(NoticeView).last())
        rows = [line for line in shown.splitlines() if "/theme [NAME]" in line]
        assert rows and "show or switch the theme" in rows[0], "a table: one row per command"
        assert "Ctrl+F" in shown


async def test_mode_command_changes_the_status_line(app: AgentApp):
    async with app.run_test(size=SIZE) as pilot:
        assert app.status.mode == "ask"
        await send(pilot, app, "/mode read-only")
        await until(pilot, lambda: app.session.mode == "read-only")
        await pilot.pause()
        assert app.status.mode == "read-only"
        assert "read-only" in str(app.status.render())


async def test_new_clears_the_transcript_and_listens_to_the_new_session(
    app: AgentApp, fake: FakeOpenAI
):
    fake.add(text("First answer."), text("Second answer."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "one")
        await settle(pilot, app)
        first = app.session
        assert app.transcript.query(AssistantView)
        await send(pilot, app, "/new")
        await until(pilot, lambda: app.session is not first)
        await pilot.pause()
        assert not app.transcript.query(AssistantView)
        assert not app.session.conversation.items
        await send(pilot, app, "two")
        await settle(pilot, app)
        assert "Second answer." in shown_text(app.transcript.query_one(AssistantView))


async def test_clear_empties_the_view_but_keeps_the_conversation(app: AgentApp, fake: FakeOpenAI):
    fake.add(text("Kept."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "hello")
        await settle(pilot, app)
        await send(pilot, app, "/clear")
        await until(pilot, lambda: not app.transcript.query(AssistantView))
        assert len(app.session.conversation.items) == 2


async def test_ctrl_c_stops_a_run_and_twice_when_idle_quits(app: AgentApp, fake: FakeOpenAI):
    words = [chunk({"content": f"word{n} "}) for n in range(400)]
    start, end = chunk({"role": "assistant", "content": ""}), chunk({}, finish_reason="stop")
    body = frames(start, *words, end)
    fake.add(raw(body, split=300, delay=0.05))
    recorder = Events()
    app.session.events.subscribe(recorder)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "talk slowly")
        await until(pilot, lambda: bool(app.transcript.query(AssistantView)))
        await pilot.press("ctrl+c")
        await settle(pilot, app)
        assert recorder.finished() == ["stopped"]
        assert app.session.conversation.state == "idle"
        assert app.status.state == "idle"
        view = app.transcript.query_one(AssistantView)
        assert not view.streaming
        await pilot.press("ctrl+c")
        assert app.status.hint, "the first idle Ctrl+C only says how to quit"
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0


async def test_up_recalls_the_last_message_and_history_is_kept(
    app: AgentApp, fake: FakeOpenAI, interactive, settings
):
    fake.add(text("ok"))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "remember\nthis")
        await settle(pilot, app)
        assert app.composer.input.text == ""
        await pilot.press("up")
        assert app.composer.input.text == "remember\nthis"
        await pilot.press("down")
        assert app.composer.input.text == ""
    again = AgentApp(interactive, settings)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.press("up")
        assert again.composer.input.text == "remember\nthis"


async def test_shift_enter_and_ctrl_j_add_lines(app: AgentApp):
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "ctrl+j", "b", "shift+enter", "c")
        assert app.composer.input.text == "a\nb\nc"
        assert not app.session.conversation.items


async def test_at_completes_a_workspace_file(app: AgentApp, workspace: Path):
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("print()\n")
    (workspace / "node_modules").mkdir()
    (workspace / "node_modules" / "main.js").write_text("")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"look at @mai")
        menu = app.composer.menu
        await until(pilot, lambda: menu.display)
        assert [c.label for c in menu.candidates] == ["src/main.py"]
        await pilot.press("tab")
        assert app.composer.input.text == "look at @src/main.py "
        assert not menu.display


async def test_slash_completes_a_command(app: AgentApp):
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("/", "t", "h")
        assert app.composer.menu.display
        await pilot.press("enter")
        assert app.composer.input.text == "/theme "


async def test_an_approval_card_is_shown_and_its_answer_reaches_the_run(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    from agent_cli.frontends.tui.approval import ApprovalScreen

    arguments = json.dumps({"path": "hello.txt", "content": "hi\n"})
    fake.add(tool_calls(("call_1", "write_file", arguments)), text("Written."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "write it")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        assert app.status.state == "waiting"
        assert not (workspace / "hello.txt").exists(), "nothing runs before a yes"
        await pilot.press("y")
        await settle(pilot, app)
        assert (workspace / "hello.txt").read_text() == "hi\n"
        assert app.transcript.query_one(ToolCard).has_class("-done")


async def test_a_stop_closes_the_waiting_card_and_denies(app: AgentApp, fake: FakeOpenAI):
    from agent_cli.frontends.tui.approval import ApprovalScreen

    arguments = json.dumps({"command": "touch x"})
    fake.add(tool_calls(("call_1", "exec_shell_command", arguments)))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "touch it")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("ctrl+c")
        await settle(pilot, app)
        await until(pilot, lambda: not isinstance(app.screen, ApprovalScreen))
        assert app.transcript.query_one(ToolCard).has_class("-denied")
        assert app.approvals.shown is None


async def test_a_run_that_ends_while_the_terminal_is_elsewhere_rings(
    app: AgentApp, fake: FakeOpenAI
):
    gate = threading.Event()  # the answer ends once the person has looked away
    fake.add(held(text("Done."), gate))
    rings: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        app.bell = lambda: rings.append("bell")  # type: ignore[method-assign]
        await send(pilot, app, "go")
        app.app_focus = False  # after the key: a key press means the terminal has focus
        gate.set()
        await settle(pilot, app)
        assert rings == ["bell"]


async def test_reasoning_streams_into_a_collapsed_block_above_the_answer(
    app: AgentApp, fake: FakeOpenAI
):
    fake.add(text("The answer.", reasoning="First I think about it carefully."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "think")
        await settle(pilot, app)
        view = app.transcript.query_one(AssistantView)
        block = view.reasoning
        assert block is not None and block.collapsed
        children = list(app.transcript.children)
        assert children.index(block) == children.index(view) - 1, "the reasoning comes first"
        assert block.text == "First I think about it carefully."
        block.collapsed = False
        await pilot.pause()
        assert "carefully" in str(block.query_one(".reasoning-text", Static).render())


async def test_the_view_follows_the_stream_until_the_person_scrolls_up(
    app: AgentApp, fake: FakeOpenAI
):
    lines = [chunk({"content": f"line {n}\n\n"}) for n in range(300)]
    start, end = chunk({"role": "assistant", "content": ""}), chunk({}, finish_reason="stop")
    fake.add(raw(frames(start, *lines, end), split=200, delay=0.01))
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        await send(pilot, app, "count")
        await until(pilot, lambda: transcript.max_scroll_y > 20)
        assert transcript.scroll_y == transcript.max_scroll_y, "pinned to the end"
        transcript.scroll_to(y=5, animate=False, immediate=True)  # the person scrolls up
        await until(pilot, lambda: transcript.max_scroll_y > 60)
        assert transcript.scroll_y == 5, "left where the person put it"
        await settle(pilot, app)


async def test_sessions_opens_a_picker_that_resumes_the_choice(app: AgentApp, fake: FakeOpenAI):
    from agent_cli.frontends.tui.picker import Picker

    fake.add(text("Old answer."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "an old question")
        await settle(pilot, app)
        old = app.session.conversation.id
        await send(pilot, app, "/new")
        await until(pilot, lambda: app.session.conversation.id != old)
        await send(pilot, app, "/sessions")
        await until(pilot, lambda: isinstance(app.screen, Picker))
        await pilot.press("enter")
        await until(pilot, lambda: app.session.conversation.id == old)
        await pilot.pause()
        assert "Old answer." in shown_text(app.transcript.query_one(AssistantView))


async def test_the_status_line_shows_the_context_in_use_when_the_window_is_known(settings):
    import dataclasses

    provider = dataclasses.replace(settings.provider, context_window=32_000)
    settings = dataclasses.replace(settings, provider=provider)
    interactive = await wiring.open_interactive(settings, Opening(), "ask")
    app = AgentApp(interactive, settings)
    try:
        async with app.run_test(size=SIZE) as pilot:
            assert "context 0 / 32.0k" in str(app.status.render())
            app.status.in_context = 8_100
            await pilot.pause()
            assert "context 8.1k / 32.0k" in str(app.status.render())
    finally:
        await interactive.aclose()


async def test_the_status_line_shows_no_guessed_window_and_a_configured_price(settings):
    import dataclasses

    from agent_cli.settings import Price

    fake_model = "m1"  # not in the table of known windows
    priced = dataclasses.replace(settings, prices={fake_model: Price(2.0, 10.0)})
    interactive = await wiring.open_interactive(priced, Opening(), "ask")
    app = AgentApp(interactive, priced)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            status = str(app.status.render())
            assert "context" not in status and "$0.0000" in status
    finally:
        await interactive.aclose()


async def test_a_recalled_command_does_not_open_the_menu(app: AgentApp):
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "/help")
        await until(pilot, lambda: bool(app.transcript.query(NoticeView)))
        await pilot.press("up")
        assert app.composer.input.text == "/help"
        assert not app.composer.menu.display
        await pilot.press("down")
        assert app.composer.input.text == ""


async def test_a_workspaces_own_mcp_servers_are_asked_about_in_a_modal(
    settings, fake: FakeOpenAI, workspace: Path
):
    import sys

    from agent_cli import mcp_config
    from agent_cli.commands.trust import ask_trust_through
    from agent_cli.frontends.interactive import Questions
    from agent_cli.frontends.tui.question import Question
    from tests.support.mcp_servers import SERVER

    servers = {"mcpServers": {"repo": {"command": sys.executable, "args": [str(SERVER)]}}}
    (workspace / ".agent").mkdir()
    (workspace / ".agent" / "mcp.json").write_text(json.dumps(servers))
    questions = Questions()
    interactive = await wiring.open_interactive(
        settings, Opening(), "ask", ask_trust_through(questions), None, questions
    )
    app = AgentApp(interactive, settings)
    fake.add(text("Hello."))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, app, "hi")
            await until(pilot, lambda: isinstance(app.screen, Question))
            assert "repo" in app.screen.question and "MCP servers" in app.screen.question
            await pilot.press("n")
            await settle(pilot, app)
            assert not mcp_config.is_trusted(workspace, workspace / ".agent" / "mcp.json")
            assert "Hello." in shown_text(app.transcript.query_one(AssistantView))
    finally:
        await interactive.aclose()


async def test_a_card_shows_its_title_and_bytes_while_composing_then_denied_and_error(
    app: AgentApp, fake: FakeOpenAI
):
    from agent_cli.frontends.tui.approval import ApprovalScreen

    arguments = json.dumps({"path": "a.txt", "content": "x" * 3000})
    # The call's fragments go out one at a time, each once the card has shown the last.
    gate = threading.Semaphore(0)
    opening, fragments, ending = call_in_steps(tool_calls(("c1", "write_file", arguments)))

    def released() -> Iterator[bytes]:
        for piece in [*fragments, ending]:
            if not gate.acquire(timeout=RUN_TIMEOUT):
                return  # the test gave up: end the stream
            yield piece

    missing = tool_calls(("c2", "read_file", json.dumps({"path": "missing.txt"})))
    fake.add(opening.replace(more=released), text("Not written."), missing, text("No such file."))
    headers: list[str] = []

    def header() -> str:
        cards = list(app.transcript.query(ToolCard))
        return str(cards[0].header.render()) if cards else ""

    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "write it")
        for _ in fragments:
            gate.release()
            await until(pilot, lambda: header() != (headers[-1] if headers else ""))
            headers.append(header())
        gate.release()  # the end of the answer: the card asks
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        composing = [h for h in headers if "composing" in h]
        assert len(composing) == len(fragments) >= 3, headers
        assert "Write a.txt" in composing[-1], "the title follows the arguments"
        sizes = [h.rpartition("· ")[2] for h in composing]
        assert sizes[-1].endswith("KB") and len(set(sizes)) == len(sizes), "the bytes grow"
        await pilot.press("n", "enter")
        await settle(pilot, app)
        denied = app.transcript.query_one(ToolCard)
        assert denied.has_class("-denied") and "denied" in str(denied.header.render())
        await send(pilot, app, "read the missing file")
        await settle(pilot, app)
        failed = list(app.transcript.query(ToolCard))[-1]
        assert failed.has_class("-error") and "error" in str(failed.header.render())
        failed.focus()
        await pilot.press("enter")
        await pilot.pause()
        shown = " ".join(str(s.render()) for s in failed.body.query(Static))
        assert "missing.txt" in shown, "the expanded card says what went wrong"


async def test_a_captured_print_does_not_break_the_app(app: AgentApp, fake: FakeOpenAI):
    """A library printing to stderr while the app runs (Textual captures and flushes it)."""
    import sys

    fake.add(text("Still fine."))
    async with app.run_test(size=SIZE) as pilot:
        print("a library talks", file=sys.stderr, flush=True)
        await send(pilot, app, "go")
        await settle(pilot, app)
        assert "Still fine." in shown_text(app.transcript.query_one(AssistantView))


async def test_reduce_motion_turns_off_textuals_animations(interactive, settings):
    import dataclasses

    still = AgentApp(interactive, settings)  # the tests' settings have reduce_motion on
    moving = AgentApp(interactive, dataclasses.replace(settings, reduce_motion=False))
    for app in (still, moving):
        app.close_feed()
    assert still.animation_level == "none" and moving.animation_level != "none"


async def test_no_bell_when_notifications_are_off(interactive, settings, fake: FakeOpenAI):
    import dataclasses

    quiet = AgentApp(interactive, dataclasses.replace(settings, notify=False))
    fake.add(text("Done.").replace(split=100, delay=0.05))
    rings: list[str] = []
    async with quiet.run_test(size=SIZE) as pilot:
        quiet.bell = lambda: rings.append("bell")  # type: ignore[method-assign]
        await send(pilot, quiet, "go")
        quiet.app_focus = False
        await settle(pilot, quiet)
        assert rings == [] and quiet.status.state == "idle"
