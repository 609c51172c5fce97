"""The project's own repository: its branch for the status line and its diff for /diff.

These run in the person's repository, without anyone approving them, so git is
started with everything that could run a program turned off (see `_safe_git`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agent_cli.git.run import base_env, checkpoints_available, run_git, split_z

BRANCH_STATUS_TIMEOUT = 2.0
DIFF_TIMEOUT = 10.0
UNTRACKED_FILES = 100  # new files /diff shows; the rest are counted
UNTRACKED_BYTES = 256 * 1024  # a larger new file is named, not shown
UNTRACKED_TOTAL = 1024 * 1024  # past this much, the rest are only named


def branch_status(workspace: Path) -> tuple[str, bool] | None:
    """(branch, dirty) of the project's own repository for the status line; None if none.

    Never raises: a status line must not take the app down. A repository's own
    config can run programs even for `git status` (`core.fsmonitor`, a clean
    filter, a hook on index writes), and this runs without anyone approving it, so
    those are turned off: fsmonitor and hooks by `-c`, the filters its local config
    defines by emptying them, index writes by `--no-optional-locks`. The user's
    own global config is kept, so "dirty" means what their `git status` says.
    """
    try:
        return _branch_status(workspace)
    except Exception:
        return None


def _safe_git(workspace: Path) -> tuple[Path, dict[str, str], list[str]] | None:
    """(folder, environment, `-c` overrides) to run git in the project's own repository
    without letting its config run a program; None when there is no repository or git."""
    folder = workspace.resolve()
    if not any((p / ".git").exists() for p in (folder, *folder.parents)):
        return None  # the common case for a non-repository, without starting git
    if not checkpoints_available():
        return None
    env = base_env()
    env["GIT_OPTIONAL_LOCKS"] = "0"
    overrides = ["-c", "core.fsmonitor=false", "-c", f"core.hooksPath={os.devnull}"]
    status, out, _ = run_git(
        ["config", "--null", "--show-scope", "--name-only", "--get-regexp", r"^filter\."],
        cwd=folder,
        env=env,
        timeout=BRANCH_STATUS_TIMEOUT,
    )
    if status == 0:
        fields = split_z(out)
        drivers = {
            name[len("filter.") : name.rfind(".")]
            for scope, name in zip(fields[::2], fields[1::2], strict=False)
            if scope in ("local", "worktree") and name.count(".") >= 2
        }
        for driver in sorted(drivers):
            for key, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "0")):
                overrides += ["-c", f"filter.{driver}.{key}={value}"]
    return folder, env, overrides


def workspace_diff(workspace: Path) -> str | None:
    """The project's own `git diff HEAD` and its untracked files (for /diff); None when it
    is not a repository.

    Run like `branch_status`, and with external diff drivers and textconv off,
    which a repository's config could point at any program.
    """
    safe = _safe_git(workspace)
    if safe is None:
        return None
    folder, env, overrides = safe
    args = [*overrides, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "HEAD"]
    status, out, _ = run_git(args, cwd=folder, env=env, timeout=DIFF_TIMEOUT)
    if status != 0:  # no commit yet: everything is new
        status, out, _ = run_git(
            [*overrides, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "--cached"],
            cwd=folder,
            env=env,
            timeout=DIFF_TIMEOUT,
        )
    if status != 0:
        return None
    diff = out.decode("utf-8", "replace")
    status, listing, _ = run_git(
        [*overrides, "ls-files", "-z", "--others", "--exclude-standard"],
        cwd=folder,
        env=env,
        timeout=DIFF_TIMEOUT,
    )
    untracked = split_z(listing) if status == 0 else []
    if untracked:
        diff += ("\n" if diff and not diff.endswith("\n") else "") + untracked_diff(
            folder, untracked
        )
    return diff


def untracked_diff(folder: Path, names: list[str]) -> str:
    """New files as `git diff` shows them once added (`new file`, every line `+`), up to
    `UNTRACKED_FILES` of them and `UNTRACKED_BYTES` each: what `git status` lists as
    untracked, so /diff shows everything the agent made. Read here, not by git, so no
    repository setting can run a program; a symlink shows its target, as git does, and
    is never followed."""
    parts: list[str] = []
    size = 0
    for name in names[:UNTRACKED_FILES]:
        shown = name if name.isprintable() else repr(name)  # a newline would end the fence
        if size > UNTRACKED_TOTAL:
            parts.append(f"diff --git a/{shown} b/{shown}\nnew file (not shown: /diff is long)\n")
            continue
        parts.append(_new_file(folder / name, shown))
        size += len(parts[-1])
    if len(names) > UNTRACKED_FILES:
        parts.append(f"# … and {len(names) - UNTRACKED_FILES} more untracked files\n")
    return "".join(parts)


def _new_file(path: Path, name: str) -> str:
    head = f"diff --git a/{name} b/{name}\n"
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            data, mode = os.readlink(path).encode("utf-8", "surrogateescape"), "120000"
        elif stat.S_ISREG(info.st_mode):
            if info.st_size > UNTRACKED_BYTES:
                return f"{head}new file, {info.st_size:,} bytes (too large to show)\n"
            with open(path, "rb") as handle:
                data = handle.read(UNTRACKED_BYTES + 1)
            mode = "100755" if info.st_mode & 0o111 else "100644"
        else:
            return f"{head}new file (not a regular file, not shown)\n"
    except OSError as e:
        return f"{head}new file (could not be read: {e.strerror})\n"
    head += f"new file mode {mode}\n"
    if b"\0" in data[:8000]:
        return f"{head}Binary files /dev/null and b/{name} differ\n"
    if not data:
        return head
    lines = data.decode("utf-8", "replace").splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    end = "" if data.endswith(b"\n") else "\\ No newline at end of file\n"
    return f"{head}--- /dev/null\n+++ b/{name}\n@@ -0,0 +1,{len(lines)} @@\n{body}{end}"


def _branch_status(workspace: Path) -> tuple[str, bool] | None:
    safe = _safe_git(workspace)
    if safe is None:
        return None
    folder, env, overrides = safe
    status, out, _ = run_git(
        [
            *overrides,
            "status",
            "--porcelain=v2",
            "--branch",
            "-z",
            "--untracked-files=normal",
            "--ignore-submodules=all",
        ],
        cwd=folder,
        env=env,
        timeout=BRANCH_STATUS_TIMEOUT,
    )
    if status != 0:
        return None
    head = oid = ""
    dirty = False
    for entry in split_z(out):
        if entry.startswith("# branch.head "):
            head = entry[len("# branch.head ") :]
        elif entry.startswith("# branch.oid "):
            oid = entry[len("# branch.oid ") :]
        elif not entry.startswith("#"):
            dirty = True
    if head == "(detached)":
        head = oid[:7] if oid and oid != "(initial)" else "HEAD"
    return (head, dirty) if head else None
