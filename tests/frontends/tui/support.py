"""Helpers for driving the TUI in tests: waiting for a run, reading what is on screen."""

from __future__ import annotations

import time

from textual.pilot import Pilot
from textual.widget import Widget

from agent_cli.engine.events import Event, ItemAdded, ItemUpdated, RunFinished
from agent_cli.engine.items import ToolItem
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.markdown_flow import MarkdownFlow

RUN_TIMEOUT = 20.0
SIZE = (100, 32)  # the terminal the tests run the app in


class Events:
    """Records a session's events (a second subscriber beside the app's)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.tool_states: list[str] = []  # as each update said (items change in place)

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, (ItemAdded, ItemUpdated)) and isinstance(event.item, ToolItem):
            self.tool_states.append(event.item.state)

    def finished(self) -> list[str]:
        return [e.reason for e in self.events if isinstance(e, RunFinished)]


async def until(pilot: Pilot, condition: object, timeout: float = RUN_TIMEOUT) -> None:
    """Pause until `condition()` holds (failing with its source if it never does)."""
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {condition}")
        await pilot.pause(0.02)


async def settle(pilot: Pilot, app: AgentApp) -> None:
    """Wait until no run goes on and every event has reached the screen (the end of a
    run is shown once the views it added are mounted: then the status line says so)."""
    await until(
        pilot,
        lambda: not app.session.running and not app.feed.dirty and app.status.state == "idle",
    )
    await pilot.pause()  # the last batch mounts, lays out and paints
    await pilot.pause()


async def send(pilot: Pilot, app: AgentApp, text: str) -> None:
    app.composer.input.set_text(text)
    await pilot.press("enter")
    await pilot.pause()


def flow_text(flow: MarkdownFlow) -> str:
    """The lines a flow shows, as plain text (rendering every block)."""
    return "\n".join(flow.render_line(y).text.rstrip() for y in range(flow.size.height))


def shown_text(widget: Widget) -> str:
    """The plain text of every flow (answers, notices, replies) inside a widget."""
    flows = [widget] if isinstance(widget, MarkdownFlow) else list(widget.query(MarkdownFlow))
    return "\n".join(flow_text(flow) for flow in flows)


def notice_says(app: AgentApp, words: str, level: str = "") -> bool:
    """Whether a notice in the transcript (of `level`: "error", "warn"…, any when "") says
    `words`, read with the wrapping's spaces and line breaks taken out of both."""
    from agent_cli.frontends.tui.notice_view import NoticeView

    notices = app.transcript.query(NoticeView)
    if level:
        notices = notices.filter(f".-{level}")
    wanted = "".join(words.split())
    return any(wanted in "".join(shown_text(n).split()) for n in notices)
