"""The status line: workspace, git branch, model, mode, tokens, and the run's state.

While a run goes its state comes first, so a narrow terminal still shows it: what the run
is doing (thinking, writing, running a command, waiting for approval), for how long,
the tokens it has sent and received so far, and that Escape stops it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from rich.cells import cell_len, set_cell_size
from textual.content import Content
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPIN_SECONDS = 0.1
TICK_SECONDS = 1.0  # the elapsed time is redrawn this often (with reduce_motion too)


def count_text(count: int) -> str:
    return str(count) if count < 1000 else f"{count / 1000:.1f}k"


def shortened(text: str, width: int) -> str:
    """`text` in at most `width` cells, cut with an ellipsis; a quoted command keeps its
    closing backtick ("running `make che…`")."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    quoted = text.endswith("`") and "`" in text[:-1] and width >= text.index("`") + 3
    if quoted:  # room for "running `", one character and "…`"
        return set_cell_size(text[:-1], width - 2).rstrip("…") + "…`"
    return set_cell_size(text, width - 1) + "…"


def elapsed_text(seconds: float) -> str:
    whole = max(0, int(seconds))
    if whole < 60:
        return f"{whole}s"
    minutes, whole = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m {whole:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


class StatusLine(Widget):
    """One line; each field is a reactive, and a spinner turns while a run goes on."""

    workspace: reactive[str] = reactive("")
    branch: reactive[str] = reactive("")  # "main" or "main*" (dirty); "" outside git
    model: reactive[str] = reactive("")
    mode: reactive[str] = reactive("")
    unconfined: reactive[str] = reactive("")  # "no sandbox" when commands run unconfined
    tokens: reactive[int] = reactive(0)  # used by the whole conversation
    in_context: reactive[int] = reactive(0)  # in the last round's request, 0 when unknown
    context: reactive[int] = reactive(0)  # the model's context window, 0 when unknown
    cost: reactive[float] = reactive(-1.0)  # dollars so far; -1 when the model has no price
    state: reactive[str] = reactive("idle")  # "idle", "running", "waiting", "stopping"
    hint: reactive[str] = reactive("")  # a passing hint ("Ctrl+C again to quit")
    # While a run goes: what it does ("thinking", "writing", "running `make`"), and the
    # tokens its requests sent (in) and its answers brought (out) so far.
    activity: reactive[str] = reactive("")
    run_in: reactive[int] = reactive(0)
    run_out: reactive[int] = reactive(0)

    def __init__(self, *, reduce_motion: bool, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.reduce_motion = reduce_motion
        self.clock = clock  # injected: a test's screen shows the time it chose
        self.started = 0.0  # when the run began, on `clock`
        self._frame = 0
        self._timer: Timer | None = None
        self._painted = 0.0  # when it was last rendered (monotonic)
        self._shown_frame = -1  # the spinner's frame it was last rendered with
        self._tick: Timer | None = None
        self._key: tuple[object, ...] = ()
        self._fields = Content("")

    def run_started(self) -> None:
        """A run began: its clock and counts start from here."""
        self.started = self.clock()
        self.run_in = self.run_out = 0
        self.activity = "thinking"

    def watch_state(self, state: str) -> None:
        if state == "idle":
            self.activity = ""
            if self._tick is not None:
                self._tick.pause()
        elif self._tick is None:
            self._tick = self.set_interval(TICK_SECONDS, self._tick_over)
        else:
            self._tick.resume()
        if self.reduce_motion:
            return
        if state == "idle":
            if self._timer is not None:
                self._timer.pause()
        elif self._timer is None:
            self._timer = self.set_interval(SPIN_SECONDS, self._spin)
        else:
            self._timer.resume()

    def _tick_over(self) -> None:
        if time.monotonic() - self._painted >= TICK_SECONDS:  # else a frame just showed it
            self.refresh()

    def _spin(self) -> None:
        self._frame = (self._frame + 1) % len(SPINNER)
        if time.monotonic() - self._painted >= SPIN_SECONDS:
            self.refresh()
        # else a frame painted it just now (the stream's, each flush): the turn shows in
        # the next one, and the spinner costs no frames of its own while text streams

    def paint_with_frame(self) -> None:
        """Be painted in the frame being made (the app's flush) rather than in one of
        the spinner's or the run's clock's own (both only paint when no flush has) — if
        the spinner has turned since: a flush comes up to 28 times a second, the spinner
        turns 10, and a line repainted unchanged costs the frame as much as a changed one.
        (A field that changes repaints it of itself.)"""
        if self.state != "idle" and self._frame != self._shown_frame:
            self.refresh()

    def set_workspace(self, workspace: Path) -> None:
        """The folder's name (the full path as a tooltip): short, and the same on every machine."""
        self.workspace = workspace.name or str(workspace)
        self.tooltip = str(workspace)

    def render(self) -> Content:
        self._painted, self._shown_frame = time.monotonic(), self._frame
        # The spinner redraws this ten times a second: the rest is built once per change.
        key = (
            self.workspace, self.branch, self.model, self.mode, self.unconfined, self.tokens,
            self.in_context, self.context, self.cost, self.hint, self.state == "idle",
        )  # fmt: skip
        if key != self._key:
            self._key, self._fields = key, self._render_fields()
        if self.state == "idle":
            line = Content("").join([self._fields, self._state()])
        else:
            line = Content("").join([self._state(), Content(" · "), self._fields])
        if not self.hint:
            return line
        # A passing hint matters most while it shows: first, so a narrow screen keeps it.
        hint = Content.from_markup("[$warning]$hint[/] · ", hint=self.hint)
        return Content("").join([hint, line])

    def _render_fields(self) -> Content:
        parts: list[Content] = [Content.styled(self.workspace, "bold")]
        if self.branch:
            parts.append(Content.from_markup("[$foreground-muted] $branch", branch=self.branch))
        parts.append(Content.from_markup("[$foreground-muted] · [/]$model", model=self.model))
        mode = Content.from_markup("[$foreground-muted] · [/][b $accent]$mode", mode=self.mode)
        parts.append(mode)
        if self.unconfined:
            parts.append(Content.from_markup(" [$warning]$what", what=self.unconfined))
        used = f"{count_text(self.tokens)} tokens"
        if self.context:
            used += f" · context {count_text(self.in_context)} / {count_text(self.context)}"
        if self.cost >= 0:
            used += f" · ${self.cost:.2f}" if self.cost >= 1 else f" · ${self.cost:.4f}"
        parts.append(Content.from_markup("[$foreground-muted] · $used", used=used))
        if self.state == "idle":
            parts.append(Content(" · "))
        return Content("").join(parts)

    def _state(self) -> Content:
        state = self.state
        if state == "idle":
            return Content.from_markup("[$foreground-muted]idle")
        icon = "…" if self.reduce_motion else SPINNER[self._frame]
        colour = "$warning" if state in ("waiting", "stopping") else "$accent"
        doing = {"waiting": "waiting for approval", "stopping": "stopping"}.get(
            state, self.activity or state
        )
        spent = f"{elapsed_text(self.clock() - self.started)}"
        if self.run_in or self.run_out:
            spent += f" · ↑{count_text(self.run_in)} ↓{count_text(self.run_out)}"
        fixed = [Content.from_markup("[$foreground-muted] · $spent", spent=spent)]
        if state != "stopping":
            fixed.append(Content.from_markup("[$foreground-muted] · [b]esc[/b] to interrupt"))
        if width := self.content_size.width:  # 0 before the first layout: nothing to fit
            # The time, the tokens and the key come first; what it does gets what is left,
            # less the " · " after which the other fields begin (cut at the line's end).
            room = width - len(f"{icon} ") - sum(part.cell_length for part in fixed) - 3
            doing = shortened(doing, max(1, room))
        said = Content.from_markup(f"[{colour}]$icon $doing", icon=icon, doing=doing)
        return Content("").join([said, *fixed])
