"""The TUI approval card: each key gives the Decision the loop expects, and the card looks right.

A tiny App pushes `ApprovalScreen` the way the real app does (`callback=request.resolve`),
so every test reads the answer from the request itself.
"""

from __future__ import annotations

import difflib
import itertools
import json
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Input, Static

from agent_cli.engine.approval import ApprovalRequest, Decision
from agent_cli.engine.items import ToolItem
from agent_cli.frontends.tui import themes
from agent_cli.frontends.tui.approval import (
    KEY_GUARD_SECONDS,
    NO_HUNKS,
    TO_READ_ONLY,
    ApprovalScreen,
)
from tests.frontends.tui.support import until

BEFORE = "".join(f"line_{n:02} = {n}\n" for n in range(1, 41))
# Three changes far enough apart (lines 5, 20, 35) to give three separate hunks.
AFTER = BEFORE.replace("line_05 = 5", "line_05 = 500").replace(
    "line_20 = 20", "line_20 = 2000\nline_20b = 21"
)
AFTER = AFTER.replace("line_35 = 35\n", "")
DIFF = "".join(
    difflib.unified_diff(
        BEFORE.splitlines(keepends=True),
        AFTER.splitlines(keepends=True),
        "a/src/numbers.py",
        "b/src/numbers.py",
    )
)
RULE = "write_file(src/**)"


def edit_request() -> ApprovalRequest:
    item = ToolItem("write_file", "call-1", title="Edit src/numbers.py", file="src/numbers.py")
    return ApprovalRequest(
        item, "edit", cwd="/work/project", diff=DIFF, suggested_rule=RULE, proposed=AFTER
    )


def command_request() -> ApprovalRequest:
    item = ToolItem("exec_shell_command", "call-2", title="Run pytest -q")
    return ApprovalRequest(
        item,
        "command",
        command="pytest -q tests/unit",
        cwd="/work/project",
        suggested_rule="exec_shell_command(pytest *)",
    )


def mcp_request() -> ApprovalRequest:
    args = '{"query": "textual modal screen", "limit": 3}'
    item = ToolItem("docs_search", "call-3", title="docs_search", args=args, mcp="docs")
    return ApprovalRequest(item, "tool", suggested_rule="docs_search")


class CardApp(App[None]):
    """Pushes one card on mount; the request is made here because it needs a running loop."""

    def __init__(
        self,
        build: Callable[[], ApprovalRequest],
        theme: str = "agent-dark",
        clock: Callable[[], float] | None = None,
    ) -> None:
        super().__init__()
        # By default each read a second on: every key comes well after the card opened.
        self.clock = clock or itertools.count(start=1000.0).__next__
        for bundled in themes.load_themes().themes.values():  # the real app's themes
            self.register_theme(bundled)
        self.build = build
        self.theme_name = theme
        self.modes: list[str] = []
        self.request: ApprovalRequest | None = None

    def on_mount(self) -> None:
        self.theme = self.theme_name
        self.request = self.build()
        screen = ApprovalScreen(self.request, self.modes.append, clock=self.clock)
        self.push_screen(screen, callback=self.request.resolve)


async def answer(*keys: str, build: Callable[[], ApprovalRequest] = edit_request) -> Decision:
    app = CardApp(build)
    async with app.run_test(size=(110, 44)) as pilot:
        await pilot.pause()
        await pilot.press(*keys)
        await pilot.pause()
        assert app.request is not None and app.request.done, "the card did not answer"
        assert not isinstance(app.screen, ApprovalScreen), "the card stayed open"
        return await app.request.wait()


async def test_y_accepts():
    assert await answer("y") == Decision("yes")


async def test_n_then_a_reason_denies_with_the_reason():
    decision = await answer("n", *"use the helper", "enter")
    assert decision == Decision("no", "use the helper")


async def test_n_then_escape_denies_without_a_reason():
    assert await answer("n", "escape") == Decision("no")


async def test_escape_denies():
    assert await answer("escape") == Decision("no")


async def test_always_offers_the_suggested_rule_and_takes_a_scope():
    app = CardApp(edit_request)
    async with app.run_test(size=(110, 44)) as pilot:
        await pilot.press("a")
        assert app.screen.query_one("#rule", Input).value == RULE
        await pilot.press("p")
        await pilot.pause()
        assert app.request is not None
        assert await app.request.wait() == Decision("always", rule=RULE, scope="project")


async def test_always_with_an_edited_rule_and_the_highlighted_scope():
    decision = await answer("a", "down", "tab", "ctrl+u", *"write_file(src/*.py)", "enter")
    assert decision == Decision("always", rule="write_file(src/*.py)", scope="project")


COMPOUND_RULES = "exec_shell_command(python3 -c 'print(1)')\nexec_shell_command(echo done)"


def compound_request(suggested: str = COMPOUND_RULES) -> ApprovalRequest:
    item = ToolItem("exec_shell_command", "call-4", title="Run a line")
    command = "python3 -c 'print(1)' && echo done"
    return ApprovalRequest(item, "command", command=command, cwd="/w", suggested_rule=suggested)


async def test_always_on_a_compound_line_shows_each_rule_and_keeps_them_all():
    app = CardApp(compound_request)
    async with app.run_test(size=(110, 44)) as pilot:
        await pilot.press("a")
        fields = [field.value for field in app.screen.query(".rule").results(Input)]
        assert fields == COMPOUND_RULES.splitlines()
        assert "must match one of these 2 rules" in text_of(app, "#always-heading")
        await pilot.press("e")
        await pilot.pause()
        assert app.request is not None
        assert await app.request.wait() == Decision(
            "always", rule=COMPOUND_RULES, scope="everywhere"
        )


async def test_each_rule_of_a_compound_line_can_be_edited_and_a_blank_one_is_left_out():
    edited = await answer(
        "a",
        "tab",
        "tab",
        "ctrl+u",
        *"exec_shell_command(echo *)",
        "enter",
        build=compound_request,
    )
    first = "exec_shell_command(python3 -c 'print(1)')"
    rule = f"{first}\nexec_shell_command(echo *)"
    assert edited == Decision("always", rule=rule, scope="conversation")
    blanked = await answer("a", "tab", "ctrl+u", "enter", build=compound_request)
    assert blanked == Decision("always", rule="exec_shell_command(echo done)")


async def test_always_with_no_rule_to_offer_says_so_and_allows_once():
    app = CardApp(lambda: compound_request(suggested=""))
    async with app.run_test(size=(110, 44)) as pilot:
        await pilot.press("a")
        assert "No rule can allow this line" in text_of(app, "#always-heading")
        await pilot.press("c")
        await pilot.pause()
        assert app.request is not None
        assert await app.request.wait() == Decision("yes")


async def test_picking_hunks_keeps_only_the_chosen_ones():
    assert await answer("h", "down", "space", "enter") == Decision("yes", hunks=(0, 2))


async def test_accepting_every_hunk_is_a_plain_yes_and_none_is_a_no():
    assert await answer("h", "a") == Decision("yes")
    decision = await answer("h", "space", "down", "space", "down", "space", "enter")
    assert decision == Decision("no", NO_HUNKS)


async def test_clicking_a_hunk_toggles_it():
    app = CardApp(edit_request)
    async with app.run_test(size=(110, 44)) as pilot:
        await pilot.press("h")
        await pilot.click(".hunk", offset=(4, 0))
        await pilot.press("enter")
        await pilot.pause()
        assert app.request is not None
        assert await app.request.wait() == Decision("yes", hunks=(1, 2))


def fake_editor(tmp_path: Path, body: str) -> str:
    script = tmp_path / "editor.sh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


async def test_e_accepts_the_persons_own_version(tmp_path, monkeypatch):
    editor = fake_editor(tmp_path, 'echo "# checked by hand" >> "$1"')
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", editor)
    decision = await answer("e")
    assert decision == Decision("yes", edited=AFTER + "# checked by hand\n")


@pytest.mark.parametrize(("editor", "notice"), [("exit 3", "exited with 3"), ("", "could not")])
async def test_a_failing_editor_leaves_the_card_open(tmp_path, monkeypatch, editor, notice):
    path = fake_editor(tmp_path, editor) if editor else str(tmp_path / "no-such-editor")
    monkeypatch.setenv("VISUAL", path)
    app = CardApp(edit_request)
    async with app.run_test(size=(110, 44)) as pilot:
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen)
        assert any(notice in str(n.message) for n in app._notifications)
        await pilot.press("y")
        await pilot.pause()
        assert app.request is not None
        assert await app.request.wait() == Decision("yes")


@pytest.mark.parametrize(
    ("downs", "mode", "expected"),
    [
        (3, "full", Decision("yes")),
        (2, "read-only", Decision("no", TO_READ_ONLY)),
        (4, "plan", Decision("no", "The person switched to plan mode.")),
    ],
)
async def test_switching_mode_answers_the_card(downs: int, mode: str, expected: Decision):
    app = CardApp(edit_request)
    async with app.run_test(size=(110, 44)) as pilot:
        await pilot.press("m", *["down"] * downs, "enter")
        await pilot.pause()
        assert app.modes == [mode]
        assert app.request is not None
        assert await app.request.wait() == expected


async def test_switching_to_ask_keeps_the_card_open():
    app = CardApp(command_request)
    async with app.run_test(size=(110, 44)) as pilot:
        await pilot.press("m", "enter")
        await pilot.pause()
        assert app.modes == ["ask"]
        assert isinstance(app.screen, ApprovalScreen)
        assert app.request is not None and not app.request.done


def text_of(app: App[None], selector: str) -> str:
    widget = app.screen.query_one(selector, Static)
    return str(widget.render())


async def test_a_command_card_shows_the_command_and_its_folder():
    app = CardApp(command_request)
    async with app.run_test(size=(110, 44)) as pilot:
        await pilot.pause()
        shown = text_of(app, "#command")
        assert "pytest -q tests/unit" in shown
        assert "/work/project" in shown
        # Edit-only keys do nothing on a command card.
        await pilot.press("h", "e")
        assert isinstance(app.screen, ApprovalScreen)


def outside_request() -> ApprovalRequest:
    request = command_request()
    request.outside = "a write outside the folders it may change"
    return request


async def test_a_card_for_a_command_the_sandbox_stopped_says_what_and_offers_outside():
    app = CardApp(outside_request)
    async with app.run_test(size=(110, 44)) as pilot:
        await pilot.pause()
        assert "pytest -q tests/unit" in text_of(app, "#command")
        shown = text_of(app, "#outside")
        assert "The sandbox stopped it: a write outside the folders it may change." in shown
        assert "outside the sandbox" in shown
        assert app.screen.query_one("#card").border_subtitle == "command · outside the sandbox"
        await pilot.press("y")
        assert await app.request.wait() == Decision("yes")


async def test_an_mcp_card_shows_the_server_and_the_arguments():
    app = CardApp(mcp_request)
    async with app.run_test(size=(110, 44)) as pilot:
        await pilot.pause()
        card = app.screen.query_one("#card")
        assert card.border_subtitle == "MCP: docs · no readOnlyHint"
        arguments = app.screen.query_one("#arguments")
        assert '"limit": 3' in str(arguments.query_one(Static).render().code)


async def test_a_request_answered_elsewhere_closes_the_card():
    app = CardApp(edit_request)
    async with app.run_test(size=(110, 44)) as pilot:
        await pilot.pause()
        assert app.request is not None
        app.request.resolve(Decision("yes", hunks=(1,)))
        await until(pilot, lambda: not isinstance(app.screen, ApprovalScreen))  # its own poll
        assert await app.request.wait() == Decision("yes", hunks=(1,))


async def test_side_by_side_is_offered_only_on_a_wide_terminal():
    for width, offered in ((110, False), (170, True)):
        app = CardApp(edit_request)
        async with app.run_test(size=(width, 44)) as pilot:
            await pilot.press("s")
            split = app.screen.query_one("#split")
            assert split.display is offered, f"side by side at {width} columns"


@pytest.mark.parametrize("theme", ["agent-dark", "agent-light"])
def test_snapshot_edit_card(snap_compare, theme: str):
    assert snap_compare(CardApp(edit_request, theme), terminal_size=(110, 44))


def test_snapshot_command_card(snap_compare):
    assert snap_compare(CardApp(command_request, "agent-light"), terminal_size=(110, 24))


def test_snapshot_side_by_side(snap_compare):
    assert snap_compare(CardApp(edit_request), terminal_size=(170, 44), press=["s"])


def test_snapshot_hunk_picker(snap_compare):
    app = CardApp(edit_request)
    assert snap_compare(app, terminal_size=(110, 44), press=["h", "down", "space"])


@pytest.mark.parametrize("size", [(80, 15), (60, 20), (60, 12)])
async def test_on_a_small_terminal_the_keys_stay_visible_and_the_diff_scrolls(size):
    app = CardApp(edit_request)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        await until(pilot, lambda: screen.query_one("#unified").max_scroll_y > 0)
        help_line = screen.query_one("#help", Static)
        card = screen.query_one("#card")
        assert help_line.region.height >= 1, "the card's keys have room"
        assert help_line.region.bottom <= card.region.bottom - 1 <= size[1], "inside the card"
        assert "y yes" in str(help_line.render()) and "esc deny" in str(help_line.render())
        await pilot.press("end")  # the diff scrolls inside the card
        await until(pilot, lambda: screen.query_one("#unified").scroll_y > 0)
        await pilot.press("n")
        await pilot.pause()
        reason = screen.query_one("#reason", Input)
        assert reason.region.height and reason.region.bottom <= card.region.bottom
        assert help_line.region.bottom <= card.region.bottom - 1


HEREDOC = "cat > notes.txt <<'EOF'\n" + "".join(f"line {n}\n" for n in range(1, 9)) + "EOF"


def heredoc_request() -> ApprovalRequest:
    """A ten-line command: taller than the card at 80×15."""
    item = ToolItem("exec_shell_command", "call-4", title="Run cat > notes.txt <<'EOF'")
    return ApprovalRequest(item, "command", command=HEREDOC, cwd="/work/project")


def four_line_request() -> ApprovalRequest:
    """Four lines, a sandbox note besides: taller than the card at 60×12."""
    request = command_request()
    request.command = "cd src\nmake clean\nmake all\nmake check"
    request.outside = "a write outside the folders it may change"
    return request


def long_mcp_request() -> ApprovalRequest:
    args = json.dumps({f"key_{n}": f"value {n}" for n in range(20)})
    item = ToolItem("docs_search", "call-5", title="docs_search", args=args, mcp="docs")
    return ApprovalRequest(item, "tool", suggested_rule="docs_search")


@pytest.mark.parametrize(
    ("build", "size", "body"),
    [
        (heredoc_request, (80, 15), "#call"),
        (four_line_request, (60, 12), "#call"),
        (long_mcp_request, (80, 15), "#arguments"),
        (long_mcp_request, (60, 12), "#arguments"),
    ],
)
async def test_on_a_small_terminal_a_long_command_scrolls_and_the_keys_stay_visible(
    build, size, body
):
    app = CardApp(build)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        scrolled = screen.query_one(body)
        await until(pilot, lambda: scrolled.max_scroll_y > 0)
        help_line = screen.query_one("#help", Static)
        card = screen.query_one("#card")
        assert help_line.region.height >= 1, "the card's keys have room"
        assert help_line.region.bottom <= card.region.bottom - 1 <= size[1], "inside the card"
        assert "y yes" in str(help_line.render()) and "esc deny" in str(help_line.render())
        await pilot.press("end")  # the command scrolls inside the card
        await until(pilot, lambda: scrolled.scroll_y > 0)
        assert help_line.region.bottom <= card.region.bottom - 1
        await pilot.press("n")
        await pilot.pause()
        reason = screen.query_one("#reason", Input)
        assert reason.region.height and reason.region.bottom <= card.region.bottom
        assert help_line.region.bottom <= card.region.bottom - 1


def test_snapshot_heredoc_command_card_on_a_small_terminal(snap_compare):
    assert snap_compare(CardApp(heredoc_request), terminal_size=(80, 15))


def test_snapshot_edit_card_on_a_small_terminal(snap_compare):
    assert snap_compare(CardApp(edit_request), terminal_size=(80, 15))


def test_snapshot_edit_card_at_60_columns(snap_compare):
    assert snap_compare(CardApp(edit_request), terminal_size=(60, 24))


async def test_a_key_typed_as_the_card_opens_does_not_answer_it():
    """Someone typing a message when the card pops up: their `y` (or `a`, `n`) is not read
    as the card's answer until it has been on screen for a moment."""
    now = [1000.0]
    app = CardApp(command_request, clock=lambda: now[0])
    async with app.run_test(size=(110, 44)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("y", "a", "n")  # each key handled before press returns
        assert app.request is not None and not app.request.done, "nothing was answered"
        assert isinstance(app.screen, ApprovalScreen) and app.screen.stage == "card"
        now[0] += KEY_GUARD_SECONDS
        await pilot.press("y")
        await until(pilot, lambda: app.request is not None and app.request.done)
        assert await app.request.wait() == Decision("yes")
