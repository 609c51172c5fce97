"""The messages typed while a run goes, waiting above the input (issue 16).

One line each, oldest first, marked with how it goes in: `steer` (the run reads
it at its next round) or `queued` (sent when the run ends). Hidden while
nothing waits. The keys that change them are the input's (Up takes the last one
back to edit, Esc drops it); this widget only shows them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

if TYPE_CHECKING:
    from agent_cli.engine.pending import PendingMessage

KIND_LABELS = {"steer": "steer ", "queue": "queued"}
KIND_STYLES = {"steer": "bold $accent", "queue": "bold $secondary"}
HINT = "Up edits the last one · Esc drops it"


def pending_line(message: PendingMessage) -> Content:
    """The message's first line after its kind (a longer one says it goes on)."""
    first, _, rest = message.text.strip().partition("\n")
    shown = first + (" …" if rest.strip() else "")
    return Content.assemble((KIND_LABELS[message.kind], KIND_STYLES[message.kind]), "  ", shown)


class PendingView(Widget):
    """What waits to be sent; `messages = ()` hides it."""

    messages: reactive[tuple[PendingMessage, ...]] = reactive((), layout=True)

    def watch_messages(self, messages: tuple[PendingMessage, ...]) -> None:
        self.display = bool(messages)

    def render(self) -> Content:
        lines = [pending_line(message) for message in self.messages]
        if lines:
            lines.append(Content.styled(HINT, "$text-muted"))
        return Content("\n").join(lines)
