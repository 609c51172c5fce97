"""What every command shares: the workspace, settings, and turning errors into exit codes."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from agent_cli.errors import AgentError, ConfigError, UsageError
from agent_cli.policy.mode_names import MODES
from agent_cli.sandbox.plan import MODES as SANDBOX_MODES

# The modes, as a choice for `--mode` options.
Mode = StrEnum("Mode", {mode.replace("-", "_"): mode for mode in MODES})  # type: ignore[misc]
# How commands are confined, as a choice for `--sandbox` (SPEC §14).
SandboxMode = StrEnum("SandboxMode", {mode: mode for mode in SANDBOX_MODES})  # type: ignore[misc]
SANDBOX_HELP = "How commands are confined: auto (default), bwrap, landlock, or off."


T = TypeVar("T")
SECRET_VALUE_LENGTH = 8  # a variable named like a secret but shorter is a flag, not a key


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
    """Log everything at debug level to a new file under the log folder; return its path.

    The file gets every secret redacted (see `agent_cli.logs`), the configured
    keys verbatim among them, so they are gathered here, before anything is logged.
    """
    from agent_cli import logs, paths

    path = logs.start(paths.log_dir(), _known_secrets())
    print(f"agent: writing a debug log to {path}", file=sys.stderr)
    return path


def _known_secrets() -> list[str]:
    """Every key the agent could send: stored ones, configured ones, and the environment's."""
    from agent_cli import credentials
    from agent_cli.settings import known_providers, load_settings
    from agent_cli.tools.shell import SECRET_NAME_PATTERNS

    def secret(name: str, value: str) -> bool:
        """Named like a secret (what commands never see), and long enough to be one."""
        upper = name.upper()
        return len(value) >= SECRET_VALUE_LENGTH and any(p in upper for p in SECRET_NAME_PATTERNS)

    found = [value for name, value in os.environ.items() if secret(name, value)]
    # A damaged file is the command's own error to report; the log goes on without it.
    with contextlib.suppress(ConfigError):
        found += credentials.read_keys().values()
    with contextlib.suppress(ConfigError):
        for entry in known_providers():
            found.append(entry.provider.api_key or "")
            found += entry.provider.headers.values()
    from agent_cli.tools.mcp_auth import stored_secrets

    found += stored_secrets()  # MCP servers' OAuth tokens (logins later in the run are
    # caught by the redactor's Authorization and *_token rules)
    with contextlib.suppress(ConfigError):  # what [shell_environment] sets for commands
        added = load_settings(Path.cwd()).shell_environment.set
        found += [value for name, value in added.items() if secret(name, value)]
    return [secret for secret in found if secret]


def guarded(debug: bool, action: Callable[[], int]) -> int:
    """Run a command; a user-facing error becomes one sentence on stderr and its exit code."""
    import logging

    root = logging.getLogger()
    if not root.handlers:  # else Python's last-resort handler prints libraries' warnings
        root.addHandler(logging.NullHandler())  # (the SDKs') over the TUI or an answer
    try:
        return action()
    except AgentError as e:
        if debug:
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
