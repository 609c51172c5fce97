"""A modal list to choose from: a conversation, a model, a theme, a mode, an agent, ...

Every picker behaves alike: the current choice is marked `●` and highlighted;
typing filters the list (any part of a line, any case); Up/Down move, Enter
chooses, Escape leaves. A picker may preview the highlighted choice as it moves
(the theme picker shows each theme live) and undo it on Escape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.engine.store import Summary

CURRENT_MARK = "● "
Preview = Callable[[str | None], None]  # the highlighted id; None: put back what was


class Picker(ModalScreen[str | None]):
    """Dismisses with the chosen option's id, or None (Escape)."""

    CSS_PATH = "picker.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "cancel"),
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
    ]

    def __init__(
        self,
        title: str,
        options: Sequence[Option],
        current: str = "",
        *,
        note: str = "",
        preview: Preview | None = None,
        mark: bool = True,
    ) -> None:
        """`current` is highlighted first, and marked `●` unless `mark` is False."""
        super().__init__()
        self.title_text = title
        self.note = note
        self.current = current
        self.preview = preview
        # The current choice marked; a list of things, not of choices (messages), unmarked.
        marks = mark and bool(current)
        self.options = [self._marked(option) if marks else option for option in options]
        self._texts = [_plain(option).lower() for option in options]

    def _marked(self, option: Option) -> Option:
        mark = CURRENT_MARK if option.id == self.current else " " * len(CURRENT_MARK)
        prompt = option.prompt
        shown = prompt if isinstance(prompt, Content) else Content(str(prompt))
        label = Content.assemble((mark, "$accent bold"), shown)
        return Option(label, id=option.id, disabled=option.disabled)

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static(
                f"{self.title_text}: type to filter, Enter chooses, Escape leaves",
                id="picker-title",
            )
            if self.note:
                yield Static(Content(self.note), id="picker-note")
            yield Input(placeholder="filter", id="picker-filter", compact=True)
            yield OptionList(*self.options, id="picker-list")

    def on_mount(self) -> None:
        self._highlight(self.current)
        self.query_one(Input).focus()

    @property
    def _list(self) -> OptionList:
        return self.query_one("#picker-list", OptionList)

    def _highlight(self, wanted: str) -> None:
        """The wanted option if it is shown, else the first that can be chosen."""
        shown = self._list
        ids = [shown.get_option_at_index(i).id for i in range(shown.option_count)]
        enabled = [
            i for i in range(shown.option_count) if not shown.get_option_at_index(i).disabled
        ]
        if wanted in ids:
            shown.highlighted = ids.index(wanted)
        elif enabled:
            shown.highlighted = enabled[0]

    @on(Input.Changed, "#picker-filter")
    def _filter(self, event: Input.Changed) -> None:
        query = event.value.strip().lower()
        shown = self._list
        before = shown.highlighted_option.id if shown.highlighted_option else self.current
        shown.clear_options()
        shown.add_options([o for o, t in zip(self.options, self._texts, strict=True) if query in t])
        self._highlight(before or "")

    @on(Input.Submitted, "#picker-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        option = self._list.highlighted_option
        if option is not None and not option.disabled:
            self._choose(option.id)

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if self.preview is not None and event.option.id is not None:
            self.preview(event.option.id)

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option.id)

    def _choose(self, option_id: str | None) -> None:
        self.dismiss(option_id)

    def action_move(self, step: int) -> None:
        shown = self._list
        if step < 0:
            shown.action_cursor_up()
        else:
            shown.action_cursor_down()

    def action_cancel(self) -> None:
        if self.preview is not None:
            self.preview(None)
        self.dismiss(None)


def _plain(option: Option) -> str:
    """What the filter matches an option on: its id and the words shown."""
    prompt = option.prompt
    text = prompt.plain if isinstance(prompt, Content) else str(prompt)
    return f"{option.id or ''} {text}"


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
    """A model, an agent, a theme, a mode: its id, and a muted note."""
    label = Content.from_markup("$id  [$foreground-muted]$note", id=option_id, note=note)
    return Option(label, id=option_id, disabled=not enabled)
