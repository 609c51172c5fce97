"""The per-round cost of keeping a long conversation inside the context window.

    python bench/bench_context.py [--quick]

A 5,000-item conversation (turns of a question, a call, a 4 KiB result and an
answer): what estimating the request's tokens costs from scratch (goal: 20 ms)
and, for information, building the messages the model reads from scratch (a
loop's first round, or after a /compact) and in a round after that, when the
loop's kept view builds only what changed. Medians; it reports, it never fails.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_cli.backends.context import estimate, to_messages
from agent_cli.backends.model_view import ModelView
from agent_cli.engine.items import AssistantItem, Item, ToolCall, ToolItem, UserItem
from bench.run import Row, limit_row, print_table

GOAL_MS = 20.0
ITEMS = 5_000
RUNS, QUICK_RUNS = 20, 5


def conversation() -> list[Item]:
    items: list[Item] = []
    for n in range(ITEMS // 4):
        call = ToolCall(f"c{n}", "read_file", f'{{"path": "src/module_{n}.py"}}')
        items += [
            UserItem(f"Please look at module {n} and tell me what it does."),
            AssistantItem("", streaming=False, tool_calls=[call]),
            ToolItem("read_file", f"c{n}", state="done", result="x = 1\n" * 700),
            AssistantItem(f"Module {n} sets x to 1, in many lines.", streaming=False),
        ]
    return items


def timed(work: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> int:
    runs = QUICK_RUNS if "--quick" in sys.argv else RUNS
    items = conversation()
    system = "s" * 3000
    estimate_ms = timed(lambda: estimate(system, items, 4000), runs)
    messages_ms = timed(lambda: to_messages(items), runs)
    view = ModelView("")
    view.sync(items)
    view.messages()

    def next_round() -> None:
        view.sync(items)
        view.estimate(system, 4000)
        view.messages()

    kept_ms = timed(next_round, runs)
    rows = [
        limit_row(
            f"token estimate, {ITEMS:,} items",
            f"{estimate_ms:.2f} ms",
            estimate_ms <= GOAL_MS,
            f"<= {GOAL_MS:g} ms",
        ),
        Row(f"messages for the model, {ITEMS:,} items", f"{messages_ms:.2f} ms"),
        Row(
            f"estimate and messages, a round after the first, {ITEMS:,} items", f"{kept_ms:.3f} ms"
        ),
    ]
    print_table("context per round", rows, [f"{runs} runs; medians"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
