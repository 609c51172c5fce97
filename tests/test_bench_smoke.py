"""The benchmarks still run: `bench_*.py --quick` exits 0 and prints its whole table.

Timings are never checked here (a shared CI machine is too noisy for that);
a row whose result is ERROR fails the test, because it means a command the
benchmark times (the agent, or its baseline) did not run correctly.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = {"PASS", "MISS", "info", "noisy"}  # not ERROR
TIMEOUT_SECONDS = 120  # each script takes ~10 s with --quick; this only stops a hang

EXPECTED_ROWS = {
    "bench_acp.py": (
        "prompt -> first chunk event, minus the agent's own time",
        "prompt -> first chunk event",
        "first message: start, initialize, session/new",
    ),
    "bench_approval.py": ("finished call -> approval card event (1 MiB edit)",),
    "bench_providers.py": (
        "openai: per delta vs bare httpx reader",
        "anthropic: per delta vs bare httpx reader",
        "responses: per delta vs bare httpx reader",
    ),
    "bench_memory.py": (
        "peak RSS growth after round 100 (200 rounds)",
        "time per round, last tenth vs second tenth",
        "slope of the time per round",
    ),
    "bench_sandbox.py": (
        "exec_shell_command(true), unsandboxed",
        "bwrap: overhead per command (sandboxed - unsandboxed)",
        "landlock: overhead per command (sandboxed - unsandboxed)",
    ),
    "bench_lsp.py": (
        "edit_file, 2,000-line file, no language server",
        "edit -> result with ruff's diagnostics, minus the edit alone",
        "first edit: ruff started (sandboxed) and told the file",
    ),
    "bench_context.py": ("token estimate, 5,000 items", "messages for the model, 5,000 items"),
    "bench_startup.py": (
        "agent --version vs python -c pass",
        "agent --help vs python -c 'import typer'",
        "agent run --help vs python -c 'import typer'",
        "agent run \"hi\" vs python -c 'import typer, httpx'",
        'peak RSS of agent run "hi"',
        "start -> first request vs python -c pass",
        "start -> first request, minus python -c pass",
    ),
    "bench_typing.py": (
        "key -> screen while 20,000 deltas stream, worst of 50",
        "key -> screen while 20,000 deltas stream, median of 50",
        "presses made while the answer streamed",
    ),
    "bench_tui.py": (
        "stream: CPU per delta (N deltas - tiny answer), TUI vs agent run",
        "stream: longest gap between two frames",
        "stream: frames per second while streaming (2,000 deltas, paced)",
        "resume 5,000 items: ask -> first frame (vs a new one)",
        "agent -> first paint vs minimal Textual app",
    ),
    "bench_stream.py": (
        "whole process, 20,000 deltas",
        "startup: the same answer in 1 delta",
        "per delta (time minus startup)",
        "per delta, CPU time of the process",
    ),
}


@pytest.mark.parametrize("script", sorted(EXPECTED_ROWS))
def test_quick_run_prints_every_row(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), "--quick"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
    )
    output = f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert done.returncode == 0, output
    lines = done.stdout.splitlines()
    header = next((line for line in lines if line.startswith("benchmark ")), None)
    assert header is not None, output
    assert header.split()[-1] == "result", output
    for name in EXPECTED_ROWS[script]:
        rows = [line for line in lines if line.startswith(name + "  ")]
        assert len(rows) == 1, f"expected one row {name!r}\n{output}"
        assert rows[0].split()[-1] in RESULTS, f"row {name!r} was not measured\n{output}"
