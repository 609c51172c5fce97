"""What a sandboxed command may touch, worked out once from the settings (SPEC §14).

The plan is the same for every mechanism: bubblewrap turns it into mounts,
Landlock into rules. Paths are resolved here, so a symbolic link cannot move
a rule somewhere else.
"""

from __future__ import annotations

import functools
import os
import pwd
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from agent_cli import paths

MODES = ("auto", "bwrap", "landlock", "off")

# Where the user keeps keys and tokens, relative to a home folder: read as empty.
SECRET_STORES = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".docker",
    ".netrc",
    ".kube",
    ".git-credentials",
    ".config/gcloud",
    ".azure",
    ".npmrc",
    ".pypirc",
)
# Inside the workspace, what runs later outside any sandbox stays read-only.
PROTECTED_IN_GIT = ("config", "config.worktree", "hooks", "modules")
PROTECTED_IN_WORKSPACE = (".agent",)


class SandboxConfig(NamedTuple):
    """The `[sandbox]` table; a project file may only tighten it (settings.py)."""

    mode: str = "auto"  # one of MODES
    writable: tuple[str, ...] = ()  # folders commands may write besides the workspace
    deny_read: tuple[str, ...] = ()  # read as empty, besides the secret stores
    network: bool = False


class Plan(NamedTuple):
    workspace: Path
    writable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()  # existing paths that read as empty
    protected: tuple[Path, ...] = ()  # inside the workspace: read-only even when it is writable
    missing_protected: tuple[Path, ...] = ()  # protected names that do not exist yet
    network: bool = False
    write: bool = True  # False: nothing is writable (a read-only command)
    # Folders under /tmp a command needs to read (its home, its PATH, this Python): bubblewrap's
    # private /tmp would hide them.
    kept_in_tmp: tuple[Path, ...] = ()
    tmp: Path | None = None  # Landlock's private temporary folder

    def read_only(self) -> Plan:
        return self._replace(write=False)


def homes(env: Mapping[str, str]) -> list[Path]:
    """The home folders a command could name: $HOME and the account's own."""
    found: list[Path] = []
    for candidate in (env.get("HOME"), _account_home()):
        if candidate:
            path = _real(Path(candidate))
            if path not in found:
                found.append(path)
    return found


def _account_home() -> str | None:
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return None


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def make_plan(config: SandboxConfig, workspace: Path, env: Mapping[str, str]) -> Plan:
    """Worked out for each command: what exists may have changed since the last one (a
    secret store made meanwhile is hidden from the next command on)."""
    workspace = _real(workspace)
    own = (paths.data_dir(), paths.config_dir(), paths.log_dir())  # the agent's own folders
    secret, writable, kept = _candidates(config, env.get("HOME", ""), env.get("PATH", ""), own)
    protected, missing = _protected(workspace)
    return Plan(
        workspace=workspace,
        writable=tuple(folder for folder in writable if folder.is_dir()),
        hidden=tuple(path for path in secret if os.path.lexists(path)),
        protected=tuple(protected),
        missing_protected=tuple(missing),
        network=config.network,
        kept_in_tmp=tuple(folder for folder in kept if folder.is_dir()),
    )


@functools.lru_cache(maxsize=8)
def _candidates(
    config: SandboxConfig, home: str, path: str, own: tuple[Path, ...]
) -> tuple[tuple[Path, ...], tuple[Path, ...], tuple[Path, ...]]:
    """The paths that may be hidden, writable or kept, resolved once per setting (resolving
    them is most of a plan's cost); whether each exists is asked for every command."""
    env = {"HOME": home, "PATH": path} if home else {"PATH": path}
    candidates = [home / name for home in homes(env) for name in SECRET_STORES]
    candidates += [*own, *(Path(os.path.expanduser(p)) for p in config.deny_read)]
    secret = dict.fromkeys(r for r in map(_real, candidates) if r != Path("/"))
    writable = dict.fromkeys(_real(Path(os.path.expanduser(f))) for f in config.writable)
    return tuple(secret), tuple(writable), _kept_in_tmp(env)


def _kept_in_tmp(env: Mapping[str, str]) -> tuple[Path, ...]:
    wanted = [env.get("HOME", ""), *env.get("PATH", "").split(os.pathsep)]
    wanted += [sys.prefix, sys.base_prefix]
    kept: list[Path] = []
    for folder in wanted:
        if not folder:
            continue
        real = _real(Path(folder))
        under_tmp = inside(real, Path("/tmp")) and real != Path("/tmp") and real.is_dir()
        if under_tmp and not any(inside(real, other) for other in kept):
            kept.append(real)
    return tuple(kept)


def _protected(workspace: Path) -> tuple[list[Path], list[Path]]:
    """The protected paths that exist, and those that do not (yet)."""
    git = workspace / ".git"
    present: list[Path] = []
    missing: list[Path] = []
    if git.is_symlink() or git.is_file():
        present.append(git)  # a gitdir pointer: rewritten, it would name a planted repository
    elif git.is_dir():
        for name in PROTECTED_IN_GIT:
            (present if os.path.lexists(git / name) else missing).append(git / name)
    else:
        missing.append(git)  # `git init` would plant a config and hooks
    for name in PROTECTED_IN_WORKSPACE:
        (present if os.path.lexists(workspace / name) else missing).append(workspace / name)
    return present, missing


def inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
