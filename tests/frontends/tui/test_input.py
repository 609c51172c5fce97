"""The input as a person uses it: new lines, long pastes, focus, scrolling, copying."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from textual import events

from agent_cli.engine.items import UserItem
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.assistant_view import AssistantView
from agent_cli.frontends.tui.notice_view import NoticeView
from agent_cli.frontends.tui.pasted import Pastes
from agent_cli.frontends.tui.plan_view import PlanView
from agent_cli.frontends.tui.prompt_input import PLACEHOLDERS
from agent_cli.frontends.tui.reasoning_block import ReasoningBlock
from agent_cli.frontends.tui.tool_card import ToolCard
from agent_cli.frontends.tui.user_message import UserMessage
from tests.frontends.tui.support import SIZE, Events, send, settle, shown_text, until
from tests.support.fake_openai import FakeOpenAI, held, text, tool_calls

PASTED = "\n".join(f"line {n} of the log" for n in range(1, 301))


def test_a_long_paste_is_a_label_and_expands_in_one_pass():
    pastes = Pastes()
    assert pastes.collapse("one\ntwo") == "one\ntwo", "a short paste goes in as it is"
    label = pastes.collapse(PASTED)
    assert label == "[pasted text #1, 300 lines]"
    tricky = "\n".join(["[pasted text #1, 300 lines]"] * 11)  # holds the first one's label
    second = pastes.collapse(tricky)
    assert second == "[pasted text #2, 11 lines]"
    assert pastes.expand(f"see {label} and {second}") == f"see {PASTED} and {tricky}"


def _first_line(app: AgentApp) -> str:
    return app.composer.input.render_line(0).text.strip()


async def test_the_input_has_a_marker_on_its_first_line_and_a_placeholder_while_empty(
    app: AgentApp,
):
    async with app.run_test(size=SIZE) as pilot:
        marker, prompt = app.query_one("#prompt-marker"), app.composer.input
        await until(pilot, lambda: _first_line(app) == PLACEHOLDERS[0])
        assert str(marker.render()) == "›"
        await pilot.press("a", "ctrl+j", "b", "ctrl+j", "c")
        await until(pilot, lambda: prompt.size.height == 3)
        assert marker.region.y == prompt.region.y and marker.region.height == 1, "first line only"
        assert _first_line(app) == "a", "no placeholder once there is text"
        prompt.set_text("")
        await until(pilot, lambda: _first_line(app).startswith("Ask anything"))


async def test_a_narrow_input_has_a_shorter_placeholder(app: AgentApp):
    assert PLACEHOLDERS[1:] == ("Ask anything · / for commands · @ for files", "Ask anything")
    async with app.run_test(size=(60, 20)) as pilot:
        await until(pilot, lambda: _first_line(app) == PLACEHOLDERS[1])
        await pilot.resize_terminal(30, 20)
        await until(pilot, lambda: _first_line(app) == PLACEHOLDERS[2])


async def test_backslash_then_enter_adds_a_line_and_sends_nothing(app: AgentApp):
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "\\", "enter", "b")
        assert app.composer.input.text == "a\nb"
        assert not app.session.conversation.items


async def test_help_tells_the_new_line_keys_truthfully(app: AgentApp):
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "/help")
        await until(pilot, lambda: bool(app.transcript.query(NoticeView)))
        await pilot.pause()
        shown = " ".join(shown_text(app.transcript.query(NoticeView).last()).split())
        assert "Ctrl+J, or \\ then Enter, adds a line" in shown
        assert "Esc then Enter" not in shown, "Esc then Enter sends in the TUI"
        assert "PageUp/PageDown" in shown and "Shift+Tab" in shown
        assert "Esc stops the run as Ctrl+C does, wherever the focus is" in shown


async def test_a_long_paste_is_collapsed_sent_whole_and_folded_in_the_transcript(
    app: AgentApp, fake: FakeOpenAI
):
    fake.add(text("I read the log."))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"why: ")
        app.post_message(events.Paste(PASTED))  # as the terminal sends a bracketed paste
        await until(pilot, lambda: "pasted" in app.composer.input.text)
        assert app.composer.input.text == "why: [pasted text #1, 300 lines]"
        await pilot.press("enter")
        await settle(pilot, app)
        sent = app.session.conversation.items[0]
        assert isinstance(sent, UserItem) and sent.text == f"why: {PASTED}", "sent whole"
        said = fake.requests[-1]["messages"][-1]
        assert said["role"] == "user" and PASTED in said["content"], "the model reads all of it"
        view = app.transcript.query_one(UserMessage)
        shown = str(view.render())
        assert "line 3 of the log" in shown and "line 4 of the log" not in shown
        assert "297 more lines" in shown
        await pilot.click(view)
        await pilot.pause()
        assert "line 300 of the log" in str(view.render()), "a click unfolds it"
        assert app.composer.input.text == ""


async def test_ctrl_o_puts_the_paste_itself_in_the_input(app: AgentApp):
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(events.Paste(PASTED))
        await until(pilot, lambda: "pasted" in app.composer.input.text)
        await pilot.press("ctrl+o")
        assert app.composer.input.text == PASTED


async def tab_to_a_card(pilot, app: AgentApp) -> ToolCard:
    """Tab from the empty input until a card has the focus, as a person reaches one."""
    for _ in range(8):
        await pilot.press("tab")
        if isinstance(app.focused, ToolCard):
            return app.focused
    raise AssertionError(f"Tab did not reach a card (the focus is on {app.focused})")


async def test_after_a_click_on_a_card_typing_goes_to_the_input(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    (workspace / "notes.txt").write_text("alpha\n")
    arguments = json.dumps({"path": "notes.txt"})
    fake.add(tool_calls(("call_1", "read_file", arguments)), text("It says alpha."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "read the notes")
        await settle(pilot, app)
        card = app.transcript.query_one(ToolCard)
        await pilot.click(card)
        await pilot.pause()
        assert card.expanded, "the click opens the card"
        await pilot.press(*"can you")  # `c` is a focused card's copy key
        assert app.focused is app.composer.input
        assert app.composer.input.text == "can you", "no key is lost"
        assert app.clipboard == "", "nothing was copied"
        assert card.expanded
        await pilot.press("enter")  # the input's Enter: it sends
        await until(pilot, lambda: len(fake.requests) == 3)


async def test_a_cards_keys_are_its_own_once_it_is_reached_with_tab(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    (workspace / "notes.txt").write_text("alpha\n")
    (workspace / "todo.txt").write_text("beta\n")
    fake.add(
        tool_calls(
            ("call_1", "read_file", json.dumps({"path": "notes.txt"})),
            ("call_2", "read_file", json.dumps({"path": "todo.txt"})),
        ),
        text("Alpha and beta."),
    )
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "read both")
        await settle(pilot, app)
        cards = list(app.transcript.query(ToolCard))
        assert len(cards) == 2
        card = await tab_to_a_card(pilot, app)
        await pilot.press("c")
        assert app.clipboard == card.item.result, "`c` copies its output"
        await pilot.press("enter")
        assert card.expanded, "Enter opens it"
        assert app.composer.input.text == ""
        copied = app.clipboard
        other = cards[1] if card is cards[0] else cards[0]
        await pilot.click(other)  # a click on another card hands the keys back to the input
        await pilot.pause()
        assert other.expanded
        await pilot.press(*"can you")
        assert app.composer.input.text == "can you"
        assert app.focused is app.composer.input and app.clipboard == copied


async def test_after_a_click_on_the_plan_a_space_goes_to_the_input(app: AgentApp, fake: FakeOpenAI):
    from tests.frontends.tui.test_plan import plan_call

    steps = [{"step": f"Step {n}", "status": "pending"} for n in range(1, 10)]
    fake.add(tool_calls(plan_call(steps)), text("Going."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "do the nine steps")
        await settle(pilot, app)
        view = app.plan_view
        assert view.folded
        await pilot.click(PlanView)
        await pilot.pause()
        assert not view.folded, "the click unfolds it"
        await pilot.press("space", *"go")  # Space is a focused plan's fold key
        assert app.composer.input.text == " go", "no key is lost"
        assert not view.folded, "the plan stays unfolded"
        assert app.focused is app.composer.input


async def test_escape_with_a_card_focused_stops_the_run(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    (workspace / "notes.txt").write_text("alpha\n")
    arguments = json.dumps({"path": "notes.txt"})
    gate = threading.Event()  # the second answer waits mid-stream: the run goes on
    fake.add(
        tool_calls(("call_1", "read_file", arguments)),
        text("It says alpha."),
        held(text("Reading it once more, slowly."), gate),
    )
    recorder = Events()
    app.session.events.subscribe(recorder)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, app, "read the notes")
            await settle(pilot, app)
            await send(pilot, app, "and again")
            await until(pilot, lambda: len(fake.requests) == 3 and app.session.running)
            await tab_to_a_card(pilot, app)
            await pilot.press("escape")
            await settle(pilot, app)
            assert recorder.finished() == ["answered", "stopped"]
            assert len(fake.requests) == 3, "nothing more was asked of the model"
    finally:
        gate.set()


async def test_escape_in_an_input_with_text_stops_the_run_and_keeps_the_text(
    app: AgentApp, fake: FakeOpenAI
):
    gate = threading.Event()
    fake.add(held(text("Working on it, slowly."), gate))
    recorder = Events()
    app.session.events.subscribe(recorder)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, app, "start")
            await until(pilot, lambda: len(fake.requests) == 1 and app.session.running)
            await pilot.press(*"half typed")
            await pilot.press("escape")
            await settle(pilot, app)
            assert recorder.finished() == ["stopped"]
            assert app.composer.input.text == "half typed"
    finally:
        gate.set()


async def test_escape_on_an_open_approval_card_denies_and_the_run_goes_on(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    from agent_cli.frontends.tui.approval import ApprovalScreen

    arguments = json.dumps({"path": "hello.txt", "content": "hi\n"})
    fake.add(tool_calls(("call_1", "write_file", arguments)), text("Not written, then."))
    recorder = Events()
    app.session.events.subscribe(recorder)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "write it")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("escape")
        await settle(pilot, app)
        assert recorder.finished() == ["answered"], "Escape was the card's no, not a stop"
        assert len(fake.requests) == 2 and not (workspace / "hello.txt").exists()
        assert app.transcript.query_one(ToolCard).has_class("-denied")


async def test_after_a_click_on_the_reasoning_typing_goes_to_the_input(
    app: AgentApp, fake: FakeOpenAI
):
    from tests.support.fake_openai import chunk, frames, raw

    body = frames(
        chunk({"role": "assistant", "reasoning_content": "Think first."}),
        chunk({"content": "Answer."}),
        chunk({}, finish_reason="stop"),
    )
    fake.add(raw(body))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "go")
        await settle(pilot, app)
        block = app.transcript.query_one(ReasoningBlock)
        await pilot.click(block)
        await pilot.pause()
        assert app.focused is not app.composer.input
        await pilot.press("o", "k")
        assert app.focused is app.composer.input and app.composer.input.text == "ok"


async def test_page_keys_scroll_the_transcript_from_the_input(app: AgentApp, fake: FakeOpenAI):
    fake.add(text("\n\n".join(f"Paragraph {n}." for n in range(80))))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "talk")
        await settle(pilot, app)
        transcript = app.transcript
        await until(pilot, lambda: transcript.max_scroll_y > 0)
        transcript.scroll_end(animate=False)
        await pilot.pause()
        bottom = transcript.scroll_y
        await pilot.press("pageup")
        await until(pilot, lambda: transcript.scroll_y < bottom)
        assert app.focused is app.composer.input
        await pilot.press("home")  # an empty input: Home is the transcript's
        await until(pilot, lambda: transcript.scroll_y == 0)
        await pilot.press("end")
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        await pilot.press("x", "home")  # with text, Home moves the cursor
        assert app.composer.input.cursor_location == (0, 0)
        assert transcript.scroll_y == transcript.max_scroll_y
        await pilot.press("ctrl+home")
        await until(pilot, lambda: transcript.scroll_y == 0)


async def test_copy_puts_the_last_answer_and_a_cards_output_on_the_clipboard(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    (workspace / "notes.txt").write_text("alpha\n")
    arguments = json.dumps({"path": "notes.txt"})
    fake.add(tool_calls(("call_1", "read_file", arguments)), text("It says **alpha**."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "/copy")
        await until(pilot, lambda: bool(app.transcript.query(NoticeView)))
        assert app.clipboard == ""
        await send(pilot, app, "read the notes")
        await settle(pilot, app)
        await send(pilot, app, "/copy")
        await until(pilot, lambda: app.clipboard == "It says **alpha**.")
        card = app.transcript.query_one(ToolCard)
        card.focus()
        await pilot.press("c")
        assert "alpha" in app.clipboard and "It says" not in app.clipboard
        assert app.composer.input.text == "", "a card's own key is not typed into the input"
        assert app.transcript.query(AssistantView)
