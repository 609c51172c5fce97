"""Whether a test's processes have ended."""

from __future__ import annotations

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
