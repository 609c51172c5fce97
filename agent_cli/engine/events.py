"""Events a run publishes, and the small pub/sub that carries them (SPEC §6).

Every front end (the TUI, the line REPL, `--output stream-json`, `agent acp`)
is only a subscriber. Subscribers are plain callables, called in order on the
event loop's thread; one that needs to do slow work hands it off itself.
Each event knows its JSON form, which is the stream-json line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from agent_cli.engine.items import Item, item_to_json
from agent_cli.providers.base import Usage


@dataclass(frozen=True, slots=True)
class RunStarted:
    type: ClassVar[str] = "run_started"
    conversation: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "conversation": self.conversation}


@dataclass(frozen=True, slots=True)
class ItemAdded:
    type: ClassVar[str] = "item_added"
    item: Item

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "item": item_to_json(self.item)}


@dataclass(frozen=True, slots=True)
class ItemUpdated:
    type: ClassVar[str] = "item_updated"
    item: Item

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "item": item_to_json(self.item)}


@dataclass(frozen=True, slots=True)
class Delta:
    """More text or reasoning of a streaming assistant item."""

    type: ClassVar[str] = "delta"
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


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    type: ClassVar[str] = "approval_requested"
    request: Any  # agent_cli.engine.approval.ApprovalRequest

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **self.request.to_json()}


@dataclass(frozen=True, slots=True)
class ApprovalResolved:
    type: ClassVar[str] = "approval_resolved"
    item: str
    answer: str
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "item": self.item, "answer": self.answer, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class NoticeEvent:
    type: ClassVar[str] = "notice"
    text: str
    level: str = "info"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text, "level": self.level}


@dataclass(frozen=True, slots=True)
class UsageEvent:
    type: ClassVar[str] = "usage"
    usage: Usage
    total: Usage

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "usage": asdict(self.usage), "total": asdict(self.total)}


@dataclass(frozen=True, slots=True)
class RunFinished:
    """The run ended; `reason` is one of the `StopReason` values; `error` says why it failed."""

    type: ClassVar[str] = "run_finished"
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
