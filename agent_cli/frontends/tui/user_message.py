"""A message the person sent, shown as written (no Markdown, no markup)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


class UserMessage(Static):
    """The person's own words, marked by a bar on the left."""

    def __init__(self, text: str) -> None:
        super().__init__(Content(text))
        self.text = text
