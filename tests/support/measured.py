"""Run the real `agent` CLI as tests/support/cli.py does, and measure its peak memory.

The peak comes from `wait4`'s rusage of that one process, so other processes
the test run started before do not blur it (`getrusage(RUSAGE_CHILDREN)` would
report the largest child ever reaped). It is started by a small launcher that
forks it: Linux counts the memory of the process a child was forked from into
the child's peak, and the test run itself may have grown big by then. Stdin can
be a big stream written in blocks from a thread, so a 100 MB paste costs the
test no 100 MB of memory.
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

# argv[1]: where to write the peak (KiB); the rest: the command. Exits as the command did.
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


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
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory() as folder,
    ):
        peak_file = Path(folder) / "peak"
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER, str(peak_file), *argv],
            cwd=workspace,
            env=environment,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=err,
            start_new_session=True,  # so a hang is ended with the agent, not just the launcher
        )
        writer = threading.Thread(target=_feed, args=(proc, stdin, repeat), daemon=True)
        writer.start()
        killer = threading.Timer(TIMEOUT, os.killpg, (proc.pid, 9))  # a hang fails the test
        killer.start()
        try:
            returncode = proc.wait()
        finally:
            killer.cancel()
        seconds = time.monotonic() - started
        writer.join(timeout=5)
        peak_kib = int(peak_file.read_text()) if peak_file.exists() else 0
        out.seek(0)
        err.seek(0)
        result = subprocess.CompletedProcess(argv, returncode, out.read(), err.read())
    return Measured(result, peak_kib / 1024, seconds)  # ru_maxrss is KiB on Linux


def _feed(proc: subprocess.Popen, block: bytes, repeat: int) -> None:
    """Write stdin and close it; an agent that stops reading early is not an error here."""
    assert proc.stdin is not None
    with contextlib.suppress(OSError):  # BrokenPipeError among them
        for _ in range(repeat if block else 0):
            proc.stdin.write(block)
    with contextlib.suppress(OSError):
        proc.stdin.close()
