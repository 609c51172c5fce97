"""What the main screen looks like, in the default dark and light themes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agent_cli.engine.items import AssistantItem, NoticeItem, ToolItem, UserItem
from agent_cli.frontends.interactive import Interactive
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.tool_card import ToolCard
from agent_cli.settings import load_settings
from tests.support.sessions import make_session
from tests.support.waiting import eventually

ANSWER = """\
The greeting comes from `greet()` in **src/app.py**:

```python
def greet(name: str) -> str:
    return f"hello {name}"
```

To change it:

1. edit the f-string
2. run the tests"""

DIFF = """\
--- a/src/app.py
+++ b/src/app.py
@@ -1,2 +1,2 @@
 def greet(name: str) -> str:
-    return f"hello {name}"
+    return f"hi {name}"
"""


def short_conversation_app(workspace: Path, theme: str) -> AgentApp:
    session, _, _ = make_session(workspace, [])
    conversation = session.conversation
    conversation.model = "openai/m1"
    conversation.items = [
        UserItem("Where does the greeting come from?"),
        AssistantItem(ANSWER, reasoning="Look for greet.", streaming=False),
        ToolItem("read_file", "c1", title="Read src/app.py", state="done", result="1→def greet"),
        ToolItem(
            "edit_file",
            "c2",
            title="Edit src/app.py",
            state="done",
            result="Edited.",
            diff=DIFF,
        ),
        ToolItem(
            "exec_shell_command",
            "c4",
            title="Run make check",
            state="done",
            result="make: *** [check] Error 5\n[exit code: 5]",
        ),
        ToolItem("exec_shell_command", "c3", title="Run pytest", state="denied"),
        NoticeItem("The person said no to running pytest.", "warn"),
    ]
    interactive = Interactive(session, None, lambda c: session)
    settings = dataclasses.replace(load_settings(workspace), reduce_motion=True, theme=theme)
    return AgentApp(interactive, settings)


async def steady_cursor(pilot) -> None:
    """The focused input's cursor shown without blinking: otherwise a busy machine, slow
    to take the picture, catches the cursor in its off half-second."""
    await pilot.pause()
    focused = pilot.app.focused
    if focused is not None and hasattr(focused, "cursor_blink"):
        # Not before the widget has handled its Focus event: turning the blink off while
        # it thinks it has no focus hides the cursor for good.
        await eventually(lambda: focused.has_focus, "the input to take the focus")
        focused.cursor_blink = False
        # Textual's TextArea keys its cache of drawn lines on the cursor only while it
        # blinks: a line drawn with the cursor in its off half (or before the focus) would
        # be shown again as it was. Lines are drawn afresh from here.
        line_cache = getattr(focused, "_line_cache", None)
        if line_cache is not None:
            line_cache.clear()
            focused.refresh()
    await pilot.pause()


@pytest.mark.parametrize("theme", ["agent-dark", "agent-light"])
def test_main_screen(snap_compare, workspace: Path, theme: str):
    app = short_conversation_app(workspace, theme)

    async def expand_the_edit(pilot) -> None:
        card = app.transcript.views[app.session.conversation.items[3].id]
        card.expanded = True
        await pilot.pause()
        app.composer.focus_input()
        await steady_cursor(pilot)

    assert snap_compare(app, terminal_size=(90, 40), run_before=expand_the_edit)


def test_model_picker(snap_compare, workspace: Path):
    from agent_cli.frontends.tui.picker import Picker, labelled_option

    app = short_conversation_app(workspace, "agent-dark")
    options = [
        labelled_option("m1", "128,000 tokens"),
        labelled_option("m2", "32,000 tokens"),
        labelled_option("codex", "missing codex-acp", enabled=False),
    ]

    async def open_the_picker(pilot) -> None:
        note = "The model is openai/m2. This conversation used 1,200 input and 80 output tokens."
        app.push_screen(Picker("Switch the model", options, "m2", note=note))
        await steady_cursor(pilot)

    assert snap_compare(app, terminal_size=(90, 30), run_before=open_the_picker)


def test_search_bar_with_a_match(snap_compare, workspace: Path):
    app = short_conversation_app(workspace, "agent-light")

    async def search(pilot) -> None:
        await pilot.press("ctrl+f", *"pytest", "enter")
        await steady_cursor(pilot)

    assert snap_compare(app, terminal_size=(90, 40), run_before=search)


def test_a_picker_with_a_filter(snap_compare, workspace: Path):
    from agent_cli.frontends.tui.picker import Picker, labelled_option

    app = short_conversation_app(workspace, "agent-dark")
    options = [labelled_option(name) for name in ("agent-dark", "agent-light", "agent-nord")]

    async def filter_the_picker(pilot) -> None:
        app.push_screen(Picker("Switch the theme", options, "agent-dark"))
        await pilot.pause()
        await pilot.press(*"li")
        await steady_cursor(pilot)

    assert snap_compare(app, terminal_size=(90, 24), run_before=filter_the_picker)


def test_a_collapsed_paste_in_the_input_and_a_folded_message(snap_compare, workspace: Path):
    from textual import events

    app = short_conversation_app(workspace, "agent-dark")
    pasted = "\n".join(f"E   assert {n} == {n + 1}" for n in range(300))
    app.session.conversation.items.append(UserItem(f"why does this fail?\n{pasted}"))

    async def paste(pilot) -> None:
        await pilot.press(*"and this: ")
        app.post_message(events.Paste(pasted))
        await pilot.pause()
        app.transcript.scroll_end(animate=False)
        await steady_cursor(pilot)

    assert snap_compare(app, terminal_size=(90, 30), run_before=paste)


def test_main_screen_at_60_columns(snap_compare, workspace: Path):
    app = short_conversation_app(workspace, "agent-dark")

    async def look(pilot) -> None:
        app.composer.focus_input()
        await steady_cursor(pilot)

    assert snap_compare(app, terminal_size=(60, 24), run_before=look)


def test_the_status_line_while_a_run_goes(snap_compare, workspace: Path):
    app = short_conversation_app(workspace, "agent-dark")
    app.status.clock = lambda: 1042.0  # 42 seconds into the run, on every machine

    async def running(pilot) -> None:
        status = app.status
        status.state = "running"
        status.started = 1000.0
        status.activity = "running `make check`"
        status.run_in, status.run_out = 12_400, 830
        await steady_cursor(pilot)

    assert snap_compare(app, terminal_size=(80, 20), run_before=running)


def test_the_welcome_of_a_first_start(snap_compare, workspace: Path):
    session, _, _ = make_session(workspace, [])
    session.conversation.model = "openai/m1"
    interactive = Interactive(session, None, lambda c: session)
    settings = dataclasses.replace(load_settings(workspace), reduce_motion=True)
    app = AgentApp(interactive, settings)
    assert snap_compare(app, terminal_size=(80, 20), run_before=steady_cursor)


def test_a_running_command_and_a_sub_agent_mid_run(snap_compare, workspace: Path):
    session, _, _ = make_session(workspace, [])
    session.conversation.model = "openai/m1"
    command = ToolItem("exec_shell_command", "c1", title="Run pytest -q", state="running")
    command.progress = "tests/test_a.py ....\ntests/test_b.py ..F.\ntests/test_c.py ......"
    task = ToolItem("task", "c2", title="Task: find the config loader", state="running")
    task.progress = "3 tool calls · Read src/config.py"
    session.conversation.items = [UserItem("Run the tests and find the loader."), command, task]
    interactive = Interactive(session, None, lambda c: session)
    settings = dataclasses.replace(load_settings(workspace), reduce_motion=True)
    now = [1000.0]
    app = AgentApp(interactive, settings, clock=lambda: now[0])

    async def twelve_seconds_in(pilot) -> None:
        now[0] += 12
        for card in app.transcript.query(ToolCard):
            card.update_item(card.item)
        await steady_cursor(pilot)

    assert snap_compare(app, terminal_size=(80, 16), run_before=twelve_seconds_in)
