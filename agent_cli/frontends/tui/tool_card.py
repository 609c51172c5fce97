"""A tool call: one line (icon, title, state) that expands to its result and diff."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.events import Click
from textual.message import Message
from textual.reactive import var
from textual.timer import Timer
from textual.widgets import Static

from agent_cli.engine.items import ToolItem
from agent_cli.frontends.outcome import COMMAND_TOOLS, outcome
from agent_cli.frontends.tui.diff_view import DiffView
from agent_cli.frontends.tui.status_line import TICK_SECONDS, elapsed_text
from agent_cli.frontends.tui.steady import Steady, SteadyStatic
from agent_cli.lsp.diagnostics import summary

RESULT_LINES = 400  # an expanded card shows this much of a result; search sees all of it
STATES: dict[str, tuple[str, str]] = {  # state -> (icon, theme colour)
    "composing": ("✎", "$foreground-muted"),
    "running": ("▶", "$accent"),
    "waiting": ("?", "$warning"),
    "done": ("✓", "$success"),
    "denied": ("⊘", "$warning"),
    "error": ("✗", "$error"),
    "failed": ("✗", "$error"),  # done, but the command exited non-zero
}


def size_text(count: int) -> str:
    return f"{count} B" if count < 1024 else f"{count / 1024:.1f} KB"


def look(item: ToolItem) -> str:
    """The state a card shows: the item's, or "failed" for a command that exited non-zero."""
    return "failed" if outcome(item).failed else item.state


def live_tail(item: ToolItem) -> bool:
    """Whether the item's progress is a command's last lines, shown under its header."""
    return item.state == "running" and item.tool in COMMAND_TOOLS


def state_text(item: ToolItem, elapsed: float | None = None) -> str:
    """What the header says of the call's state; `elapsed`: seconds it has been running."""
    if item.state == "composing":
        return f"composing · {size_text(item.bytes)}"
    if item.state == "running":
        parts = ["running"]
        if elapsed is not None and elapsed >= 1:  # a quick call shows no 0s
            parts.append(elapsed_text(elapsed))
        if item.progress and not live_tail(item):  # an MCP server's or a sub-agent's word
            parts.append(item.progress)
        return " · ".join(parts)
    said = outcome(item)
    if said.failed:
        return f"failed · {said.text}"
    return f"{item.state} · {said.text}" if said.text else item.state


class ToolCard(Steady, Vertical, can_focus=True):
    """Compact by default; Enter or a click shows the result and the diff.

    A click leaves the keyboard focus where it was (the input): the card's keys (Enter,
    `c`) are for a card reached with Tab, so a word typed after a click is typed."""

    FOCUS_ON_CLICK = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_expanded", "expand", show=False),
        Binding("c", "copy_output", "copy the output", show=False),
    ]
    expanded: var[bool] = var(False, init=False)

    def __init__(self, item: ToolItem) -> None:
        # Classes given here, not added after: add_class before mounting restyles.
        super().__init__(classes=f"-{look(item)}")
        self.item = item
        self._since: float | None = None  # when it was first seen running, on the app's clock
        self._tick: Timer | None = None
        self.header = SteadyStatic(self._header(), classes="tool-header")
        self.body = Vertical(classes="tool-body")  # mounted when first expanded
        self.tail = SteadyStatic(classes="tool-tail")  # a running command's last lines
        self._shown_state = look(item)

    def compose(self) -> ComposeResult:
        yield self.header

    def on_mount(self) -> None:
        self._follow_run()

    def _clock(self) -> Callable[[], float]:
        # The app's injected clock (the status line's), so a test's screen shows its time.
        clock: Callable[[], float] = getattr(self.app, "clock", time.monotonic)
        return clock

    def _follow_run(self) -> None:
        """While the call runs: a timer in the header, and a command's last lines under it."""
        item = self.item
        if item.state == "running":
            if self._since is None:
                self._since = self._clock()()
                self._tick = self.set_interval(TICK_SECONDS, self._tick_over)
                self.header.update(self._header())
        elif self._tick is not None:
            self._tick.stop()
            self._tick, self._since = None, None
        if live_tail(item) and item.progress:
            self.tail.update(Content(item.progress))
            if not self.tail.is_attached:
                self.mount(self.tail, after=self.header)
        elif self.tail.is_attached:
            self.tail.remove()

    def _tick_over(self) -> None:
        self.header.update(self._header())

    def update_item(self, item: ToolItem) -> None:
        """The item changed (state, title, bytes, result, progress)."""
        self.item = item
        if self.is_mounted:
            self._follow_run()
        self.header.update(self._header())
        state = look(item)
        if state != self._shown_state:
            self.remove_class(f"-{self._shown_state}")
            self.add_class(f"-{state}")
            self._shown_state = state
            if self.expanded:
                self._fill_body()

    def _header(self) -> Content:
        item = self.item
        icon, colour = STATES.get(look(item), ("•", "$foreground-muted"))
        extra = f" · MCP {item.mcp}" if item.mcp else ""
        if item.rule:
            extra += f" · allowed by {' + '.join(item.rule.splitlines())}"
        if item.diagnostics:  # what language servers and checks said after the edit
            extra += f" · {summary(item.diagnostics)}"
        said = "$error" if look(item) == "failed" else "$foreground-muted"
        return Content.from_markup(
            f"[{colour}]$icon[/] [b]$title[/b]  [{said}]$state[/][$foreground-muted]$extra[/]",
            icon=icon,
            title=item.title or item.tool,
            state=state_text(item, self._elapsed()),
            extra=extra,
        )

    def _elapsed(self) -> float | None:
        return None if self._since is None else self._clock()() - self._since

    def action_toggle_expanded(self) -> None:
        self.expanded = not self.expanded

    def action_copy_output(self) -> None:
        """`c`: the call's output (or its diff) on the clipboard, with OSC 52."""
        text = self.item.result or self.item.diff
        if not text:
            self.app.notify("This call has no output to copy yet.")
            return
        self.app.copy_to_clipboard(text)
        lines = text.count("\n") + 1
        self.app.notify(
            f"Copied the output of {self.item.title or self.item.tool} ({lines} lines)."
        )

    def on_click(self, event: Click) -> None:
        event.stop()
        self.expanded = not self.expanded

    class Toggled(Message):
        """A card opened or closed: a `task` card shows or hides its sub-agent's work."""

        def __init__(self, item_id: str, expanded: bool) -> None:
            super().__init__()
            self.item_id = item_id
            self.expanded = expanded

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")
        self.post_message(self.Toggled(self.item.id, expanded))
        if expanded:
            if not self.body.is_attached:
                self.mount(self.body)
            self._fill_body()
        else:
            self.body.remove_children()

    def _fill_body(self) -> None:
        item = self.item
        self.body.remove_children()
        widgets: list[Static | DiffView] = []
        if item.args and item.state in ("composing", "error") and not item.result:
            widgets.append(Static(Content(item.args), classes="tool-args"))
        if item.result:
            lines = item.result.split("\n")
            shown = "\n".join(lines[:RESULT_LINES])
            if len(lines) > RESULT_LINES:
                shown += f"\n… {len(lines) - RESULT_LINES:,} more lines (Ctrl+F searches them)"
            result = Static(Content(shown), classes="tool-result")
            result.set_class(item.is_error, "-error")
            widgets.append(result)
        if item.diff:
            widgets.append(DiffView(item.diff))
        if not widgets:
            widgets.append(Static(Content("(no result yet)"), classes="tool-result"))
        self.body.mount_all(widgets)
