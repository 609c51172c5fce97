"""What a run is doing, in two or three words for the status line, from a feed batch.

No Textual here: it reads the batch the app is about to apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_cli.engine.items import ToolItem
from agent_cli.frontends.outcome import COMMAND_TOOLS

if TYPE_CHECKING:
    from agent_cli.frontends.tui.feed import Batch


def doing(batch: Batch) -> str | None:
    """What the run does now ("running `make`", "writing", "thinking"); None: nothing new.

    A call that runs wins over text (the model waits for it); after a call has finished
    the model is thinking again. A sub-agent's calls count as the run's own.
    """
    calls = [item for item in (*batch.added, *batch.updated.values()) if isinstance(item, ToolItem)]
    running = [item for item in calls if item.state == "running"]
    if running:
        return call_text(running[-1])
    if any(item.state == "composing" for item in calls):
        return "writing a call"
    if batch.text:
        return "writing"
    if batch.reasoning or calls:
        return "thinking"
    return None


def call_text(item: ToolItem) -> str:
    title = item.title or item.tool
    if item.tool in COMMAND_TOOLS and title.startswith("Run "):
        return f"running `{title[4:]}`"
    return f"running {title[:1].lower()}{title[1:]}"
