"""The shadow repository: a git repository of our own for one workspace, never the project's.

It lives under the user data dir, not in the project: the project may not be a
git repository, and when it is, its history, index, refs and config are the
person's, not ours. Every git call on it names its git dir and work tree
explicitly and runs in an environment built from scratch (see `_env`), so
neither the project's `.git` nor the user's or system's git config, hooks or
`GIT_*` variables can change what it does or run a program.

`ShadowRepository` is the plumbing — creating the repository, locking it, running
git on it, committing, diffing and checking out trees; `Checkpoints` builds undo
on top of it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from agent_cli import paths
from agent_cli.errors import CheckpointError
from agent_cli.git.run import base_env, run_git

IGNORED_FOLDERS = (
    ".git",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    "build",
    "dist",
    "target",
    ".mypy_cache",
    ".pytest_cache",
    ".tox",
)
"""Left out of checkpoints at any depth, on top of the project's own `.gitignore` files."""

# A fixed identity: commits must work on a machine where git has none configured.
_IDENTITY = {
    "GIT_AUTHOR_NAME": "agent checkpoints",
    "GIT_AUTHOR_EMAIL": "checkpoints@agent.invalid",
    "GIT_COMMITTER_NAME": "agent checkpoints",
    "GIT_COMMITTER_EMAIL": "checkpoints@agent.invalid",
}

# Appended to the shadow repository's config once, when it is created. Later
# entries win over `git init`'s, and no other config file is read (see `_env`).
_SHADOW_CONFIG = f"""\
[core]
\tbare = false
\thooksPath = {os.devnull}
\tfsmonitor = false
\texcludesFile = {os.devnull}
\tattributesFile = {os.devnull}
\tautocrlf = false
\tsafecrlf = false
\tlogAllRefUpdates = false
[gc]
\tauto = 0
[maintenance]
\tauto = false
[commit]
\tgpgSign = false
[advice]
\taddEmbeddedRepo = false
"""

# `info/attributes` wins over the project's `.gitattributes`: store bytes exactly as they
# are, with no end-of-line, encoding or filter conversion either way, so an undo gives
# back the very bytes that were there.
_SHADOW_ATTRIBUTES = "* -text -crlf -ident -filter -working-tree-encoding\n"

MARKER = "agent-checkpoints"  # written last: a shadow repository without it is unfinished
_GITLINK = b"160000"


class ShadowRepository:
    """The shadow repository of one workspace and the git calls made on it.

    Blocking. `_locked` serializes operations across threads and processes.
    """

    def __init__(self, workspace: Path, root: Path | None = None) -> None:
        self.workspace = workspace.resolve()
        self.root = root if root is not None else paths.data_dir() / "checkpoints"
        digest = hashlib.sha256(os.fsencode(str(self.workspace))).hexdigest()
        self.key = digest[:16]
        self.shadow = self.root / self.key
        self._ignores_checked = False  # whether tracked files now ignored were dropped

    # -- the repository and its trees -------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold this workspace's lock: one snapshot or undo at a time, across processes.

        Under the lock no other git process of ours can be running on the shadow
        repository, so an `index.lock` left behind is from a killed one and is removed.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f"{self.key}.lock", "a+b") as handle:
            try:
                import fcntl
            except ImportError:  # not POSIX: no cross-process lock
                fcntl = None  # type: ignore[assignment]
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            with contextlib.suppress(FileNotFoundError):
                (self.shadow / "index.lock").unlink()
            yield

    def _ensure_repository(self) -> None:
        """Create the shadow repository the first time (again, if a creation was cut short)."""
        if (self.shadow / MARKER).is_file():
            self._write_exclude()
            return
        self.shadow.mkdir(parents=True, exist_ok=True)
        # No templates: no sample hooks, nothing but what git needs.
        env = {k: v for k, v in self._env().items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
        self._git("init", "-q", "--bare", "--template=", str(self.shadow), env=env)
        with open(self.shadow / "config", "a", encoding="utf-8") as config:
            config.write(_SHADOW_CONFIG)
        info = self.shadow / "info"
        info.mkdir(exist_ok=True)
        self._write_exclude()
        (info / "attributes").write_text(_SHADOW_ATTRIBUTES, encoding="utf-8")
        (self.shadow / "description").write_text(
            f"Checkpoints of {self.workspace}\n", encoding="utf-8"
        )
        (self.shadow / MARKER).write_text(f"1\n{self.workspace}\n", encoding="utf-8")

    def _write_exclude(self) -> None:
        """Write `info/exclude`: the ignored folders, and the agent's own folders.

        When the workspace holds the agent's data (an agent started in the home
        folder), checkpoints must not copy themselves, and an undo must never roll
        back the stored conversations, config or logs.
        """
        lines = [f"{name}\n" if name == ".git" else f"{name}/\n" for name in IGNORED_FOLDERS]
        for folder in (self.root, paths.data_dir(), paths.config_dir(), paths.log_dir()):
            with contextlib.suppress(ValueError, OSError):
                inside = folder.resolve().relative_to(self.workspace)
                if inside.parts:
                    lines.append(_anchored_pattern(inside.as_posix()))
        text = "".join(dict.fromkeys(lines))
        exclude = self.shadow / "info" / "exclude"
        with contextlib.suppress(OSError):
            if exclude.read_text(encoding="utf-8") == text:
                return
        exclude.write_text(text, encoding="utf-8")
        self._ignores_checked = False

    def _commit(self, tree: str, message: str, parent: str | None) -> str:
        parents = ["-p", parent] if parent else []
        return self._git_text("commit-tree", tree, *parents, "-m", message)

    def _label(self, commit: str) -> str:
        raw = self._git("cat-file", "commit", commit)
        _, _, message = raw.partition(b"\n\n")
        return os.fsdecode(message).removesuffix("\n")

    def _diff(self, current: str, target: str) -> list[tuple[str, str]]:
        """What going from tree `current` to `target` does, as (A/M/D, path), by path.

        Nested git repositories are recorded by git as a commit id only (a gitlink);
        their files are theirs, so changes to them are not reported or restored.
        """
        raw = self._git("diff-tree", "-r", "-z", "--no-renames", "--raw", current, target)
        fields = raw.split(b"\0")
        changes = []
        for meta, path in zip(fields[::2], fields[1::2], strict=False):
            parts = meta.lstrip(b":").split(b" ")
            if len(parts) < 5 or _GITLINK in parts[:2]:
                continue
            letter = parts[4][:1].decode()
            changes.append((letter if letter in ("A", "D") else "M", os.fsdecode(path)))
        return sorted(changes, key=lambda change: change[1])

    def _apply(self, current: str, target: str, changes: list[tuple[str, str]]) -> None:
        """Make the work tree and index `target`, from `current` (what the index holds).

        `read-tree -m -u` updates only the files that differ and removes folders it
        emptied. A file the undo brings back may be in the way as a left-out file (one
        that grew past the size limit, one ignored now): it is replaced, as it was —
        moved aside first and put back if git fails, so a failed undo loses nothing.
        """
        aside: list[tuple[Path, Path]] = []
        try:
            for letter, relative in changes:
                path = self.workspace / relative
                if letter == "A" and (path.is_symlink() or path.is_file()):
                    spare = path.with_name(f".{path.name}.agent-undo-{os.getpid()}")
                    path.rename(spare)
                    aside.append((path, spare))
            self._git("read-tree", "-m", "-u", current, target)
        except BaseException:
            for path, spare in reversed(aside):
                with contextlib.suppress(OSError):
                    spare.rename(path)
            raise
        for _, spare in aside:
            with contextlib.suppress(OSError):
                spare.unlink()

    # -- running git ------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        """The environment of every shadow-repository git call, built from scratch.

        No system or global config (a `core.fsmonitor` or `core.hooksPath` there
        could run a program, `core.excludesFile` would make snapshots differ from
        person to person); HOME and XDG_CONFIG_HOME point at a folder without git
        files for gits older than 2.32, which ignore GIT_CONFIG_GLOBAL.
        """
        env = base_env()
        env.update(_IDENTITY)
        env.update(
            GIT_DIR=str(self.shadow),
            GIT_WORK_TREE=str(self.workspace),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            HOME=str(self.root),
            XDG_CONFIG_HOME=str(self.root),
        )
        return env

    def _git_status(
        self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> tuple[int, bytes, str]:
        return run_git(
            list(args), cwd=self.workspace, env=env if env is not None else self._env(), stdin=stdin
        )

    def _git(
        self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> bytes:
        status, out, error = self._git_status(*args, stdin=stdin, env=env)
        if status != 0:
            reason = error.strip().splitlines()[-1] if error.strip() else f"exit status {status}"
            raise CheckpointError(f"git {args[0]} failed ({reason})")
        return out

    def _git_text(self, *args: str) -> str:
        return os.fsdecode(self._git(*args)).strip()


def _anchored_pattern(relative: str) -> str:
    """An exclude pattern matching exactly this folder under the work tree's top."""
    escaped = re.sub(r"([\\*?\[\]!#])", r"\\\1", relative)
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    return f"/{escaped}/\n"
