"""Form requests from MCP servers: awaitable objects a run awaits and a front end answers.

A server may ask the person for information in the middle of a call (MCP
elicitation). The run publishes an `ElicitationRequest`; whichever front end
holds the person's attention shows the form and calls `resolve()` with an
`ElicitAnswer`. One with nobody to ask (`agent run`, `agent acp`) calls
`decline_unasked()`, and the run says so in a notice.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from agent_cli.tools.mcp_forms import DECLINE, ElicitAnswer, Elicitation


@dataclass(eq=False)
class ElicitationRequest:
    """One form waiting for the person's answer."""

    form: Elicitation
    unasked: str = ""  # why nobody was asked ("" when someone answered)
    _future: asyncio.Future[ElicitAnswer] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._future = asyncio.get_running_loop().create_future()

    @property
    def done(self) -> bool:
        return self._future.done()

    def resolve(self, answer: ElicitAnswer) -> None:
        """Answer the form; a second answer is ignored (two front ends may race)."""
        if not self._future.done():
            self._future.set_result(answer)

    def decline_unasked(self, why: str) -> None:
        """Decline for want of someone to ask; `why` ends the notice the run shows."""
        if not self._future.done():
            self.unasked = why
            self._future.set_result(DECLINE)

    async def wait(self) -> ElicitAnswer:
        return await self._future

    def to_json(self) -> dict[str, Any]:
        form = self.form
        return {
            "server": form.server,
            "message": form.message,
            "schema": dict(form.schema),
        }
