"""An answer of the model: its text as streamed Markdown, its reasoning in a block above.

The view is the `MarkdownFlow` itself rather than a container around it: a
container repaints its own background whenever its child grows, which costs
every frame of a stream. The reasoning block, when there is one, is a sibling
mounted just before it.
"""

from __future__ import annotations

from textual.widget import Widget

from agent_cli.engine.items import AssistantItem
from agent_cli.frontends.tui.markdown_flow import MarkdownFlow
from agent_cli.frontends.tui.reasoning_block import ReasoningBlock


class AssistantView(MarkdownFlow):
    """Built with the text so far; `grow` takes more while it streams, `complete` the end."""

    def __init__(self, text: str, reasoning: str, *, streaming: bool) -> None:
        super().__init__(text, streaming=streaming)
        self.reasoning: ReasoningBlock | None = None
        if reasoning:
            self.reasoning = ReasoningBlock(reasoning, streaming=streaming)
        self._empty_check()

    def on_mount(self) -> None:
        if self.reasoning is not None and not self.reasoning.is_attached:
            self._mount_reasoning(self.reasoning)

    def on_unmount(self) -> None:
        if self.reasoning is not None and self.reasoning.is_attached:
            self.reasoning.remove()

    def _mount_reasoning(self, block: ReasoningBlock) -> None:
        parent = self.parent
        if isinstance(parent, Widget):
            parent.mount(block, before=self)

    def grow(self, text: str, reasoning: str) -> None:
        if reasoning:
            if self.reasoning is None:
                self.reasoning = ReasoningBlock(streaming=True)
                if self.is_mounted:
                    self._mount_reasoning(self.reasoning)
            self.reasoning.append(reasoning)
        if text:
            self.append(text)
        self._empty_check()

    def complete(self, item: AssistantItem) -> None:
        self.finish(item.text)
        if self.reasoning is not None:
            self.reasoning.finish(item.reasoning)
        self._empty_check()

    def _empty_check(self) -> None:
        """An answer that only called tools has no text: take no room for it."""
        self.display = self.has_text
