"""The model's reasoning: a dimmed block, collapsed unless the person opens it."""

from __future__ import annotations

from textual import on
from textual.content import Content
from textual.widgets import Collapsible, Static

STREAMING_TITLE = "Thinking…"
DONE_TITLE = "Thoughts"


class ReasoningBlock(Collapsible):
    """Keeps the reasoning text and draws it only while expanded (it may be long)."""

    def __init__(self, reasoning: str = "", *, streaming: bool = False) -> None:
        self._parts = [reasoning] if reasoning else []
        self._body = Static(classes="reasoning-text")
        self._stale = True
        super().__init__(self._body, title=STREAMING_TITLE if streaming else DONE_TITLE)

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def append(self, reasoning: str) -> None:
        self._parts.append(reasoning)
        self._stale = True
        if not self.collapsed:
            self._show()

    def finish(self, reasoning: str) -> None:
        if reasoning and reasoning != self.text:
            self._parts = [reasoning]
            self._stale = True
        self.title = DONE_TITLE
        if not self.collapsed:
            self._show()

    @on(Collapsible.Expanded)
    def _expanded(self) -> None:
        self._show()

    def _show(self) -> None:
        if self._stale:
            self._parts = [self.text]
            self._body.update(Content(self._parts[0]))
            self._stale = False
