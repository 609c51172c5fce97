"""A message the person sent, shown as written (no Markdown, no markup).

A long one (a paste, usually) is shown folded to its first lines; a click or
Enter unfolds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.events import Click
from textual.reactive import var
from textual.widgets import Static

from agent_cli.frontends.tui.pasted import PASTE_LINES
from agent_cli.frontends.tui.steady import Steady

FOLDED_LINES = 3  # of a long message, the lines shown while it is folded


def folded(text: str) -> Content:
    lines = text.split("\n")
    more = len(lines) - FOLDED_LINES
    return Content.assemble(
        "\n".join(lines[:FOLDED_LINES]),
        (f"\n[… {more} more lines, {len(lines)} in all: click or Enter shows them]", "$text-muted"),
    )


class UserMessage(Steady, Static):
    """The person's own words, marked by a bar on the left. A click unfolds a long one
    and leaves the focus in the input (Enter unfolds it when reached with Tab)."""

    FOCUS_ON_CLICK = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_folded", "show all", show=False),
    ]
    unfolded: var[bool] = var(False, init=False)

    def __init__(self, text: str, chips: Sequence[str] = ()) -> None:
        self.text = text
        self.long = len(text.split("\n")) > PASTE_LINES
        # What was attached, as chips under the words (never the content).
        self.chips = Content.styled("  ".join(chips), "$accent") if chips else None
        super().__init__(self._body(folded(text) if self.long else Content(text)))
        self.can_focus = self.long

    def _body(self, words: Content) -> Content:
        if self.chips is None:
            return words
        return Content("\n").join([words, self.chips]) if self.text else self.chips

    def watch_unfolded(self, unfolded: bool) -> None:
        self.update(self._body(Content(self.text) if unfolded else folded(self.text)))

    def action_toggle_folded(self) -> None:
        if self.long:
            self.unfolded = not self.unfolded

    def on_click(self, event: Click) -> None:
        if self.long:
            event.stop()
            self.unfolded = not self.unfolded
