"""The multi-line input: Enter sends, Tab queues; Ctrl+J, Shift+Enter or `\\` then Enter
adds a line.

Up on the first line and Down on the last walk the history; Escape in an
empty input reports itself (it drops the last message waiting to be sent);
while the completion menu is open, Up/Down/Tab/Enter/Escape drive the menu
instead. PageUp/PageDown (and Home/End in an empty input, Ctrl+Home/Ctrl+End
always) scroll the transcript, not the input. A paste of many lines goes in as
a label (`pasted.py`). The input only reports these keys as messages; `Composer`
and the app act on them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

from agent_cli.frontends.tui.pasted import Pastes

NEWLINE_KEYS = ("shift+enter", "ctrl+j")
# Keys that scroll the transcript from the input; Home/End only while the input is empty
# (otherwise they move the cursor along the line, as in any text field).
SCROLL_KEYS = {"pageup": "page_up", "pagedown": "page_down", "ctrl+home": "home", "ctrl+end": "end"}
EMPTY_SCROLL_KEYS = {"home": "home", "end": "end"}
MENU_KEYS = {"up": "up", "down": "down", "tab": "accept", "enter": "enter", "escape": "close"}
# What an empty input says, the longest that fits its width.
PLACEHOLDERS = (
    "Ask anything · / for commands · @ for files · ! for a shell command",
    "Ask anything · / for commands · @ for files",
    "Ask anything",
)


class PromptInput(TextArea):
    """A TextArea whose Enter sends instead of breaking the line."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+o", "expand_pastes", "show the pasted text", show=False),
    ]

    @dataclass
    class Submitted(Message):
        """Enter: send the text."""

        text: str

    @dataclass
    class Queued(Message):
        """Tab with text: send it after the run (or now, when none goes on)."""

        text: str

    class EmptyEscape(Message):
        """Escape in an empty input (the key still does what it does anywhere else)."""

    class EmptyBackspace(Message):
        """Backspace in an empty input: the last image chip goes."""

    @dataclass
    class ImagePasted(Message):
        """A paste that is an image: a file's path or `data:image/…` text."""

        text: str

    class ClipboardImage(Message):
        """Ctrl+V: an image from the system clipboard is wanted."""

    @dataclass
    class HistoryWalk(Message):
        """Up or Down at the input's first or last line: an older or newer message."""

        step: int  # -1 older, +1 newer

    @dataclass
    class Scroll(Message):
        """A key that scrolls the transcript: "page_up", "page_down", "home" or "end"."""

        where: str

    @dataclass
    class MenuKey(Message):
        """A key for the completion menu while it shows."""

        key: str  # "up", "down", "accept" (Tab), "enter" or "close"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            compact=True,
            highlight_cursor_line=False,
            placeholder=PLACEHOLDERS[0],
        )
        self.completing = False  # the Composer sets this while its menu is open
        self._key_time = 0.0  # when the last key came (monotonic)
        self.pastes = Pastes()

    def on_resize(self, event: events.Resize) -> None:
        # One column stays free for the cursor after the text.
        fits = [text for text in PLACEHOLDERS if len(text) < self.content_size.width]
        self.placeholder = fits[0] if fits else PLACEHOLDERS[-1]

    @property
    def message(self) -> str:
        """The text to send: the input's, with each pasted label replaced by its paste."""
        return self.pastes.expand(self.text)

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
            if message:
                self.insert(message)
        else:
            self.post_message(message)

    def _message_for(self, key: str) -> Message | str | None:
        """What a key means here: a message to post, text to insert, or None (normal)."""
        if self.completing and key in MENU_KEYS:
            return self.MenuKey(MENU_KEYS[key])
        if key == "enter" and self._after_backslash():
            self.replace("\n", self._before_cursor(), self.cursor_location)
            return ""
        if key == "enter":
            return self.Submitted(self.message)
        if key == "tab" and self.text.strip():
            return self.Queued(self.message)
        if key in NEWLINE_KEYS:
            return "\n"
        if key == "backspace" and not self.text:
            return self.EmptyBackspace()
        if key in SCROLL_KEYS or (key in EMPTY_SCROLL_KEYS and not self.text):
            return self.Scroll({**SCROLL_KEYS, **EMPTY_SCROLL_KEYS}[key])
        row = self.cursor_location[0]
        if key == "up" and row == 0:
            return self.HistoryWalk(-1)
        if key == "down" and row == self.document.line_count - 1:
            return self.HistoryWalk(+1)
        return None

    def _before_cursor(self) -> tuple[int, int]:
        row, column = self.cursor_location
        return (row, max(column - 1, 0))

    def _after_backslash(self) -> bool:
        """`\\` then Enter adds a line, as in a shell (the backslash goes)."""
        row, column = self.cursor_location
        return column > 0 and not self.selected_text and self.document[row][column - 1] == "\\"

    async def _on_paste(self, event: events.Paste) -> None:
        """An image's path or data goes in as an image; a long paste as its label; a short
        one as it is."""
        event.stop()
        event.prevent_default()
        from agent_cli.frontends.clipboard import looks_like_image  # at the first paste

        if looks_like_image(event.text):
            self.post_message(self.ImagePasted(event.text))
        elif not self.read_only:
            result = self.replace(self.pastes.collapse(event.text), *self.selection)
            self.move_cursor(result.end_location)
            self.focus()

    def action_paste(self) -> None:
        """Ctrl+V: the system clipboard's image (the Composer reads it)."""
        self.post_message(self.ClipboardImage())

    def action_expand_pastes(self) -> None:
        """Ctrl+O: each pasted text in the input in place of its label (to edit it)."""
        if self.message != self.text:
            self.set_text(self.message)

    def set_text(self, text: str) -> None:
        """Replace the text and put the cursor at its end."""
        if not text:
            self.pastes.clear()
        self.load_text(text)
        self.move_cursor(self.document.end)
