"""A `!command` in the transcript: the command, its output as it comes, how it ended."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from agent_cli.frontends.tui.steady import Steady

SHOWN_LINES = 200  # the output's last lines on screen (the model gets its own capped copy)
REFRESH_SECONDS = 1 / 20  # a flood of output costs at most this many repaints a second


class OwnCommandView(Steady, Static):
    """`$ command` over its output's last lines; `finish` says how it ended."""

    def __init__(self, command: str) -> None:
        super().__init__(classes="-running")
        self.command = command
        self.output = ""
        self.ended = ""
        self._dirty = False

    def on_mount(self) -> None:
        self._show()
        self.set_interval(REFRESH_SECONDS, self._refresh_if_dirty)

    def append(self, text: str) -> None:
        self.output += text
        if self.output.count("\n") > 2 * SHOWN_LINES:  # keep what is kept bounded
            self.output = "\n".join(self.output.split("\n")[-SHOWN_LINES:])
        self._dirty = True

    def finish(self, outcome: str, failed: bool) -> None:
        self.ended = outcome
        self.set_class(False, "-running")
        self.set_class(failed, "-failed")
        self._show()

    def _refresh_if_dirty(self) -> None:
        if self._dirty:
            self._show()

    def _show(self) -> None:
        self._dirty = False
        lines = self.output.rstrip("\n").split("\n")[-SHOWN_LINES:] if self.output else []
        text = Text(f"$ {self.command}", style="bold")
        if lines:
            text.append("\n")
            text.append_text(Text.from_ansi("\n".join(lines)))
        text.append(f"\n{self.ended or 'running… Ctrl+C stops it'}", style="italic")
        self.update(text)
