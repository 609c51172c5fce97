"""A notice (why something did not happen) or a slash command's reply, styled by level."""

from __future__ import annotations

from agent_cli.frontends.tui.markdown_flow import MarkdownFlow

LEVELS = ("info", "warn", "error")


class NoticeView(MarkdownFlow):
    """Markdown text with a level class (`-info`, `-warn`, `-error`) that colours it;
    `-reply` for a slash command's answer, `-summary` for a /compact summary."""

    def __init__(
        self, text: str, level: str = "info", *, reply: bool = False, summary: bool = False
    ) -> None:
        self.level = level if level in LEVELS else "info"
        classes = [
            f"-{self.level}",
            *(["-reply"] if reply else []),
            *(["-summary"] if summary else []),
        ]
        super().__init__(text, classes=" ".join(classes))
        self.text = text

    def change(self, text: str, level: str) -> None:
        """The notice was said again, or replaced by its outcome (a retry that worked)."""
        level = level if level in LEVELS else "info"
        if level != self.level:
            self.remove_class(f"-{self.level}")
            self.add_class(f"-{level}")
            self.level = level
        if text != self.text:
            self.text = text
            self.reset(text, streaming=False)
