"""Approval requests: awaitable objects a backend awaits and a front end resolves.

The loop creates a request for a call that needs a yes, publishes it, and
awaits `wait()`. Whichever front end holds the person's attention calls
`resolve()` with a typed `Decision`. Nothing has run while a request waits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from agent_cli.engine.items import ToolItem, item_to_json

Answer = Literal["yes", "no", "always"]
Scope = Literal["conversation", "project", "everywhere"]
ApprovalKind = Literal["edit", "command", "tool"]


class Decision(NamedTuple):
    answer: Answer
    reason: str = ""  # for "no": what the model reads
    # for "always": the rules to add, one a line, e.g. "exec_shell_command(pytest *)"
    rule: str = ""
    scope: Scope = "conversation"
    hunks: tuple[int, ...] | None = None  # for an edit: only these hunks (0-based)
    edited: str | None = None  # for an edit: the person's own version of the file

    @property
    def allowed(self) -> bool:
        return self.answer != "no"


DENY = Decision("no")


@dataclass(eq=False)
class ApprovalRequest:
    """One call waiting for a person's answer."""

    item: ToolItem
    kind: ApprovalKind
    command: str = ""
    cwd: str = ""
    diff: str = ""
    # What "always" offers, one rule a line: a compound command gets one per simple command
    # (all must match for the line to be allowed); "" when no rule could allow the line.
    suggested_rule: str = ""
    proposed: str | None = None  # for an edit: the file as it would be, for $EDITOR
    # For a command the sandbox stopped: what it stopped; a yes runs it again outside.
    outside: str = ""
    _future: asyncio.Future[Decision] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._future = asyncio.get_running_loop().create_future()

    @property
    def done(self) -> bool:
        return self._future.done()

    def resolve(self, decision: Decision) -> None:
        """Answer the request; a second answer is ignored (two front ends may race)."""
        if not self._future.done():
            self._future.set_result(decision)

    async def wait(self) -> Decision:
        return await self._future

    def __await__(self) -> Generator[Any, None, Decision]:
        return self.wait().__await__()

    def to_json(self) -> dict[str, Any]:
        return {
            "item": item_to_json(self.item),
            "kind": self.kind,
            "command": self.command,
            "cwd": self.cwd,
            "diff": self.diff,
            "suggested_rule": self.suggested_rule,
            "outside": self.outside,
        }
