"""Long pastes kept out of the input's way: a short label stands in for the text.

A paste of more than `PASTE_LINES` lines is shown in the input as
`[pasted text #1, 300 lines]`; the message sent carries the whole text in its
place. A label the person deleted or edited is simply no longer expanded.
"""

from __future__ import annotations

import re

PASTE_LINES = 10  # a paste of more lines than this is collapsed


def line_count(text: str) -> int:
    return len(text.rstrip("\n").split("\n"))


class Pastes:
    """The collapsed pastes of the message being written, by their label."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self._count = 0

    def collapse(self, text: str) -> str:
        """What to insert for a paste: the text itself, or a label standing for it."""
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        if line_count(text) <= PASTE_LINES:
            return text
        self._count += 1
        label = f"[pasted text #{self._count}, {line_count(text)} lines]"
        self.texts[label] = text
        return label

    def expand(self, text: str) -> str:
        """The message with every label still in it replaced by its paste."""
        if not self.texts:
            return text
        # One pass: a paste that holds another's label is sent as it was pasted.
        labels = re.compile("|".join(re.escape(label) for label in self.texts))
        return labels.sub(lambda found: self.texts[found.group()], text)

    def clear(self) -> None:
        self.texts.clear()
        self._count = 0
