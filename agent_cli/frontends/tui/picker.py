"""A modal list to choose from: a conversation to resume, a model, an agent, a message."""

from __future__ import annotations

from collections.abc import Sequence
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


class Picker(ModalScreen[str | None]):
    """Dismisses with the chosen option's id, or None (Escape)."""

    CSS_PATH = "picker.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]

    def __init__(self, title: str, options: Sequence[Option], current: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.options = options
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static(f"{self.title_text} (Enter), or Escape", id="picker-title")
            yield OptionList(*self.options, id="picker-list")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        ids = [option.id for option in self.options]
        options.highlighted = ids.index(self.current) if self.current in ids else 0
        options.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


def session_option(summary: Summary) -> Option:
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


def message_option(number: int, text: str, item_id: str) -> Option:
    """An earlier message to rewind to: its number and its first line."""
    line = " ".join(text.split())
    line = line if len(line) <= 100 else line[:99] + "…"
    label = Content.from_markup(
        "[$foreground-muted]$number.[/]  $text", number=str(number), text=line
    )
    return Option(label, id=item_id)


def labelled_option(option_id: str, note: str = "", enabled: bool = True) -> Option:
    """A model or an agent: its id, and a muted note (a context window, what is missing)."""
    label = Content.from_markup("$id  [$foreground-muted]$note", id=option_id, note=note)
    return Option(label, id=option_id, disabled=not enabled)
