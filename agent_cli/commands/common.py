"""What every command shares: the workspace, settings, and turning errors into exit codes."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from agent_cli.errors import AgentError, UsageError

T = TypeVar("T")


def workspace_from(cwd: Path | None) -> Path:
    folder = cwd if cwd is not None else Path.cwd()
    try:
        resolved = folder.resolve(strict=True)
    except OSError as e:
        raise UsageError(f"The folder {folder} does not exist — pass an existing --cwd.") from e
    if not resolved.is_dir():
        raise UsageError(f"{folder} is not a folder — pass a folder to --cwd.")
    return resolved


def start_debug_log() -> Path:
    """Log everything at debug level to a file under the log folder; return its path."""
    import logging
    from datetime import datetime

    from agent_cli import paths

    folder = paths.log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"agent-{datetime.now():%Y%m%d-%H%M%S}-{os.getpid()}.log"
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    print(f"agent: writing a debug log to {path}", file=sys.stderr)
    return path


def guarded(debug: bool, action: Callable[[], int]) -> int:
    """Run a command; a user-facing error becomes one sentence on stderr and its exit code."""
    try:
        return action()
    except AgentError as e:
        if debug:
            import logging

            logging.getLogger("agent_cli").exception("command failed")
        print(f"agent: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception as e:
        if debug:
            raise
        print(
            f"agent: unexpected error: {e!r} — run again with --debug to see the details.",
            file=sys.stderr,
        )
        return 1
