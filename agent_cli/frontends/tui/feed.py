"""EventFeed: the TUI's Session subscriber, which only takes notes.

Subscribers are called synchronously on the event loop, once per streamed token
(20,000 times for a long answer). Touching a widget per token is what makes the
naive paths 10-100x too slow, so the feed only appends to lists and marks
itself dirty; the app drains it at most ~30 times a second (`take`) and applies
one `Batch` to the widgets, inside one batched update.

It also keeps the text streamed so far of every answer still streaming: the
loop joins its deltas into `item.text` only at the end, and a view created
mid-stream (older pages, a search, /new) needs the text up to that point.
No Textual here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agent_cli.engine.approval import ApprovalRequest
from agent_cli.engine.elicitation import ElicitationRequest
from agent_cli.engine.events import (
    ApprovalRequested,
    Delta,
    ElicitationRequested,
    Event,
    ItemAdded,
    ItemUpdated,
    NoticeEvent,
    PlanUpdated,
    RunFinished,
    RunStarted,
    UsageEvent,
)
from agent_cli.engine.items import AssistantItem, Item, NoticeItem
from agent_cli.engine.pending import PendingChanged, PendingMessage
from agent_cli.providers.base import Usage
from agent_cli.tools.plan import Plan


@dataclass
class Batch:
    """Everything that happened since the last `take`, in the order it matters."""

    added: list[Item] = field(default_factory=list)
    text: dict[str, str] = field(default_factory=dict)  # item id -> new text
    reasoning: dict[str, str] = field(default_factory=dict)  # item id -> new reasoning
    updated: dict[str, Item] = field(default_factory=dict)  # item id -> item (last state)
    approvals: list[ApprovalRequest] = field(default_factory=list)
    forms: list[ElicitationRequest] = field(default_factory=list)  # MCP servers' forms
    notices: list[tuple[str, str]] = field(default_factory=list)  # (text, level), no item
    started: bool = False
    finished: str | None = None  # the stop reason, when the run ended
    error: str = ""
    usage: Usage | None = None  # the conversation's total
    round_usage: Usage | None = None  # the last round's: what its request held
    spent: Usage | None = None  # the rounds' usage in this batch, added up (the run's so far)
    plan: Plan | None = None  # the plan as it last changed
    pending: tuple[PendingMessage, ...] | None = None  # what waits, as it last changed
    returned: list[str] = field(default_factory=list)  # messages a stop gave back unsent

    @property
    def chars(self) -> int:
        """How many characters of text and reasoning it brings (how fast text floods in)."""
        return sum(map(len, self.text.values())) + sum(map(len, self.reasoning.values()))


class _Stream:
    """The text of an answer still streaming, as flushed so far."""

    __slots__ = ("reasoning", "text")

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []


class EventFeed:
    """Collects a Session's events between two flushes; `wake` asks for a flush."""

    def __init__(self, wake: Callable[[bool], None]) -> None:
        self._wake = wake
        self._dirty = False
        self._batch = Batch()
        self._text: dict[str, list[str]] = {}
        self._reasoning: dict[str, list[str]] = {}
        self._streams: dict[str, _Stream] = {}
        self.deltas = 0  # how many deltas were received (for the benchmark)

    @property
    def dirty(self) -> bool:
        return self._dirty

    def __call__(self, event: Event) -> None:
        if type(event) is Delta:  # the hot path, once per token: as little as can be
            self.deltas += 1
            if text := event.text:
                pieces = self._text.get(event.item)
                if pieces is None:
                    pieces = self._text[event.item] = []
                pieces.append(text)
            if event.reasoning:
                self._reasoning.setdefault(event.item, []).append(event.reasoning)
        else:
            self._note(event)
        if not self._dirty:
            self._dirty = True
            self._wake(False)

    def _note(self, event: Event) -> None:
        batch = self._batch
        if isinstance(event, ItemAdded):
            batch.added.append(event.item)
            if isinstance(event.item, AssistantItem) and event.item.streaming:
                self._streams[event.item.id] = _Stream()
        elif isinstance(event, ItemUpdated):
            batch.updated[event.item.id] = event.item
        elif isinstance(event, ApprovalRequested):
            batch.approvals.append(event.request)
        elif isinstance(event, ElicitationRequested):
            batch.forms.append(event.request)
        elif isinstance(event, NoticeEvent):
            # A notice the run also added (or changed) as an item is shown as that item.
            added = batch.added[-1] if batch.added else None
            if not (isinstance(added, NoticeItem) and added.text == event.text) and not any(
                isinstance(item, NoticeItem) and item.text == event.text
                for item in batch.updated.values()
            ):
                batch.notices.append((event.text, event.level))
        elif isinstance(event, PlanUpdated):
            batch.plan = event.plan
        elif isinstance(event, PendingChanged):
            batch.pending = event.pending
            batch.returned.extend(event.returned)
        elif isinstance(event, UsageEvent):
            batch.usage, batch.round_usage = event.total, event.usage
            batch.spent = event.usage if batch.spent is None else batch.spent + event.usage
        elif isinstance(event, RunStarted):
            batch.started, batch.finished = True, None
        elif isinstance(event, RunFinished):
            batch.finished, batch.error = event.reason, event.error
            self._wake(True)  # the end is shown at once, not at the next frame slot

    def take(self) -> Batch:
        """The batch to apply now; the next events start a new one."""
        batch, self._batch = self._batch, Batch()
        batch.text = {key: "".join(parts) for key, parts in self._text.items()}
        batch.reasoning = {key: "".join(parts) for key, parts in self._reasoning.items()}
        self._text.clear()
        self._reasoning.clear()
        self._dirty = False
        return batch

    def commit(self, batch: Batch) -> None:
        """Record the applied batch's text in the streams; drop finished streams."""
        for key, text in batch.text.items():
            stream = self._streams.get(key)
            if stream is not None:
                stream.text.append(text)
        for key, reasoning in batch.reasoning.items():
            stream = self._streams.get(key)
            if stream is not None:
                stream.reasoning.append(reasoning)
        for key, item in batch.updated.items():
            if isinstance(item, AssistantItem) and not item.streaming:
                self._streams.pop(key, None)

    def streamed(self, item: AssistantItem) -> tuple[str, str, bool]:
        """(text, reasoning, still streaming) of an answer, as far as it has been shown."""
        stream = self._streams.get(item.id)
        if stream is None:
            return item.text, item.reasoning, False
        return "".join(stream.text), "".join(stream.reasoning), True
