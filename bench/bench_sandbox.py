"""Benchmark the sandbox's cost per command (SPEC §14).

    python bench/bench_sandbox.py [--quick]

`exec_shell_command("true")` through the real tool, unsandboxed and in each
mechanism this machine has, interleaved round by round so a busy moment
slows all alike. The overhead is the median of the per-round differences
(sandboxed − unsandboxed). Goals: at most 10 ms for bubblewrap (its own start
is about 5 ms) and 3 ms for Landlock with seccomp. Reports, never fails.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_cli.sandbox.launch import Sandbox, SandboxConfig
from agent_cli.tools.base import ToolContext
from agent_cli.tools.shell import exec_shell_command
from agent_cli.tools.workspace import Workspace
from bench.run import Row, limit_row, median, ms, paired_median, print_table

RUNS = 40
QUICK_RUNS = 5
GOALS_MS = {"bwrap": 10.0, "landlock": 3.0}


async def once(ctx: ToolContext) -> float:
    started = time.perf_counter()
    result = await exec_shell_command.run(ctx, {"command": "true"})
    spent = time.perf_counter() - started
    if result.text != "[exit code: 0]":
        raise RuntimeError(result.text)
    return spent


async def measure(runs: int, workspace: Path) -> tuple[list[Row], list[str]]:
    contexts = {"unsandboxed": ToolContext(Workspace(workspace))}
    notes = []
    for kind in GOALS_MS:
        sandbox = Sandbox(SandboxConfig(mode=kind))
        if sandbox.kind == kind:
            contexts[kind] = ToolContext(Workspace(workspace), sandbox=sandbox)
            notes.append(sandbox.summary())
        else:
            notes.append(f"{kind}: not available here ({sandbox.mechanism.reason})")
    times: dict[str, list[float]] = {name: [] for name in contexts}
    for ctx in contexts.values():
        await once(ctx)  # warm: the first use finds the mechanism and fills caches
    for _ in range(runs):
        for name, ctx in contexts.items():
            times[name].append(await once(ctx))
    base = times["unsandboxed"]
    rows = [Row("exec_shell_command(true), unsandboxed", ms(median(base)))]
    for kind, goal in GOALS_MS.items():
        if kind not in times:
            continue
        extra = paired_median(times[kind], base)
        rows.append(
            limit_row(
                f"{kind}: overhead per command (sandboxed - unsandboxed)",
                ms(extra),
                extra * 1000 <= goal,
                f"<= {goal:g} ms",
                baseline=ms(median(times[kind])) + " sandboxed",
            )
        )
    notes.append(f"median of {runs} interleaved rounds")
    return rows, notes


def main() -> int:
    runs = QUICK_RUNS if "--quick" in sys.argv else RUNS
    with tempfile.TemporaryDirectory() as folder:
        rows, notes = asyncio.run(measure(runs, Path(folder)))
    print_table("sandbox overhead per command", rows, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
