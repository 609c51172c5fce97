"""Run the real `agent` CLI as tests/support/cli.py does, and measure its peak memory.

The peak comes from `wait4`'s rusage of that one child, so other processes the
test run started before do not blur it (`getrusage(RUSAGE_CHILDREN)` would
report the largest child ever reaped). Stdin can be a big stream written in
blocks from a thread, so a 100 MB paste costs the test no 100 MB of memory.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.cli import TIMEOUT
from tests.support.fake_openai import FakeOpenAI

__all__ = ["Measured", "agent_measured"]


@dataclass(frozen=True)
class Measured:
    result: subprocess.CompletedProcess  # for tests.support.cli's out() and err()
    peak_rss_mib: float  # the agent process's own peak resident memory
    seconds: float


def agent_measured(
    workspace: Path,
    *args: str,
    fake: FakeOpenAI | None = None,
    stdin: bytes = b"",
    repeat: int = 1,
    env: dict[str, str] | None = None,
) -> Measured:
    """Run `agent ARGS` in `workspace` with `stdin` written `repeat` times on a pipe."""
    environment = dict(os.environ)
    if fake is not None:
        environment["OPENAI_BASE_URL"] = fake.base_url
    environment.update(env or {})
    argv = [sys.executable, "-m", "agent_cli", *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen(
            argv, cwd=workspace, env=environment, stdin=subprocess.PIPE, stdout=out, stderr=err
        )
        writer = threading.Thread(target=_feed, args=(proc, stdin, repeat), daemon=True)
        writer.start()
        killer = threading.Timer(TIMEOUT, proc.kill)  # a hang fails the test, not the run
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        seconds = time.monotonic() - started
        writer.join(timeout=5)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result = subprocess.CompletedProcess(argv, proc.returncode, out.read(), err.read())
    return Measured(result, usage.ru_maxrss / 1024, seconds)  # ru_maxrss is KiB on Linux


def _feed(proc: subprocess.Popen, block: bytes, repeat: int) -> None:
    """Write stdin and close it; an agent that stops reading early is not an error here."""
    assert proc.stdin is not None
    with contextlib.suppress(OSError):  # BrokenPipeError among them
        for _ in range(repeat if block else 0):
            proc.stdin.write(block)
    with contextlib.suppress(OSError):
        proc.stdin.close()
