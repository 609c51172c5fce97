"""The TUI's start: the first frame needs no round trip, no git and no Markdown; what they
bring (the model, the context window, the branch) fills the status line after it."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from rich.console import RenderableType
from textual.screen import Screen

from agent_cli import wiring
from agent_cli.errors import ConfigError
from agent_cli.frontends.interactive import Interactive
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.notice_view import NoticeView
from agent_cli.settings import Settings, load_settings
from agent_cli.wiring import Opening
from tests.frontends.tui.support import SIZE, send, settle, until
from tests.support.fake_openai import FakeOpenAI, text

Opening_ = Callable[[], Awaitable[Interactive]] | None  # how run_tui may be given the session


async def test_the_route_connects_after_the_first_frame_and_fills_the_status_line(
    settings: Settings, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
):
    fake.serve_props({"default_generation_settings": {"n_ctx": 4000}})  # a local server
    interactive = await wiring.open_interactive(settings, Opening(), "ask", connect=False)
    route = interactive.route
    assert isinstance(route, wiring.Route)
    frames: list[object] = []  # what the status line said in each frame
    shown_at_connect: list[int] = []  # how many frames were out when the route connected

    display = AgentApp._display

    def counted(app: AgentApp, screen: Screen, renderable: RenderableType | None) -> None:
        if renderable is not None:  # Textual's one call per rendered frame
            frames.append(app.status.model)
        display(app, screen, renderable)

    monkeypatch.setattr(AgentApp, "_display", counted)

    connect = route.connect

    async def counted_connect() -> None:
        shown_at_connect.append(len(frames))
        await connect()

    monkeypatch.setattr(route, "connect", counted_connect)
    app = AgentApp(interactive, settings)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.status.model == "openai/m1")  # the first listed
            assert shown_at_connect[0] >= 1, "the first frame went out before the listing"
            assert frames[0] == "…", "the model is not known in the first frame"
            await until(pilot, lambda: app.status.context == 4000)  # the server's own
            assert "context 0 / 4.0k" in str(app.status.render())
    finally:
        await interactive.aclose()


@pytest.fixture
def nowhere(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings for a server address where nothing listens (and no model configured)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    return dataclasses.replace(load_settings(workspace), reduce_motion=True)


async def test_a_server_that_does_not_answer_is_said_in_the_transcript(nowhere: Settings):
    interactive = await wiring.open_interactive(nowhere, Opening(), "ask", connect=False)
    app = AgentApp(interactive, nowhere)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: bool(app.transcript.query(NoticeView)))
            said = app.transcript.query_one(NoticeView).text
            assert "127.0.0.1" in said and "—" in said, said  # what failed, and what to do
            assert app.status.state == "idle"
    finally:
        await interactive.aclose()


def test_opening_the_tui_imports_no_typer_and_no_pygments():
    """A bare `agent` skips Typer (~50 ms of a start whose goal is a bare Textual app's):
    neither the commands package nor the trust question may bring it back; Pygments (the
    highlighting of code and diffs) loads after the first frame, in the warm-up."""
    import subprocess
    import sys

    opened = (
        "import sys; import agent_cli.commands.opening as o, agent_cli.commands.common, "
        "agent_cli.commands.trust, agent_cli.settings, agent_cli.wiring, "
        "agent_cli.frontends.interactive, agent_cli.frontends.tui.app; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click', 'pygments')))"
    )
    out = subprocess.run([sys.executable, "-c", opened], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


# What a new conversation's first frame does without, each ~2-20 ms of imports before it:
# they come with the session, after the frame. A module here that comes back fails.
NOT_BEFORE_FIRST_FRAME = (
    "agent_cli.engine.events",  # the session's events: the feed that reads them
    "agent_cli.engine.pending",
    "agent_cli.frontends.tui.feed",
    "agent_cli.tools.base",  # the tools' machinery: the modes' and the plan's names without it
    "agent_cli.policy.modes",
    "agent_cli.frontends.tui.assistant_view",  # the transcript's views: with its first item
    "agent_cli.frontends.tui.markdown_flow",
    "agent_cli.frontends.tui.markdown_render",
    "agent_cli.frontends.tui.reasoning_block",
    "agent_cli.frontends.tui.tool_card",
    "agent_cli.frontends.tui.diff_view",
    "agent_cli.frontends.tui.notice_view",
    "agent_cli.frontends.tui.user_message",
    "agent_cli.lsp.diagnostics",
    "agent_cli.engine.items",  # the items' types (~8 ms with media and the providers' base):
    "agent_cli.providers.base",  # with the first item, the feed's first batch
    "agent_cli.tools.plan",
    "agent_cli.frontends.plan_text",  # the plan's text: with the first plan
    "agent_cli.engine.approval",  # a card's request, its form's, a run's activity, a search
    "agent_cli.engine.elicitation",
    "agent_cli.tools.mcp_forms",
    "agent_cli.frontends.tui.activity",
    "agent_cli.frontends.outcome",
    "agent_cli.tools.diffs",
    "agent_cli.frontends.tui.search",
    "agent_cli.frontends.slash",  # the composer's: what completes, with the first "/" or "@"
    "agent_cli.frontends.tui.completion",
    "agent_cli.frontends.resource_completion",
    "agent_cli.frontends.tui.completion_menu",
    "agent_cli.frontends.tui.image_chips",  # the images' chips and the clipboard, with the
    "agent_cli.frontends.clipboard",  # first paste
    "agent_cli.media",
    "pygments.styles",  # the bundled themes' code styles are checked by the tests
    "hashlib",  # OpenSSL (~3 ms): names the input's history file, read at the first Up
    # or send, and an image's file
    "json",  # the history's lines and a kept theme choice: read where they are (~1.5 ms)
    "html",  # an attachment's label, escaped for the model (its entities' table: ~1.5 ms)
    "shlex",  # $EDITOR, split when it opens
)
FIRST_FRAME = """
import asyncio, sys
from pathlib import Path
from agent_cli.commands import common, opening  # what a bare `agent` imports first
from agent_cli.engine.opening import Opening
from agent_cli.settings import load_settings
from agent_cli.frontends.tui.app import AgentApp

seen = []

display = AgentApp._display

def counted(app, screen, renderable):
    if renderable is not None and not seen:
        seen.append(set(sys.modules))
    display(app, screen, renderable)

AgentApp._display = counted

async def never():
    await asyncio.Event().wait()

async def main():
    app = AgentApp(None, load_settings(Path(sys.argv[1])), opening=never)
    async with app.run_test(size=(120, 40)) as pilot:
        while not seen:
            await pilot.pause()
    print(" ".join(sorted(seen[0] & set(sys.argv[2:]))))

asyncio.run(main())
"""


def test_a_new_conversation_paints_its_first_frame_without_what_the_session_brings(
    settings: Settings,
):
    import subprocess
    import sys

    argv = [sys.executable, "-c", FIRST_FRAME, str(settings.workspace), *NOT_BEFORE_FIRST_FRAME]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == [], "imported before the first frame"


VIEWS = (
    "agent_cli.frontends.tui.assistant_view",
    "agent_cli.frontends.tui.notice_view",
    "agent_cli.frontends.tui.tool_card",
    "agent_cli.frontends.tui.user_message",
)
AFTER_FIRST_FRAME = """
import asyncio, sys
from pathlib import Path
from agent_cli import wiring
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.settings import load_settings

async def main():
    settings = load_settings(Path(sys.argv[1]))
    interactive = await wiring.open_interactive(settings, wiring.Opening(), "ask")
    app = AgentApp(interactive, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        while not any(worker.group == "warm-up" for worker in app.workers):
            await pilot.pause()
        for worker in list(app.workers):
            if worker.group == "warm-up":
                await worker.wait()
        views = ("AssistantView", "NoticeView", "ToolCard", "UserMessage")
        shown = sum(type(child).__name__ in views for child in app.transcript.children)
    await interactive.aclose()
    print(shown, " ".join(sorted(set(sys.argv[2:]) & set(sys.modules))))

asyncio.run(main())
"""


def test_the_views_are_loaded_after_the_first_frame_before_the_first_message(
    settings: Settings,
):
    """A new conversation's first frame has no view (their modules come after it), and the
    first message does not wait for them either: the warm-up thread loads them."""
    import subprocess
    import sys

    argv = [sys.executable, "-c", AFTER_FIRST_FRAME, str(settings.workspace), *VIEWS]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60)
    shown, *loaded = out.stdout.split()
    assert loaded == sorted(VIEWS), out.stdout
    assert shown == "0", "no message yet"


def test_the_tui_starts_without_the_collector_and_turns_it_on_at_its_first_frame(
    settings: Settings, workspace: Path, monkeypatch: pytest.MonkeyPatch
):
    """Its ~120 passes over the start's long-lived objects cost ~35 ms before the first frame;
    the app, once mounted, freezes what is alive and turns the collector back on."""
    import gc

    from agent_cli.commands import opening
    from agent_cli.frontends import tui
    from agent_cli.settings import Flags

    seen: dict[str, bool] = {}

    async def run_tui(
        interactive: Interactive | None, settings: Settings, *, opening: Opening_ = None
    ) -> int:
        seen["before"] = gc.isenabled()  # the settings were read
        app = AgentApp(interactive, settings, opening=opening)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.ready and app.status.model != "")
            seen["mounted"] = gc.isenabled()
        await app.interactive.aclose()
        return 0

    monkeypatch.setattr(tui, "run_tui", run_tui)
    assert gc.isenabled()
    assert opening.open_front_end(Flags(), Opening(), False, str(workspace)) == 0
    assert seen == {"before": False, "mounted": True}
    assert gc.isenabled()


async def test_a_new_conversation_is_painted_before_its_session_and_what_is_sent_waits(
    settings: Settings, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
):
    """A bare `agent`: the first frame (input, status line, welcome) goes out before the
    session is built (in a worker, after it); a message sent meanwhile is not lost."""
    gate = asyncio.Event()
    opened: list[Interactive] = []

    async def opening() -> Interactive:
        await gate.wait()  # the test says when the session may be built
        interactive = await wiring.open_interactive(settings, Opening(), "ask", connect=False)
        opened.append(interactive)
        return interactive

    frames: list[bool] = []  # whether the session was ready, in each frame
    display = AgentApp._display

    def counted(app: AgentApp, screen: Screen, renderable: RenderableType | None) -> None:
        if renderable is not None:
            frames.append(app.ready)
        display(app, screen, renderable)

    monkeypatch.setattr(AgentApp, "_display", counted)
    fake.add(text("Hello there."))
    app = AgentApp(None, settings, opening=opening)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: bool(frames))
            assert frames[0] is False and not app.ready
            assert app.welcome is not None and "agent in" in str(app.welcome.render())
            assert app.status.workspace == settings.workspace.name
            app.composer.input.set_text("draft")
            await pilot.press("escape", "ctrl+c")  # keys that ask the session: nothing yet
            assert app.composer.input.text == "", "Ctrl+C cleared the input, as when idle"
            await send(pilot, app, "hi")  # before the session exists
            assert app.composer.input.text == "", "taken, as a message sent is"
            assert fake.requests == []
            gate.set()
            await until(pilot, lambda: app.ready)
            await until(pilot, lambda: app.status.model == "openai/m1")  # connected after
            await settle(pilot, app)
            items = app.session.conversation.items
            assert [type(i).__name__ for i in items] == ["UserItem", "AssistantItem"]
            assert items[0].text == "hi" and items[1].text == "Hello there."  # type: ignore[union-attr]
            assert app.welcome is None, "gone with the first message"
    finally:
        for interactive in opened:
            await interactive.aclose()


async def test_a_session_that_cannot_be_opened_ends_the_app_and_is_said_after_it(
    settings: Settings,
):
    async def opening() -> Interactive:
        raise ConfigError("agent: no such agent 'nobody' — `agent agents` lists them")

    app = AgentApp(None, settings, opening=opening)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.opening_error is not None)
    assert app.return_value == 1
    assert "nobody" in str(app.opening_error)


async def test_the_stylesheets_are_parsed_once_before_the_first_frame_in_the_chosen_theme(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
):
    """Setting the theme the usual way (`App.theme`) parses every stylesheet again once the
    app runs, and restyles every widget, before the first frame (~15 ms); the app starts in
    its theme instead, and looks the same as after a switch to it."""
    from textual.css.stylesheet import Stylesheet

    reparsed: list[bool] = []  # one per reparse: whether a frame was out yet
    frames: list[object] = []
    reparse, display = Stylesheet.reparse, AgentApp._display

    def counted_reparse(sheet: Stylesheet) -> None:
        reparsed.append(bool(frames))
        reparse(sheet)

    def counted(app: AgentApp, screen: Screen, renderable: RenderableType | None) -> None:
        if renderable is not None:
            frames.append(renderable)
        display(app, screen, renderable)

    monkeypatch.setattr(Stylesheet, "reparse", counted_reparse)
    monkeypatch.setattr(AgentApp, "_display", counted)
    light = dataclasses.replace(settings, theme="agent-light")
    interactive = await wiring.open_interactive(light, Opening(), "ask", connect=False)
    app = AgentApp(interactive, light)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: bool(frames))
            assert reparsed == [], "no second parse before the first frame"
            assert app.theme == "agent-light" and app.has_class("-theme-agent-light")
            assert app.has_class("-light-mode") and not app.has_class("-dark-mode")
            started = (app.screen.styles.background, app.composer.styles.background)
            app.theme = "agent-dark"
            await until(pilot, lambda: app.screen.styles.background != started[0])
            app.theme = "agent-light"  # a switch back: what the watcher makes of the theme
            await until(pilot, lambda: app.screen.styles.background == started[0])
            await settle(pilot, app)
            assert (app.screen.styles.background, app.composer.styles.background) == started
    finally:
        await interactive.aclose()


async def test_the_views_stylesheets_are_read_with_the_first_view_not_before_the_first_frame(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
):
    """A new conversation's first frame has no view: their stylesheets (~3 ms of parsing)
    are read with the first one, which is styled by them from its first frame."""
    from agent_cli.frontends.tui.transcript import VIEW_STYLES

    def read(app: AgentApp) -> list[bool]:
        return [app.stylesheet.has_source(path) for path in VIEW_STYLES]

    sheets: list[list[bool]] = []  # which were read, at the first frame
    display = AgentApp._display

    def counted(app: AgentApp, screen: Screen, renderable: RenderableType | None) -> None:
        if renderable is not None and not sheets:
            sheets.append(read(app))
        display(app, screen, renderable)

    monkeypatch.setattr(AgentApp, "_display", counted)

    async def never() -> Interactive:
        await asyncio.Event().wait()
        raise AssertionError("never opened")

    app = AgentApp(None, settings, opening=never)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: bool(sheets))
        assert sheets[0] == [False] * len(VIEW_STYLES)
        app.transcript.add_reply("a reply", "info")
        await until(pilot, lambda: bool(app.transcript.query(NoticeView)))
        await pilot.pause()
        assert read(app) == [True] * len(VIEW_STYLES)
        reply = app.transcript.query_one(NoticeView)
        assert reply.styles.margin.top == 1 and reply.styles.border_left[0] == "outer"


async def test_the_search_bar_mounts_its_input_at_the_first_ctrl_f(settings: Settings):
    """Hidden until then: the first frame goes out without it (its mount, its styles)."""
    from textual.widgets import Input

    async def never() -> Interactive:
        await asyncio.Event().wait()
        raise AssertionError("never opened")

    app = AgentApp(None, settings, opening=never)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not app.query(Input), "an Input mounted before the first Ctrl+F"
        await pilot.press("ctrl+f")
        await until(pilot, lambda: app.focused is app.search_bar.input)
        await pilot.press("x")
        assert app.search_bar.input.value == "x"


async def test_the_bar_the_plan_and_the_waiting_messages_mount_where_they_first_show(
    settings: Settings,
):
    """None of them is in the first frame; each mounts when it first has something to show,
    above the input in compose's order, styled by its stylesheet read then, and on the
    main screen even while a card (a screen of its own) covers it."""
    from textual.screen import ModalScreen

    from agent_cli.engine.pending import PendingMessage
    from agent_cli.frontends.tui import app as app_module
    from agent_cli.frontends.tui.styles import beside
    from agent_cli.tools.plan import Plan, PlanStep

    async def never() -> Interactive:
        await asyncio.Event().wait()
        raise AssertionError("never opened")

    app = AgentApp(None, settings, opening=never)
    placed = (app.search_bar, app.plan_view, app.pending_view)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.composer.input.region.height > 0)  # laid out: mounted
        assert not any(widget.is_attached for widget in placed)
        styles = beside(app_module.__file__, *app_module.PLACED_STYLES.values())
        assert not any(app.stylesheet.has_source(path) for path in styles)
        main = app.screen
        app.show_plan(None)
        app.show_pending(())
        assert not any(widget.is_attached for widget in placed), "nothing to show, no mount"

        await app.push_screen(ModalScreen())  # stands for an approval card
        app.show_pending((PendingMessage("p1", "also run the linter", "steer"),))
        app.show_plan(Plan((PlanStep("Change greet()", "in_progress"),)))
        await until(pilot, lambda: app.plan_view.is_mounted and app.pending_view.is_mounted)
        app.pop_screen()
        await pilot.press("ctrl+f")
        await until(pilot, lambda: app.focused is app.search_bar.input)
        await until(pilot, lambda: all(widget.region.height for widget in placed))

        assert all(widget.screen is main for widget in placed)
        order = [type(child).__name__ for child in main.children]
        assert order == [
            "Transcript",
            "SearchBar",
            "PlanView",
            "PendingView",
            "Composer",
            "StatusLine",
        ], order
        regions = [app.transcript.region, *(w.region for w in placed), app.composer.region]
        assert all(r.height > 0 for r in regions)
        assert [r.y for r in regions] == sorted(r.y for r in regions), "top to bottom"
        assert all(app.stylesheet.has_source(path) for path in styles)
        assert app.plan_view.styles.max_height is not None
        assert app.plan_view.styles.max_height.value == 12  # plan_view.tcss's
        assert app.pending_view.styles.border_left[0] == "outer"  # pending_view.tcss's


async def test_the_composer_mounts_its_menu_and_its_chips_when_first_shown(
    app: AgentApp, fake: FakeOpenAI, tmp_path: Path
):
    """Hidden until then: the first frame goes out without them (their mounts, the menu's
    OptionList styles, their stylesheets); once shown they sit above the prompt row, in the
    order they had when both were mounted at the start, styled by their stylesheets."""
    from textual import events
    from textual.widgets import OptionList

    from agent_cli.frontends.tui.completion_menu import CompletionMenu
    from agent_cli.frontends.tui.composer import CHIPS_STYLES, MENU_STYLES
    from agent_cli.frontends.tui.image_chips import ImageChips
    from tests.support.images import png

    shot = tmp_path / "shot.png"
    shot.write_bytes(png(40, 30))
    fake.add(text("Hello."))
    composer = app.composer
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: composer.input.region.height > 0)  # laid out: mounted
        mounted = (CompletionMenu, ImageChips, OptionList)
        assert not [w for w in composer.walk_children() if isinstance(w, mounted)]
        await pilot.press("a", "backspace")  # a menu closed and the chips emptied, as sent
        await send(pilot, app, "hi")
        await settle(pilot, app)
        assert not [w for w in composer.walk_children() if isinstance(w, mounted)]
        assert not any(app.stylesheet.has_source(path) for path in MENU_STYLES + CHIPS_STYLES)
        row = composer.query_one("#prompt-row")

        await pilot.press("/", "t", "h")
        menu = composer.query_one(CompletionMenu)
        await until(pilot, lambda: menu.display and menu.region.height > 0)
        assert menu.region.bottom <= row.region.y, "above the input"
        assert menu.styles.max_height is not None and menu.styles.max_height.value == 9
        await pilot.press("tab")
        assert composer.input.text == "/theme "
        assert not menu.display and not composer.input.completing

        composer.input.set_text("")
        app.post_message(events.Paste(str(shot)))  # read in a thread, then a chip
        await until(pilot, lambda: bool(composer.query(ImageChips)))
        chips = composer.query_one(ImageChips)
        await until(pilot, lambda: chips.display and chips.region.height > 0)
        assert chips.region.bottom <= row.region.y, "above the input"
        assert chips.styles.border_left[0] == "outer"
        assert list(composer.children) == [menu, chips, row]
        assert "[image shot.png 40×30] ✕" in str(chips.render())
