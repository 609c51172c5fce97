"""Events a run publishes, and the small pub/sub that carries them (SPEC §6).

Every front end (the TUI, the line REPL, `--output stream-json`, `agent acp`)
is only a subscriber. Subscribers are plain callables, called in order on the
event loop's thread; one that needs to do slow work hands it off itself.
Each event knows its JSON form, which is the stream-json line. Events are
NamedTuples: immutable, cheap to define and to create (one per streamed token).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from agent_cli.engine.items import Item, item_to_json
from agent_cli.providers.base import Usage


class RunStarted(NamedTuple):
    type = "run_started"
    conversation: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "conversation": self.conversation}


class ItemAdded(NamedTuple):
    type = "item_added"
    item: Item

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "item": item_to_json(self.item)}


class ItemUpdated(NamedTuple):
    type = "item_updated"
    item: Item

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "item": item_to_json(self.item)}


class Delta(NamedTuple):
    """More text or reasoning of a streaming assistant item."""

    type = "delta"
    item: str
    text: str = ""
    reasoning: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type, "item": self.item}
        if self.text:
            data["text"] = self.text
        if self.reasoning:
            data["reasoning"] = self.reasoning
        return data


class ApprovalRequested(NamedTuple):
    type = "approval_requested"
    request: Any  # agent_cli.engine.approval.ApprovalRequest

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **self.request.to_json()}


class ApprovalResolved(NamedTuple):
    type = "approval_resolved"
    item: str
    answer: str
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "item": self.item, "answer": self.answer, "reason": self.reason}


class NoticeEvent(NamedTuple):
    type = "notice"
    text: str
    level: str = "info"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text, "level": self.level}


class UsageEvent(NamedTuple):
    type = "usage"
    usage: Usage
    total: Usage

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "usage": self.usage._asdict(), "total": self.total._asdict()}


class RunFinished(NamedTuple):
    """The run ended; `reason` is one of the `StopReason` values; `error` says why it failed."""

    type = "run_finished"
    reason: str
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        data = {"type": self.type, "reason": self.reason}
        if self.error:
            data["error"] = self.error
        return data


Event = (
    RunStarted
    | ItemAdded
    | ItemUpdated
    | Delta
    | ApprovalRequested
    | ApprovalResolved
    | NoticeEvent
    | UsageEvent
    | RunFinished
)
Subscriber = Callable[[Event], None]


class EventBus:
    """Delivers each event to every subscriber, in subscription order."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns the function that removes it."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    def publish(self, event: Event) -> None:
        for subscriber in self._subscribers:
            subscriber(event)
