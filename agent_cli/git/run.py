"""Running git safely: every git call of the package goes through `run_git`.

git runs through GitPython, which is imported lazily, on the first call: importing
it costs about 100 ms and `agent --help` must never pay for it. Each call gets an
environment the caller built from `base_env` (no inherited `GIT_*` variable) and
nothing else (see `_command`), so the person's environment cannot point git at
another repository or reconfigure it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from agent_cli.errors import CheckpointError

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def checkpoints_available() -> bool:
    """Whether a git executable is there to run (checkpoints are off without one)."""
    return _git_executable() is not None


def _git_executable() -> str | None:
    return shutil.which(os.environ.get("GIT_PYTHON_GIT_EXECUTABLE") or "git")


def base_env() -> dict[str, str]:
    """The process environment without any GIT_* variable, in the C locale.

    An inherited GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY or GIT_CONFIG_PARAMETERS (the
    agent run from a git hook, say) would point git at another repository's index or
    reconfigure it; none of them may reach our git calls.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(LC_ALL="C", LANGUAGE="C", GIT_TERMINAL_PROMPT="0")
    return env


def _command(env: Mapping[str, str], executable: str, args: Sequence[str]) -> list[str]:
    """The command line that runs git with exactly `env`.

    GitPython's `execute` always starts from a copy of `os.environ` and can add
    variables but not remove them, so the call goes through `env -i NAME=value ...`
    (POSIX), which starts git with nothing but the variables given.
    """
    wrapper = shutil.which("env")
    if wrapper is None:  # not POSIX: GitPython's merged environment is the best we have
        return [executable, *args]
    assignments = [f"{k}={v}" for k, v in env.items() if _ENV_NAME.fullmatch(k) and "\0" not in v]
    return [wrapper, "-i", *assignments, executable, *args]


def run_git(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: bytes | None = None,
    timeout: float | None = None,
) -> tuple[int, bytes, str]:
    """Run git through GitPython; return (status, stdout bytes, stderr text). Never raises
    for git's own failures (the status says); raises CheckpointError if git cannot start."""
    executable = _git_executable()
    if executable is None:
        raise CheckpointError("git is not installed")
    try:
        import git  # GitPython, lazily: importing it costs ~100 ms
    except ImportError as e:
        raise CheckpointError(f"GitPython could not load git ({e})") from e
    runner = git.Git(str(cwd))
    with contextlib.ExitStack() as stack:
        istream = None
        if stdin is not None:
            istream = stack.enter_context(tempfile.TemporaryFile())
            istream.write(stdin)
            istream.seek(0)
        try:
            status, out, error = runner.execute(
                _command(env, executable, args),
                istream=istream,
                with_extended_output=True,
                with_exceptions=False,
                stdout_as_string=False,
                strip_newline_in_stdout=False,
                kill_after_timeout=timeout,
                env=dict(env),
            )
        except git.GitCommandNotFound as e:
            raise CheckpointError(f"git could not be started ({e})") from e
    return status, out, error


# -- git's NUL-separated lists -----------------------------------------------------------


def split_z(data: bytes) -> list[str]:
    return [os.fsdecode(part) for part in data.split(b"\0") if part]


def join_z(names: Sequence[str]) -> bytes:
    return b"".join(os.fsencode(name) + b"\0" for name in names)
