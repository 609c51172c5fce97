"""A yes/no question the agent needs answered before it goes on (trusting a workspace)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


class Question(ModalScreen[bool]):
    """Dismisses with True for `y`, False for `n` or Escape."""

    CSS_PATH = "picker.tcss"  # the same framed box as the pickers
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "yes"),
        Binding("n", "answer(False)", "no"),
        Binding("escape", "answer(False)", "no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static(Content(self.question), id="question-text")
            yield Static("y yes · n no", id="picker-title")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
