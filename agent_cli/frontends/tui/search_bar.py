"""Ctrl+F: a search bar over the transcript, with next and previous match."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static


class SearchBar(Horizontal):
    """Enter or Up goes to the previous (older) match, Down to the next; Escape closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "close search", show=False),
        Binding("up", "step(-1)", "older match", show=False),
        Binding("down", "step(1)", "newer match", show=False),
    ]

    @dataclass
    class Find(Message):
        """Find the query's next match, older or newer."""

        query: str
        step: int  # -1 older, +1 newer

    class Closed(Message):
        pass

    def __init__(self) -> None:
        super().__init__()
        # The app mounts the bar at the first Ctrl+F (AgentApp._place), so the first frame
        # goes out without it and its Input (their mounts, the Input's styles' parse).
        self.input = Input(placeholder="search the conversation", id="search-input")
        self.count = Static("", id="search-count")
        self.display = False

    def compose(self) -> ComposeResult:
        yield self.input
        yield self.count

    def open(self) -> None:
        self.display = True
        self.input.focus()

    def action_close(self) -> None:
        self.display = False
        self.count.update("")
        self.post_message(self.Closed())

    def action_step(self, step: int) -> None:
        self.post_message(self.Find(self.input.value, step))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Find(event.value, -1))

    def show_count(self, position: int, total: int, rewound: int = 0) -> None:
        """Which match is shown; with none, how many are in what /rewind took out."""
        if total == 0 and rewound:
            self.count.update(f"no match; {rewound} in rewound items (agent sessions show)")
        elif total == 0:
            self.count.update("no match")
        else:
            self.count.update(f"{position} of {total}")
