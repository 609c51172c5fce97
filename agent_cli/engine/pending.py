"""Messages typed while a run goes, not sent yet (issue 16): steered or queued.

A *steered* message joins the running conversation at its next round boundary
(the model reads it with the next request); a *queued* one is sent as a new
message when the run ends. Both can be edited or dropped while they wait. A
steered message the run did not take before it ended starts the next run, then
the queued ones follow, one run each. A stop or an error gives every waiting
message back unsent (`PendingChanged.returned`), so a front end can put it
back in the input: a stop means "stop", not "go on with the next thing".
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from agent_cli.media import Prompt

PendingKind = Literal["steer", "queue"]
_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class PendingMessage:
    id: str
    text: str
    kind: PendingKind
    mentions: str | None = None  # a prompt command's: see `Prompt.mentions`

    def message(self) -> str | Prompt:
        """What is sent: the text, with which words of it may attach (a command's)."""
        return self.text if self.mentions is None else Prompt(self.text, mentions=self.mentions)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "kind": self.kind}


@dataclass(frozen=True, slots=True)
class PendingChanged:
    """What waits to be sent, in order; `returned`: messages given back unsent."""

    type: ClassVar[str] = "pending"
    pending: tuple[PendingMessage, ...]
    returned: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type, "pending": [m.to_json() for m in self.pending]}
        if self.returned:
            data["returned"] = list(self.returned)
        return data


class Pending:
    """The waiting messages of one session; every change is published."""

    def __init__(self, publish: Callable[[PendingChanged], None]) -> None:
        self._publish = publish
        self._messages: list[PendingMessage] = []

    @property
    def messages(self) -> tuple[PendingMessage, ...]:
        return tuple(self._messages)

    def add(self, message: str | Prompt, kind: PendingKind) -> PendingMessage:
        """`message` (text; a prompt command's Prompt keeps its `mentions`) waits."""
        if isinstance(message, Prompt):
            waiting = PendingMessage(f"p{next(_ids)}", message.text, kind, message.mentions)
        else:
            waiting = PendingMessage(f"p{next(_ids)}", message, kind)
        self._messages.append(waiting)
        self._changed()
        return waiting

    def edit(self, message_id: str, text: str) -> bool:
        for index, message in enumerate(self._messages):
            if message.id == message_id:
                self._messages[index] = PendingMessage(message.id, text, message.kind)
                self._changed()
                return True
        return False

    def drop(self, message_id: str) -> PendingMessage | None:
        for message in self._messages:
            if message.id == message_id:
                self._messages.remove(message)
                self._changed()
                return message
        return None

    def take_steered(self) -> list[str | Prompt]:
        """The steered messages, in order, for the run's next request."""
        steered = [m for m in self._messages if m.kind == "steer"]
        if steered:
            self._messages = [m for m in self._messages if m.kind != "steer"]
            self._changed()
        return [m.message() for m in steered]

    def take_next(self) -> list[str | Prompt]:
        """After a run: what starts the next one (the steered messages it did not take,
        else the first queued one); [] when nothing waits."""
        steered = self.take_steered()
        if steered or not self._messages:
            return steered
        first = self._messages.pop(0)
        self._changed()
        return [first.message()]

    def give_back(self) -> None:
        """A stop or an error: every waiting message is returned unsent."""
        if self._messages:
            returned = tuple(m.text for m in self._messages)
            self._messages = []
            self._publish(PendingChanged((), returned))

    def _changed(self) -> None:
        self._publish(PendingChanged(tuple(self._messages)))
