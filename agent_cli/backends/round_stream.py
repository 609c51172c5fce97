"""One round's stream events turned into items as they arrive (the loop's hot path).

Text and reasoning deltas are collected and joined only when the text is
needed; a tool call being written shows as its card from its first argument
bytes, its title following the arguments as far as they go.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_cli.engine.backend import Run
from agent_cli.engine.items import AssistantItem, NoticeItem, ToolCall, ToolItem
from agent_cli.providers.base import (
    ReasoningDelta,
    Retrying,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from agent_cli.tools.base import ToolRegistry, partial_arguments

# While a call is being written, its card is updated at most once per this many bytes.
COMPOSING_UPDATE_BYTES = 512
# Titles are recomputed from partial arguments only while they are this short.
TITLE_SCAN_LIMIT = 4096


class RoundStream:
    """Turns one round's stream events into items as they arrive."""

    def __init__(self, run: Run, tools: ToolRegistry, warn: Callable[[str], NoticeItem]) -> None:
        self.run = run
        self.tools = tools
        self.warn = warn
        # The notice of the retries so far, replaced by the outcome once the model answers.
        self._retry: NoticeItem | None = None
        self._retried: Retrying | None = None
        self.assistant: AssistantItem | None = None
        self.calls: dict[int, ToolItem] = {}
        self._reported: dict[int, int] = {}
        # Deltas are collected and joined when the text is needed: `item.text += delta`
        # copies the whole answer on every token, which grows with its square.
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._args: dict[int, list[str]] = {}

    def on(self, event: StreamEvent) -> None:
        # `type(event) is X` in each test, not `match`: mypy narrows it the same, and
        # class patterns (isinstance) cost two to three times as much per token.
        run = self.run
        if self._retry is not None and type(event) is not Retrying:
            self._answered()
        if type(event) is TextDelta:  # the hot path: once per token
            item = self.assistant or self._start()
            self._text.append(event.text)
            run.delta(item, event.text)
        elif type(event) is ReasoningDelta:
            item = self.assistant or self._start()
            self._reasoning.append(event.text)
            run.delta(item, "", event.text)
        elif type(event) is ToolCallStarted:
            self._call(event.index, event.id, event.name)
        elif type(event) is ToolCallDelta:
            self._grow(event.index, event.fragment)
        elif type(event) is ToolCallFinished:
            self._written(event)
        elif type(event) is Usage:
            run.add_usage(event)
        elif type(event) is Retrying:
            self._retrying(event)

    def _retrying(self, event: Retrying) -> None:
        """One notice for all the retries of a round, said again with each."""
        text = (
            f"The model service failed ({event.reason}); trying again in "
            f"{event.delay:.1f} s (retry {event.attempt})."
        )
        self._retried = event
        if self._retry is None:
            self._retry = self.warn(text)
        else:
            self.run.renotice(self._retry, text)

    def _answered(self) -> None:
        """The model answered after retries: the notice says so instead of 'trying again'."""
        item, event = self._retry, self._retried
        assert item is not None and event is not None
        self._retry = None
        times = "once" if event.attempt == 1 else f"{event.attempt} times"
        item.level = "info"
        said = f"The model service failed ({event.reason}); it answered after retrying {times}."
        self.run.renotice(item, said, heard=False)

    def sync(self) -> None:
        """Bring the assistant item's text and reasoning up to date with the deltas."""
        if self.assistant is not None:
            self.assistant.text = "".join(self._text)
            self.assistant.reasoning = "".join(self._reasoning)
        for index, item in self.calls.items():
            if item.state == "composing" and self._args[index]:
                item.args = "".join(self._args[index])

    def finish(self) -> list[ToolItem]:
        if self.assistant is not None:
            self.assistant.streaming = False
            self.run.update(self.assistant, save=True)
        return [self.calls[i] for i in sorted(self.calls)]

    def _start(self) -> AssistantItem:
        self.assistant = AssistantItem()
        self.run.add(self.assistant)
        return self.assistant

    def _call(self, index: int, call_id: str, name: str) -> ToolItem:
        if self.assistant is None:
            self._start()
        self.sync()
        item = ToolItem(tool=name, call_id=call_id, title=self._title(name, ""))
        tool = self.tools.get(name)
        item.mcp = tool.mcp if tool else ""
        item.read_only_hint = getattr(tool, "read_only_hint", None)
        self.calls[index] = item
        self._reported[index] = 0
        self._args[index] = []
        self.run.add(item)
        return item

    def _grow(self, index: int, fragment: str) -> None:
        item = self.calls.get(index)
        if item is None:
            return
        self._args[index].append(fragment)
        item.bytes += len(fragment.encode())
        if item.bytes - self._reported[index] >= COMPOSING_UPDATE_BYTES or item.bytes < 256:
            self._reported[index] = item.bytes
            if item.bytes < TITLE_SCAN_LIMIT:
                item.args = "".join(self._args[index])
                item.title = self._title(item.tool, item.args)
            self.run.update(item)

    def _written(self, event: ToolCallFinished) -> None:
        item = self.calls.get(event.index) or self._call(event.index, event.id, event.name)
        item.args = event.arguments
        self._args[event.index] = []  # the whole text is here now
        item.bytes = len(event.arguments.encode())
        item.title = self._title(item.tool, event.arguments)
        assert self.assistant is not None
        self.assistant.tool_calls.append(ToolCall(item.call_id, item.tool, event.arguments))
        self.run.update(item)

    def _title(self, name: str, arguments: str) -> str:
        tool = self.tools.get(name)
        if tool is None:
            return name
        try:
            return tool.title(partial_arguments(arguments))
        except (KeyError, TypeError, ValueError):
            return name
