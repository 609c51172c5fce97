"""The plan as bubblewrap arguments: new namespaces, a read-only root, a few binds.

Order matters, later mounts cover earlier ones: the read-only root, then a
fresh /dev, /proc and a private /tmp, then the secret stores covered, then the
writable folders and the workspace, then the protected paths inside it read
only again (and secret stores inside the workspace covered once more).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from agent_cli.sandbox.plan import Plan, inside


@cache
def find() -> tuple[str, str] | None:
    """bwrap's path and version, or None when it is not on PATH or cannot make a sandbox."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    try:
        done = subprocess.run(
            [path, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
            capture_output=True,
            timeout=10,
        )
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return path, version.stdout.strip().removeprefix("bubblewrap ").strip() or "?"


@cache
def _empty(kind: str) -> str:
    """An empty folder or file to mount read-only where a protected path is missing."""
    folder = tempfile.mkdtemp(prefix="agent-sandbox-")
    atexit.register(shutil.rmtree, folder, True)
    if kind == "dir":
        os.chmod(folder, 0o555)
        return folder
    path = os.path.join(folder, "empty")
    with open(path, "wb"):
        pass
    os.chmod(path, 0o444)
    return path


def arguments(bwrap: str, plan: Plan, seccomp_fd: int | None) -> list[str]:
    args = [bwrap, "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    # The command is the namespace's first process: when it ends, the kernel ends the rest
    # before its parent hears of the end (bwrap's own init would report it first).
    # No uts or cgroup namespace: without capabilities neither can be changed, and each
    # costs a part of a millisecond per command.
    args += ["--unshare-pid", "--as-pid-1", "--unshare-ipc"]
    if not plan.network:
        args.append("--unshare-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    args += ["--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]
    for folder in plan.kept_in_tmp:
        args += ["--ro-bind", str(folder), str(folder)]
    roots = (plan.workspace, *plan.writable)
    late = [h for h in plan.hidden if any(inside(h, root) for root in roots)]
    for path in plan.hidden:
        if path not in late:
            args += _hide(path)  # one that holds the workspace: the bind below shows it again
    bind = "--bind" if plan.write else "--ro-bind"
    for folder in plan.writable:
        args += [bind, str(folder), str(folder)]
    args += [bind, str(plan.workspace), str(plan.workspace)]
    if plan.write:
        for path in plan.protected:
            args += ["--ro-bind", str(path), str(path)]
        for path in plan.missing_protected:
            kind = "file" if path.name in ("config", "config.worktree") else "dir"
            args += ["--ro-bind", _empty(kind), str(path)]
    for path in late:
        args += _hide(path)
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--chdir", str(plan.workspace), "--setenv", "TMPDIR", "/tmp", "--"]
    return args


def _hide(path: Path) -> list[str]:
    if path.is_dir() and not path.is_symlink():
        return ["--tmpfs", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


def cleanup(plan: Plan) -> list[str]:
    """Remove the mount points bwrap made for protected paths that did not exist (it
    leaves them behind, empty); nothing to tell."""
    for path in plan.missing_protected if plan.write else ():
        try:
            if path.is_dir() and not path.is_symlink():
                path.rmdir()  # only if still empty
            elif path.is_file() and path.stat().st_size == 0:
                path.unlink()
        except OSError:
            pass
    return []
