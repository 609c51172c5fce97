"""/sessions: pick a stored conversation of this folder to resume."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.engine.store import Summary


class SessionPicker(ModalScreen[str | None]):
    """Dismisses with the chosen conversation's id, or None (Escape)."""

    CSS_PATH = "session_picker.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]

    def __init__(self, summaries: list[Summary]) -> None:
        super().__init__()
        self.summaries = summaries

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static("Resume a conversation (Enter), or Escape", id="picker-title")
            yield OptionList(*[self._option(s) for s in self.summaries], id="picker-list")

    def _option(self, summary: Summary) -> Option:
        when = datetime.fromtimestamp(summary.updated).strftime("%Y-%m-%d %H:%M")
        return Option(
            Content.from_markup(
                "$title  [$foreground-muted]$items items · $when · $id",
                title=summary.title or "(untitled)",
                items=str(summary.items),
                when=when,
                id=summary.id,
            ),
            id=summary.id,
        )

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = 0
        options.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
