"""Benchmark what diagnostics cost an edit (issue 19).

    python bench/bench_lsp.py [--quick]

A 2,000-line Python file is edited with the real edit_file tool, in rounds:
once with ruff's language server warm (started, in the sandbox, and told the
file) so the result waits for its diagnostics, and once without any language
server, interleaved so a busy moment slows both alike. The cost is the median
of the per-round differences; goal: at most 300 ms (median of 20 rounds).
Reports, never fails.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_cli.lsp.config import KNOWN
from agent_cli.lsp.options import LspSettings
from agent_cli.sandbox.launch import Sandbox, SandboxConfig
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.feedback import Feedback
from agent_cli.tools.files import edit_file, read_file
from agent_cli.tools.workspace import Workspace
from bench.run import Row, error_row, limit_row, median, ms, paired_median, print_table

RUNS = 20
QUICK_RUNS = 5
GOAL_MS = 300.0
LINES = 2000
SETTLE = 30.0  # only a bound: the wait ends when ruff has published


def source() -> str:
    """About 2,000 lines: functions, one unused import (a diagnostic there before)."""
    parts = ["import os", "import sys", "", "MARK = 0", ""]
    number = 0
    while len(parts) < LINES - 4:
        parts += [
            f"def function_{number}(value: int) -> int:",
            f'    """Return value plus {number}."""',
            f"    total = value + {number}",
            "    return total * 2",
            "",
        ]
        number += 1
    parts += ["", "print(sys.argv)", ""]
    return "\n".join(parts[:LINES]) + "\n"


async def edit(ctx: ToolContext, path: str, old: str, new: str) -> tuple[float, ToolResult]:
    started = time.perf_counter()
    result = await edit_file.run(ctx, {"path": path, "edits": [{"old_text": old, "new_text": new}]})
    spent = time.perf_counter() - started
    if result.is_error:
        raise RuntimeError(result.text)
    return spent, result


def ruff_only() -> LspSettings:
    here = os.path.dirname(sys.executable)
    ruff = shutil.which("ruff", path=os.pathsep.join([here, os.environ.get("PATH", "")]))
    if ruff is None:
        raise RuntimeError("ruff is not installed (pip install -e '.[dev]')")
    tables: dict = {config.name: {"enabled": False} for config in KNOWN}
    tables["ruff"] = {"command": [ruff, "server"]}
    return LspSettings(settle_time=SETTLE, user=tables)


async def measure(runs: int, workspace: Path) -> tuple[list[Row], list[str]]:
    text = source()
    (workspace / "served.py").write_text(text)
    (workspace / "plain.py").write_text(text)
    sandbox = Sandbox(SandboxConfig())
    feedback = Feedback(workspace, ruff_only(), sandbox=sandbox)
    served = ToolContext(Workspace(workspace), sandbox=sandbox, feedback=feedback)
    plain = ToolContext(Workspace(workspace), sandbox=sandbox)
    try:
        started = time.perf_counter()
        await read_file.run(served, {"path": "served.py", "end_line": 1})  # starts ruff
        cold, result = await edit(served, "served.py", "MARK = 0", "MARK = -1")
        if "[diagnostics of served.py after this change, from ruff:" not in result.text:
            raise RuntimeError(f"no diagnostics in the result:\n{result.text[-2000:]}")
        start = time.perf_counter() - started
        with_lsp: list[float] = []
        without: list[float] = []
        mark = {"served.py": "MARK = -1", "plain.py": "MARK = 0"}
        for round_ in range(runs):
            for ctx, path, times in ((served, "served.py", with_lsp), (plain, "plain.py", without)):
                # Every other round leaves an undefined name: the diagnostics change too.
                new = f"MARK = {round_}" if round_ % 2 else f"MARK = undefined_{round_}"
                spent, result = await edit(ctx, path, mark[path], new)
                mark[path] = new
                times.append(spent)
                if ctx is served and ("error F821" in result.text) != (round_ % 2 == 0):
                    raise RuntimeError(f"ruff's answer is not the edit's:\n{result.text[-800:]}")
    finally:
        await feedback.aclose()
    extra = paired_median(with_lsp, without)
    rows = [
        Row("edit_file, 2,000-line file, no language server", ms(median(without))),
        limit_row(
            "edit -> result with ruff's diagnostics, minus the edit alone",
            ms(extra),
            extra * 1000 <= GOAL_MS,
            f"<= {GOAL_MS:g} ms",
            baseline=ms(median(with_lsp)) + " with ruff",
        ),
        Row("first edit: ruff started (sandboxed) and told the file", ms(start)),
    ]
    notes = [
        f"median of {runs} interleaved rounds; {sandbox.summary()}",
        f"the first edit alone took {ms(cold)} (pygls import, ruff's start, its first answer)",
    ]
    return rows, notes


def main() -> int:
    runs = QUICK_RUNS if "--quick" in sys.argv else RUNS
    with tempfile.TemporaryDirectory() as folder:
        try:
            rows, notes = asyncio.run(measure(runs, Path(folder)))
        except RuntimeError as e:
            rows, notes = (
                [error_row("edit -> result with ruff's diagnostics, minus the edit alone")],
                [str(e)],
            )
    print_table("diagnostics after an edit (ruff server warm)", rows, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
