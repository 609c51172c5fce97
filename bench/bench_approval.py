"""Approval latency: from the model's finished call to the card's event.

    python bench/bench_approval.py [--quick]

A real Session and the built-in loop with the real `edit_file` tool, in `ask`
mode, on a 1 MiB file; the model is a scripted provider, so no network time
is in the figure. The clock starts when the provider yields the end of the
round (the call is complete) and stops when the `approval_requested` event
reaches a subscriber, which is when a front end can draw the card: between
them the loop parses the arguments, asks the policy, computes the diff and
builds the request. Goal: 20 ms. Medians; it reports, it never fails.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_cli.backends.loop import BuiltinLoop, LoopSettings
from agent_cli.engine.approval import Decision
from agent_cli.engine.events import ApprovalRequested
from agent_cli.engine.items import Conversation
from agent_cli.engine.session import Session
from agent_cli.providers.base import (
    Finished,
    ModelInfo,
    Request,
    StreamEvent,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from agent_cli.tools.base import ToolContext
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.workspace import Workspace
from bench.run import limit_row, print_table

GOAL_MS = 20.0
FILE_BYTES = 1024 * 1024
RUNS, QUICK_RUNS = 20, 5


class TimedProvider:
    """Answers each round with one edit_file call, noting when the round ended."""

    name = "timed"

    def __init__(self, arguments: str) -> None:
        self.arguments = arguments
        self.finished_at = 0.0

    async def stream(self, request: Request):
        events: list[StreamEvent] = [ToolCallStarted(0, "c1", "edit_file")]
        events += [ToolCallDelta(0, self.arguments[i : i + 64]) for i in range(0, 512, 64)]
        events.append(ToolCallFinished(0, "c1", "edit_file", self.arguments))
        for event in events:
            yield event
        self.finished_at = time.perf_counter()
        yield Finished("tool_calls")

    async def list_models(self) -> list[ModelInfo]:
        return []

    async def aclose(self) -> None:
        return None


async def one_run(folder: Path) -> float:
    target = folder / "big.py"
    lines = [f"value_{i} = {i}  # some padding to make the line longer\n" for i in range(20_000)]
    text = "".join(lines)[:FILE_BYTES]
    target.write_text(text)
    old = lines[10_000]
    arguments = json.dumps(
        {"path": "big.py", "edits": [{"old_text": old, "new_text": old.replace("=", "= 1 +")}]}
    )
    provider = TimedProvider(arguments)
    workspace = Workspace(folder)

    def backend(_conversation: Conversation) -> BuiltinLoop:
        return BuiltinLoop(
            provider=provider,
            tools=builtin_tools(),
            context=ToolContext(workspace),
            settings=LoopSettings("m", folder, 1),
            system_prompt=lambda _mode: "system",
        )

    session = Session(Conversation(workspace=str(folder), mode="ask"), backend, None)
    latency: list[float] = []

    def on(event: object) -> None:
        if type(event) is ApprovalRequested:
            latency.append(time.perf_counter() - provider.finished_at)
            event.request.resolve(Decision("no"))

    session.events.subscribe(on)
    await session.send("edit")
    await session.aclose()
    return latency[0]


def main() -> int:
    runs = QUICK_RUNS if "--quick" in sys.argv else RUNS
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(one_run(Path(folder)))  # warm up: imports, caches
        samples = [asyncio.run(one_run(Path(folder))) for _ in range(runs)]
    median = statistics.median(samples) * 1000
    row = limit_row(
        "finished call -> approval card event (1 MiB edit)",
        f"{median:.1f} ms",
        median <= GOAL_MS,
        f"<= {GOAL_MS:g} ms",
    )
    notes = [f"{runs} runs; median; max {max(samples) * 1000:.1f} ms"]
    print_table("approval latency", [row], notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
