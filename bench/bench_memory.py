"""Memory and per-round time over a long session: 1,000 rounds with tool calls.

    python bench/bench_memory.py [--quick]

One headless conversation, stored as `agent run` stores it, driven by an
in-process scripted model (so the model server costs nothing): every message
makes nine `read_file` rounds and an answer. Reports the peak RSS growth after
the first 100 rounds (goal: <= 50 MB) and how the time per round changes as
the conversation grows: the slope of a line fitted through every message's
mean round time, and the last tenth's median against the second tenth's.
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_cli.backends.loop import BuiltinLoop, LoopSettings
from agent_cli.backends.prompt import system_prompt
from agent_cli.engine.items import Conversation
from agent_cli.engine.session import Session
from agent_cli.engine.store import Store
from agent_cli.providers.scripted import ScriptedProvider, answer, calls
from agent_cli.tools.base import ToolContext
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.workspace import Workspace
from bench.run import Row, limit_row, print_table

ROUNDS, QUICK_ROUNDS = 1_000, 200
if "--rounds" in sys.argv:
    ROUNDS = int(sys.argv[sys.argv.index("--rounds") + 1])
PER_MESSAGE = 10  # nine tool rounds and an answer
GROWTH_GOAL_MB = 50.0
FLAT_GOAL = 1.5  # the last tenth's round time against the second tenth's


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def turns(messages: int) -> list:
    script = []
    for m in range(messages):
        for r in range(PER_MESSAGE - 1):
            script.append(calls((f"c{m}-{r}", "read_file", f'{{"path": "src/m{r}.py"}}')))
        script.append(answer(f"Message {m}: the modules set x."))
    return script


async def drive(workspace: Path, rounds: int) -> tuple[list[float], float, float]:
    messages = rounds // PER_MESSAGE
    provider = ScriptedProvider(turns(messages))
    tools = builtin_tools()

    def backend(_conversation: Conversation) -> BuiltinLoop:
        return BuiltinLoop(
            provider=provider,
            tools=tools,
            context=ToolContext(Workspace(workspace)),
            settings=LoopSettings("scripted", workspace, PER_MESSAGE + 1, 50_000_000),
            system_prompt=lambda mode: system_prompt(workspace, mode),
        )

    conversation = Conversation(workspace=str(workspace), mode="full")
    session = Session(conversation, backend, Store(workspace / ".store"))
    per_round: list[float] = []
    after_100 = 0.0
    for m in range(messages):
        start = time.perf_counter()
        await session.send(f"Look at the modules again ({m}).")
        provider.requests.clear()  # the fake keeps every request: not ours to measure
        per_round.append((time.perf_counter() - start) / PER_MESSAGE)
        if (m + 1) * PER_MESSAGE == 100:
            after_100 = peak_rss_mb()
    await session.aclose()
    return per_round, after_100, peak_rss_mb()


def slope_us_per_100_rounds(per_round: list[float]) -> float:
    xs = [i * PER_MESSAGE for i in range(len(per_round))]
    fit = statistics.linear_regression(xs, per_round)
    return fit.slope * 100 * 1e6


def main() -> int:
    rounds = QUICK_ROUNDS if "--quick" in sys.argv else ROUNDS
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        (workspace / "src").mkdir()
        for r in range(PER_MESSAGE):
            (workspace / "src" / f"m{r}.py").write_text("x = 1\n" * 200)
        per_round, after_100, end = asyncio.run(drive(workspace, rounds))
    tenth = max(1, len(per_round) // 10)
    early = statistics.median(per_round[tenth : 2 * tenth])
    late = statistics.median(per_round[-tenth:])
    growth = end - after_100
    rows = [
        limit_row(
            f"peak RSS growth after round 100 ({rounds:,} rounds)",
            f"{growth:.1f} MB",
            growth <= GROWTH_GOAL_MB,
            f"<= {GROWTH_GOAL_MB:g} MB",
            f"{after_100:.0f} MB at round 100",
        ),
        Row("time per round, second tenth", f"{early * 1000:.2f} ms"),
        limit_row(
            "time per round, last tenth vs second tenth",
            f"{late * 1000:.2f} ms",
            late <= early * FLAT_GOAL,
            f"<= {FLAT_GOAL:g}x",
            f"{late / early:.2f}x",
        ),
        Row(
            "slope of the time per round",
            f"{slope_us_per_100_rounds(per_round):+.1f} µs/100 rounds",
        ),
    ]
    notes = ["in-process scripted model; the conversation is stored after every round"]
    print_table("a long session", rows, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
