"""Whether a test's processes have ended."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path


def gone(pid: int, within: float = 5.0) -> bool:
    """The process ended within `within` seconds (a zombie counts: nothing may be left to
    reap it, or init may take a moment to)."""
    deadline = time.monotonic() + within
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z" or time.monotonic() > deadline:
            return state == "Z"
        time.sleep(0.02)


def group_members(pgid: int) -> list[str]:
    """The command lines of the group's processes that are not zombies (an init that
    does not reap leaves killed ones as zombies, which still "exist" for kill(2))."""
    table = subprocess.run(["ps", "-eo", "pgid=,stat=,args="], capture_output=True, text=True)
    rows = [line.split(None, 2) for line in table.stdout.splitlines()]
    return [row[2] for row in rows if int(row[0]) == pgid and not row[1].startswith("Z")]
