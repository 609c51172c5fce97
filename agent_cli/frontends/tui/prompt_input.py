"""The multi-line input: Enter sends, Tab queues, Shift+Enter or Ctrl+J adds a line.

Up on the first line and Down on the last walk the history; Escape in an
empty input reports itself (it drops the last message waiting to be sent);
while the completion menu is open, Up/Down/Tab/Enter/Escape drive the menu
instead. The input only reports these keys as messages; `Composer` acts on them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea

NEWLINE_KEYS = ("shift+enter", "ctrl+j")
MENU_KEYS = {"up": "up", "down": "down", "tab": "accept", "enter": "enter", "escape": "close"}


class PromptInput(TextArea):
    """A TextArea whose Enter sends instead of breaking the line."""

    @dataclass
    class Submitted(Message):
        text: str

    @dataclass
    class Queued(Message):
        """Tab with text: send it after the run (or now, when none goes on)."""

        text: str

    class EmptyEscape(Message):
        """Escape in an empty input (the key still does what it does anywhere else)."""

    @dataclass
    class HistoryWalk(Message):
        step: int  # -1 older, +1 newer

    @dataclass
    class MenuKey(Message):
        key: str  # "up", "down", "accept" (Tab), "enter" or "close"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            compact=True,
            highlight_cursor_line=False,
        )
        self.completing = False  # the Composer sets this while its menu is open
        self._key_time = 0.0  # when the last key came (monotonic)

    def typed_within(self, seconds: float) -> bool:
        """Whether a key came in the last `seconds` (the app shows it before other news)."""
        return time.monotonic() - self._key_time < seconds

    async def _on_key(self, event: events.Key) -> None:
        self._key_time = time.monotonic()
        if event.key == "escape" and not self.completing and not self.text:
            self.post_message(self.EmptyEscape())
        message = self._message_for(event.key)
        if message is None:
            await super()._on_key(event)
            return
        event.stop()
        event.prevent_default()
        if isinstance(message, str):
            self.insert(message)
        else:
            self.post_message(message)

    def _message_for(self, key: str) -> Message | str | None:
        """What a key means here: a message to post, text to insert, or None (normal)."""
        if self.completing and key in MENU_KEYS:
            return self.MenuKey(MENU_KEYS[key])
        if key == "enter":
            return self.Submitted(self.text)
        if key == "tab" and self.text.strip():
            return self.Queued(self.text)
        if key in NEWLINE_KEYS:
            return "\n"
        row = self.cursor_location[0]
        if key == "up" and row == 0:
            return self.HistoryWalk(-1)
        if key == "down" and row == self.document.line_count - 1:
            return self.HistoryWalk(+1)
        return None

    def set_text(self, text: str) -> None:
        """Replace the text and put the cursor at its end."""
        self.load_text(text)
        self.move_cursor(self.document.end)
