"""Benchmark the file tools against the Unix tools they stand in for.

    python bench/bench_tools.py

The search tools run over the standard library of the running interpreter,
used in place and read-only as the workspace (its `site-packages` is left out
on both sides: third-party code is not the standard library, and it would
make one run take minutes). Each baseline is given the same folders to skip
as the tools (`SKIPPED_DIRS`), so both sides look at the same files. Its
output goes to a pipe: GNU grep stops at the first match when writing to
/dev/null. read_file and edit_file's plan run on generated files in a temp
folder and are compared with absolute goals (a `python -c pass` start is
shown for scale). Medians of RUNS runs; it reports, it never fails.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_cli.tools.base import ToolContext
from agent_cli.tools.files import plan_edit_file, read_file
from agent_cli.tools.search import SKIPPED_DIRS, file_glob_search, grep_search
from agent_cli.tools.workspace import Workspace

RUNS = 10
RATIO_GOAL = 2.0
READ_GOAL_MS = 50.0
PLAN_GOAL_MS = 20.0
LEFT_OUT = "site-packages"
READ_FILE_BYTES = 8 * 1024 * 1024
PLAN_FILE_BYTES = 1024 * 1024

Row = tuple[str, float, float | None, str, bool]


def medians_ms(*actions: Callable[[], object], runs: int = RUNS) -> list[float]:
    """Median wall time of each action; runs alternate between the actions so that a
    busy machine slows ours and the baseline alike."""
    for action in actions:
        action()  # warm the page cache and imports
    times: list[list[float]] = [[] for _ in actions]
    for _ in range(runs):
        for action, spent in zip(actions, times, strict=True):
            start = time.perf_counter()
            action()
            spent.append((time.perf_counter() - start) * 1000)
    return [statistics.median(spent) for spent in times]


def median_ms(action: Callable[[], object]) -> float:
    return medians_ms(action)[0]


def tool_action(
    loop: asyncio.AbstractEventLoop, make: Callable[[], Awaitable[object]]
) -> Callable[[], object]:
    def action() -> object:
        result = loop.run_until_complete(make())
        if getattr(result, "is_error", False):
            raise RuntimeError(getattr(result, "text", ""))
        return result

    return action


def command_action(argv: list[str], cwd: Path) -> Callable[[], object]:
    return lambda: subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def grep_argv(pattern: str, flags: str = "-rn") -> list[str]:
    skips = [f"--exclude-dir={name}" for name in sorted(SKIPPED_DIRS | {LEFT_OUT})]
    return ["grep", flags, *skips, pattern, "."]


def find_argv(name: str) -> list[str]:
    prune: list[str] = []
    for skipped in sorted(SKIPPED_DIRS | {LEFT_OUT}):
        prune += [*(["-o"] if prune else []), "-name", skipped]
    return ["find", ".", "(", *prune, ")", "-prune", "-o", "-name", name, "-print"]


def compared(name: str, ours: float, base: float) -> Row:
    ratio = ours / base
    return name, ours, base, f"≤ {RATIO_GOAL:g}× baseline", ratio <= RATIO_GOAL


def search_rows(loop: asyncio.AbstractEventLoop) -> list[Row]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    ctx = ToolContext(Workspace(stdlib))
    rows = []
    for pattern in ("def __init__", "zqxjkv_nomatch"):
        args = {"pattern": pattern, "exclude": LEFT_OUT}
        flags = ("-rn", "-rnI")  # -I: grep skips binary files too, as grep_search does
        ours, *bases = medians_ms(
            tool_action(loop, lambda a=args: grep_search.run(ctx, a)),
            *(command_action(grep_argv(pattern, flag), stdlib) for flag in flags),
        )
        for flag, base in zip(flags, bases, strict=True):
            rows.append(compared(f"grep_search {pattern!r} vs grep {flag}", ours, base))
    for include, name in (("**/*.py", "*.py"), ("**/zqxjkv*.nomatch", "zqxjkv*.nomatch")):
        args = {"include": include, "exclude": LEFT_OUT}
        ours, base = medians_ms(
            tool_action(loop, lambda a=args: file_glob_search.run(ctx, a)),
            command_action(find_argv(name), stdlib),
        )
        rows.append(compared(f"file_glob_search {include!r} vs find", ours, base))
    return rows


def file_rows(loop: asyncio.AbstractEventLoop, folder: Path) -> list[Row]:
    ctx = ToolContext(Workspace(folder))
    line = "x = compute(alpha, beta, gamma)  # a line of about eighty bytes, like code....\n"
    (folder / "big.txt").write_text(line * (READ_FILE_BYTES // len(line)))
    total = READ_FILE_BYTES // len(line)
    python = median_ms(command_action([sys.executable, "-c", "pass"], folder))
    rows = []
    for first in (100, total - 100):
        args = {"path": "big.txt", "start_line": first, "end_line": first + 100}
        ours = median_ms(tool_action(loop, lambda a=args: read_file.run(ctx, a)))
        goal = f"< {READ_GOAL_MS:g} ms"
        rows.append(
            (
                f"read_file 8 MiB, lines {first}-{first + 100}",
                ours,
                python,
                goal,
                ours < READ_GOAL_MS,
            )
        )
    code = "".join(f"def function_{i}(value):\n    return value + {i}\n\n" for i in range(40000))
    code = code[:PLAN_FILE_BYTES]
    (folder / "code.py").write_text(code)
    cases = {
        "1 edit": [("def function_9000(", "def renamed_9000(")],
        "3 spread edits": [
            ("return value + 10\n", "return value - 10\n"),
            ("def function_12000(", "def renamed_12000("),
            ("return value + 20000\n", "return value * 20000\n"),
        ],
    }
    for label, pairs in cases.items():
        edits = [{"old_text": old, "new_text": new} for old, new in pairs]
        ours = median_ms(tool_action(loop, lambda e=edits: plan_edit_file(ctx, "code.py", e)))
        rows.append(
            (
                f"edit_file plan 1 MiB, {label}",
                ours,
                python,
                f"≤ {PLAN_GOAL_MS:g} ms",
                ours <= PLAN_GOAL_MS,
            )
        )
    return rows


def table(rows: list[Row]) -> str:
    head = f"{'benchmark':<46} {'ours ms':>9} {'base ms':>9} {'ratio':>7}  {'goal':<16} result"
    lines = [head, "-" * len(head)]
    for name, ours, base, goal, ok in rows:
        base_text = f"{base:9.1f}" if base is not None else f"{'-':>9}"
        ratio = f"{ours / base:6.2f}×" if base else f"{'-':>7}"
        lines.append(
            f"{name:<46} {ours:9.1f} {base_text} {ratio}  {goal:<16} {'pass' if ok else 'FAIL'}"
        )
    return "\n".join(lines)


def main() -> int:
    started = time.perf_counter()
    loop = asyncio.new_event_loop()
    try:
        with tempfile.TemporaryDirectory() as folder:
            rows = search_rows(loop) + file_rows(loop, Path(folder))
    finally:
        loop.close()
    stdlib = sysconfig.get_paths()["stdlib"]
    print(f"Python {sys.version.split()[0]}, stdlib at {stdlib}, median of {RUNS} runs")
    print("(read_file and plan rows show `python -c pass` as the baseline, for scale)")
    print(table(rows))
    print(f"total {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
