"""Events a run publishes, and the small pub/sub that carries them (SPEC §6).

Every front end (the TUI, the line REPL, `--output stream-json`, `agent acp`)
is only a subscriber. Subscribers are plain callables, called in order on the
event loop's thread; one that needs to do slow work hands it off itself.
Each event knows its JSON form, which is the stream-json line. Events are
frozen dataclasses with slots; their `type` is a class variable. Deltas are
batched per event-loop turn (`Run.delta`), so creating one is not per token.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from agent_cli.engine.items import Item, item_to_json, plan_to_json
from agent_cli.engine.pending import PendingChanged
from agent_cli.providers.base import Usage
from agent_cli.tools.plan import Plan

if TYPE_CHECKING:
    from agent_cli.engine.approval import ApprovalRequest
    from agent_cli.engine.elicitation import ElicitationRequest


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
    request: ApprovalRequest

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
class ElicitationRequested:
    """An MCP server asks the person to fill in a form during a call (MCP elicitation)."""

    type: ClassVar[str] = "elicitation_requested"
    request: ElicitationRequest

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **self.request.to_json()}


@dataclass(frozen=True, slots=True)
class ElicitationResolved:
    """The form was answered ("accept", "decline", "cancel"), or the run stopped waiting."""

    type: ClassVar[str] = "elicitation_resolved"
    request: ElicitationRequest
    action: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "server": self.request.form.server, "action": self.action}


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
        return {"type": self.type, "usage": self.usage._asdict(), "total": self.total._asdict()}


@dataclass(frozen=True, slots=True)
class PlanUpdated:
    """The agent's plan changed (update_plan, or an external agent's ACP plan): all of it."""

    type: ClassVar[str] = "plan"
    plan: Plan

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **plan_to_json(self.plan)}


@dataclass(frozen=True, slots=True)
class RunFinished:
    """The run ended; `reason` is one of the `StopReason` values; `error` says why it failed."""

    type: ClassVar[str] = "run_finished"
    reason: str
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type, "reason": self.reason}
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
    | ElicitationRequested
    | ElicitationResolved
    | NoticeEvent
    | UsageEvent
    | PlanUpdated
    | PendingChanged
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
