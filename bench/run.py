"""Run every `bench/bench_*.py` and print their tables one after the other.

    python bench/run.py            # the full run (medians of >= 10 interleaved runs)
    python bench/run.py --quick    # fewer repetitions: a smoke test, not a measurement

Each benchmark runs as its own subprocess with this interpreter, so one that
crashes cannot take the others with it. This script reports; it never gates:
it exits 0 whatever the results (a benchmark that failed is named at the end).

The second half of this file is the toolkit the `bench_*.py` scripts share
(they import it as `bench.run`, with the repository root on `sys.path`): locating
the `agent` command, an isolated environment, timing a child process with its
peak memory, interleaved repetitions, and the result table.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
BENCH_GLOB = "bench_*.py"


# -- the runner --------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run every bench/bench_*.py in turn.")
    parser.add_argument(
        "--quick", action="store_true", help="fewer repetitions (a smoke test; passed through)"
    )
    parser.add_argument(
        "only", nargs="*", help="run only the benchmarks whose file name contains one of these"
    )
    args = parser.parse_args(argv)
    scripts = sorted(BENCH_DIR.glob(BENCH_GLOB))
    if args.only:
        scripts = [s for s in scripts if any(word in s.name for word in args.only)]
    if not scripts:
        print(f"no {BENCH_GLOB} found in {BENCH_DIR}")
        return 0
    mode = "quick (smoke test: too few runs to trust the numbers)" if args.quick else "full"
    print(f"benchmarks: {len(scripts)} script(s), {mode}; python {sys.version.split()[0]}")
    failed: list[str] = []
    started = time.perf_counter()
    for script in scripts:
        print(f"\n##### {script.relative_to(ROOT)}", flush=True)
        command = [sys.executable, str(script), *(["--quick"] if args.quick else [])]
        begun = time.perf_counter()
        code = subprocess.call(command, cwd=ROOT, stdin=subprocess.DEVNULL)
        took = time.perf_counter() - begun
        if code != 0:
            failed.append(f"{script.name} (exit {code})")
            print(f"!! {script.name} exited with {code}", flush=True)
        print(f"({script.name}: {took:.1f} s)", flush=True)
    print(f"\nall benchmarks: {time.perf_counter() - started:.1f} s", end="")
    print(f"; failed: {', '.join(failed)}" if failed else "")
    return 0  # reports, never gates


# -- shared by the bench_*.py scripts --------------------------------------------------

TIMEOUT_SECONDS = 120.0  # a child running longer than this is killed (a hung benchmark)
POLL_SECONDS = 0.001  # how often `time_process` looks for the first request
AGENT_VARIABLES_TO_DROP = (
    "AGENT_MODEL",
    "AGENT_PROVIDER",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    # A proxy would reroute loopback traffic and make the agent load the CA bundle.
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
)


@dataclass(frozen=True)
class AgentCommand:
    """How to start the agent: the console script next to this interpreter, else `-m`."""

    argv: tuple[str, ...]
    how: str

    def __call__(self, *args: str) -> list[str]:
        return [*self.argv, *args]


def agent_command(force_module: bool = False) -> AgentCommand:
    """The `agent` console script of this interpreter's environment if it has one,
    else `python -m agent_cli` (the same code, a slightly different start)."""
    script = Path(sys.executable).parent / "agent"
    if not force_module and script.is_file() and os.access(script, os.X_OK):
        return AgentCommand((str(script),), f"console script {script}")
    return AgentCommand((sys.executable, "-m", "agent_cli"), f"{sys.executable} -m agent_cli")


def python(*args: str) -> list[str]:
    return [sys.executable, *args]


@contextlib.contextmanager
def isolated_home() -> Iterator[tuple[Path, dict[str, str]]]:
    """A temp folder to run in (the cwd) and an environment whose config, data,
    state and bytecode folders are inside it, with no agent or proxy variables inherited."""
    with tempfile.TemporaryDirectory(prefix="agent-bench-") as name:
        home = Path(name)
        env = {k: v for k, v in os.environ.items() if k not in AGENT_VARIABLES_TO_DROP}
        for variable, sub in (
            ("XDG_CONFIG_HOME", "config"),
            ("XDG_DATA_HOME", "data"),
            ("XDG_STATE_HOME", "state"),
            ("XDG_CACHE_HOME", "cache"),
        ):
            (home / sub).mkdir()
            env[variable] = str(home / sub)
        # Bytecode as an installed agent has it: cached after the warm-up run, in a
        # folder of our own (no __pycache__ written into the repository), even where
        # the environment says PYTHONDONTWRITEBYTECODE (then every start would compile).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(home / "pycache")
        work = home / "work"
        work.mkdir()
        yield work, env


@dataclass(frozen=True)
class Sample:
    """One timed run of a child process."""

    seconds: float  # from just before the spawn to the child's exit being reaped
    max_rss_kb: int  # the child's peak resident set size (Linux: kilobytes)
    cpu_seconds: float  # the child's user + system CPU time (less sensitive to a busy machine)
    returncode: int
    first_request: float | None = None  # seconds from spawn to the server seeing a request
    cpu_before_request: float | None = None  # the child's CPU seconds at that moment


class BenchError(RuntimeError):
    """A child failed, so its timings mean nothing."""


def time_process(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    seen: Callable[[], int] | None = None,
    stdout: int | IO[bytes] = subprocess.DEVNULL,
) -> Sample:
    """Run `argv` to its end (stdin and stdout on /dev/null) and time it.

    Peak memory comes from `wait4`'s rusage, which is the child's own. With
    `seen` (e.g. `lambda: len(fake.paths)`), the main thread polls it every
    millisecond while the child runs and records when it first grows: the moment
    the server received the child's first request, and the child's CPU time so far.
    """
    with tempfile.TemporaryFile() as err:
        before = seen() if seen is not None else 0
        first: float | None = None
        cpu_first: float | None = None
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=err
        )
        killer = threading.Timer(TIMEOUT_SECONDS, proc.kill)
        killer.start()
        try:
            pid, status, usage = 0, 0, None
            if seen is not None:
                while True:
                    if first is None and seen() > before:
                        first = time.perf_counter() - start
                        cpu_first = cpu_so_far(proc.pid)
                    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                    if pid or first is not None:
                        break
                    time.sleep(POLL_SECONDS)
            if not pid:
                pid, status, usage = os.wait4(proc.pid, 0)
            seconds = time.perf_counter() - start
        finally:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            tail = err.read().decode("utf-8", "replace")[-2000:]
            raise BenchError(f"{' '.join(argv)} exited {proc.returncode}:\n{tail}")
        assert usage is not None
        cpu = usage.ru_utime + usage.ru_stime
        return Sample(seconds, usage.ru_maxrss, cpu, proc.returncode, first, cpu_first)


def cpu_so_far(pid: int) -> float | None:
    """A running process's user + system CPU seconds so far, all its threads (ended ones
    too), from /proc/PID/stat: in clock ticks (10 ms steps). None without /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command's name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Job:
    """A command measured once per round.

    `before` runs untimed just before each run (e.g. to queue the fake server's
    answer); `expect` checks the warm-up run's stdout; `seen` is passed on to
    `time_process`; `env`, when set, replaces the shared environment. A job that
    fails gets `error` set and is measured no more.
    """

    key: str
    argv: list[str]
    before: Callable[[], None] | None = None
    expect: Callable[[str], bool] | None = None
    seen: Callable[[], int] | None = None
    env: dict[str, str] | None = None  # instead of the shared environment
    samples: list[Sample] = field(default_factory=list)
    error: str | None = None

    def seconds(self) -> list[float]:
        return [s.seconds for s in self.samples]

    def cpu_seconds(self) -> list[float]:
        return [s.cpu_seconds for s in self.samples]

    def cpu_after_request(self) -> list[float]:
        """The CPU seconds each run spent from its first request to its end (`seen` set)."""
        return [
            s.cpu_seconds - s.cpu_before_request
            for s in self.samples
            if s.cpu_before_request is not None
        ]

    def fail(self, error: BaseException | str) -> None:
        self.error = str(error).strip() or type(error).__name__


def warm_up(jobs: Sequence[Job], *, cwd: Path, env: dict[str, str]) -> None:
    """Run every job once untimed (fills the OS caches and writes .pyc files) and check
    its output, so a broken command is reported instead of timed."""
    for job in jobs:
        try:
            out = check_output(job.argv, cwd=cwd, env=job.env or env, before=job.before)
        except (BenchError, subprocess.TimeoutExpired) as e:
            job.fail(e)
            continue
        if job.expect is not None and not job.expect(out):
            job.fail(f"{' '.join(job.argv)}: unexpected output {out[:300]!r}")


def run_rounds(jobs: Sequence[Job], rounds: int, *, cwd: Path, env: dict[str, str]) -> None:
    """Run every job once per round, in a freshly shuffled order each round, so a
    job and its baseline are interleaved and slow drift of the machine hits both alike."""
    shuffle = random.Random(20261129).shuffle
    for _ in range(rounds):
        order = [job for job in jobs if job.error is None]
        shuffle(order)
        for job in order:
            if job.before is not None:
                job.before()
            try:
                sample = time_process(job.argv, cwd=cwd, env=job.env or env, seen=job.seen)
            except BenchError as e:
                job.fail(e)
            else:
                job.samples.append(sample)


def failures(jobs: Sequence[Job]) -> list[str]:
    """Notes for the table: each failed job's error, shortened."""
    notes = []
    for job in jobs:
        if job.error is not None:
            lines = job.error.splitlines()
            shown = lines if len(lines) <= 4 else [lines[0], "...", *lines[-3:]]
            notes.append(f"ERROR {job.key}: " + " | ".join(shown))
    return notes


def check_output(
    argv: list[str], *, cwd: Path, env: dict[str, str], before: Callable[[], None] | None = None
) -> str:
    """Run once untimed (a warm-up that also fills caches) and return stdout; raise on failure."""
    if before is not None:
        before()
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=TIMEOUT_SECONDS,
    )
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace")[-2000:]
        raise BenchError(f"{' '.join(argv)} exited {done.returncode}:\n{stderr}")
    return done.stdout.decode("utf-8", "replace")


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def paired_median(ours: Sequence[float], base: Sequence[float]) -> float:
    """The median of per-round differences (ours − base): pairs share the round's conditions."""
    return statistics.median(a - b for a, b in zip(ours, base, strict=True))


# -- the table --------------------------------------------------------------------------

PASS, MISS, INFO, ERROR = "PASS", "MISS", "info", "ERROR"
NOISY = "noisy"  # a difference of two timings came out <= 0: the machine was too busy
COLUMNS = ("benchmark", "ours (median)", "baseline (median)", "ratio", "goal", "result")


@dataclass(frozen=True)
class Row:
    name: str
    ours: str
    baseline: str = "-"
    ratio: str = "-"
    goal: str = "-"
    result: str = INFO


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def ratio_row(name: str, ours: float, base: float, goal: float | None, unit: str = "ms") -> Row:
    """ours/base against a ratio goal (`goal=None`: shown for information).

    A value that is a difference of timings (a per-delta cost) can come out <= 0
    when the machine is busy; then there is no ratio and the result is `noisy`."""
    show = ms if unit == "ms" else (lambda v: f"{v:.2f} {unit}")
    goal_text = "-" if goal is None else f"<= {goal:g}x"
    if ours <= 0 or base <= 0:
        return Row(name, show(ours), show(base), "-", goal_text, NOISY)
    ratio = ours / base
    if goal is None:
        return Row(name, show(ours), show(base), f"{ratio:.2f}x")
    result = PASS if ratio <= goal else MISS
    return Row(name, show(ours), show(base), f"{ratio:.2f}x", goal_text, result)


def limit_row(name: str, value: str, ok: bool, goal: str, baseline: str = "-") -> Row:
    """An absolute goal (memory, milliseconds above python's own start)."""
    return Row(name, value, baseline, "-", goal, PASS if ok else MISS)


def error_row(name: str) -> Row:
    """A benchmark that could not be measured (its error is printed under the table)."""
    return Row(name, "-", "-", "-", "-", ERROR)


def print_table(title: str, rows: Sequence[Row], notes: Sequence[str] = ()) -> None:
    cells = [COLUMNS, *((r.name, r.ours, r.baseline, r.ratio, r.goal, r.result) for r in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]

    def line(row: Sequence[str]) -> str:
        return "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))

    print(f"\n== {title}")
    print(line(COLUMNS).rstrip())
    print("  ".join("-" * w for w in widths))
    for row in cells[1:]:
        print(line(row).rstrip())
    for note in notes:
        print(f"  {note}")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
