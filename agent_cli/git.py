"""Git for the agent: checkpoints for undo (SPEC §8) and the branch on the status line.

Checkpoints live in a *shadow* repository under the user data dir, one per
workspace, never in the project: the project may not be a git repository, and
when it is, its history, index, refs and config are the person's, not ours.
Every git call on the shadow repository names its git dir and work tree
explicitly and runs in an environment built from scratch (see `_command`), so
neither the project's `.git` nor the user's or system's git config, hooks or
`GIT_*` variables can change what it does or run a program.

A checkpoint is a commit of the whole workspace (as git sees it: `.gitignore`d
files, the folders in `IGNORED_FOLDERS` and files over
`CHECKPOINT_MAX_FILE_BYTES` left out) under `refs/checkpoints/<conversation>/<n>`.
Undo restores the newest one of a conversation and drops its ref, so a
repeated undo steps further back.

GitPython is imported lazily, inside the functions that run git: importing it
costs about 100 ms and `agent --help` must never pay for it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agent_cli import paths
from agent_cli.errors import AgentError

CHECKPOINT_MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files larger than this are left out of checkpoints (with a notice)."""

CHECKPOINT_MAX_NEW_FILES = 200_000
CHECKPOINT_MAX_NEW_BYTES = 2 * 1024 * 1024 * 1024
"""A snapshot that would copy more than this (an agent started in a home folder, say)
turns checkpoints off for the session instead of filling the disk."""

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

BRANCH_STATUS_TIMEOUT = 2.0
DIFF_TIMEOUT = 10.0
NOTICE_NAMES = 3  # how many left-out files a notice names
_STAGE_BY_NAME = 1000  # up to this many changed paths are staged by name, not by a walk

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

_MARKER = "agent-checkpoints"  # written last: a shadow repository without it is unfinished
_REF_ROOT = "refs/checkpoints"
_UNDONE_ROOT = "refs/undone"
_GITLINK = b"160000"
_SAFE_REF_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class CheckpointError(AgentError):
    """git could not record or restore a checkpoint."""


class NothingToUndo(AgentError):
    """The conversation has no checkpoint left to go back to."""


@dataclass(frozen=True)
class Restored:
    """What an undo did: the checkpoint's label and each file it changed.

    `changes` holds (letter, workspace-relative path), the letter saying what the
    undo did to the file: M its content was restored, A it was brought back (it had
    been deleted), D it was removed (it had been created after the checkpoint).
    """

    label: str
    changes: list[tuple[str, str]]

    def summary(self, conversation: str, limit: int = 10) -> str:
        """One line for a notice: "Restored 3 files to before 'Edit a.py' (conversation X): ..."."""
        count = len(self.changes)
        files = "file" if count == 1 else "files"
        listed = ", ".join(f"{letter} {path}" for letter, path in self.changes[:limit])
        more = f" and {count - limit} more" if count > limit else ""
        return (
            f"Restored {count} {files} to before '{short_label(self.label)}' "
            f"(conversation {conversation}): {listed}{more}"
        )


def short_label(label: str, width: int = 60) -> str:
    """A label's first line, cut to `width` characters (a command's label may be long)."""
    line = label.strip().splitlines()[0] if label.strip() else "(no label)"
    return line if len(line) <= width else line[: width - 1] + "…"


def checkpoints_available() -> bool:
    """Whether a git executable is there to run (checkpoints are off without one)."""
    return _git_executable() is not None


class Checkpoints:
    """The checkpoints of one workspace, kept in its shadow repository.

    Blocking: callers in async code use `asyncio.to_thread`. Safe to use from
    several threads and processes at once: every operation holds a file lock.
    """

    def __init__(self, workspace: Path, root: Path | None = None) -> None:
        self.workspace = workspace.resolve()
        self.root = root if root is not None else paths.data_dir() / "checkpoints"
        digest = hashlib.sha256(os.fsencode(str(self.workspace))).hexdigest()
        self.key = digest[:16]
        self.shadow = self.root / self.key
        self._announced: set[str] = set()  # left-out files a notice has named already
        self._first = True
        self._ignores_checked = False  # whether tracked files now ignored were dropped
        self._off: str | None = None  # why checkpoints are off for this session

    # -- the API ----------------------------------------------------------------------

    def record(self, conversation: str, label: str) -> list[str]:
        """Record the workspace as it is now, before a change labelled `label`.

        Returns notices for the person: files left out of the checkpoint, or why no
        checkpoint could be recorded. It never raises for a git or disk failure: a
        missing checkpoint must not stop the change, the notice says undo will not
        reach back past it. Standing conditions (no git, left-out files) are said
        once per `Checkpoints` object, newly left-out files each time they appear.
        """
        notices: list[str] = []
        if self._off is not None:
            return []
        if not checkpoints_available():
            self._off = "no git"
            return [
                "Checkpoints are off: git is not installed, so undo cannot restore files — "
                "install git to turn them on."
            ]
        try:
            with self._locked():
                self._ensure_repository()
                tree, notices = self._snapshot()
                checkpoints = self._checkpoints(conversation)
                number = checkpoints[-1][0] + 1 if checkpoints else 1
                parent = checkpoints[-1][1] if checkpoints else None
                commit = self._commit(tree, _clean_label(label), parent)
                ref = f"{self._ref_prefix(conversation)}{number}"
                self._git("update-ref", ref, commit, "")  # "": the ref must not exist yet
        except _TooLarge as e:
            self._off = str(e)
            return [*notices, str(e)]
        except (CheckpointError, OSError) as e:
            return [
                *notices,
                f"No checkpoint was recorded before '{short_label(label)}': {e} — "
                "undo cannot go back past this change.",
            ]
        return notices

    def undo(self, conversation: str) -> Restored:
        """Restore the files as they were at the conversation's newest checkpoint.

        Files created since are removed, changed or deleted ones restored; ignored
        and left-out files are not touched. The checkpoint is dropped, so the next
        undo goes one further back. Checkpoints equal to the files as they are now
        (a command that changed nothing) are dropped on the way, so an undo always
        changes something. The state just before the undo is kept under
        `refs/undone/<conversation>/<n>`: a mistaken undo can be taken back by hand.
        """
        if not checkpoints_available():
            raise CheckpointError(
                "Cannot undo: git is not installed, so no checkpoints were recorded — "
                "install git to use undo."
            )
        nothing = NothingToUndo(
            f"Nothing to undo in conversation {conversation}: "
            "it has no change of the agent left to take back."
        )
        if not (self.shadow / _MARKER).is_file():
            raise nothing
        with self._locked():
            checkpoints = self._checkpoints(conversation)
            if not checkpoints:
                raise nothing
            current, _ = self._snapshot()
            while checkpoints:
                number, commit = checkpoints.pop()
                target = self._git_text("rev-parse", "--verify", "-q", f"{commit}^{{tree}}")
                changes = self._diff(current, target)
                if changes:
                    break
                self._drop(conversation, number, commit)
            else:
                raise NothingToUndo(
                    f"Nothing to undo in conversation {conversation}: the files already are "
                    "as they were before the agent's changes."
                )
            label = self._label(commit)
            before = self._commit(current, f"Before undoing '{short_label(label)}'", commit)
            self._git("update-ref", f"{_UNDONE_ROOT}/{_ref_part(conversation)}/{number}", before)
            self._apply(current, target, changes)
            self._drop(conversation, number, commit)
        return Restored(label, changes)

    # -- the shadow repository --------------------------------------------------------

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
        if (self.shadow / _MARKER).is_file():
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
        (self.shadow / _MARKER).write_text(f"1\n{self.workspace}\n", encoding="utf-8")

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

    def _snapshot(self) -> tuple[str, list[str]]:
        """Stage the workspace as it is now in the shadow index; return (tree id, notices).

        Speed: one walk of the tree, in git. `ls-files --modified --others` compares
        each file's stat data with the index's (the stat cache: unchanged files are
        not read) and applies the ignore rules, naming just the files that changed
        since the last snapshot. Only those are stat'ed here, to leave out the ones
        over the size limit, and only those are staged. `core.bigFileThreshold` would
        not do for the limit: it changes how big blobs are stored, not whether they
        are. A left-out file is untracked, so it is named (and stat'ed) again next
        time — which is also how one that shrank comes back.
        """
        listing = self._git("ls-files", "-z", "-t", "--modified", "--others", "--exclude-standard")
        # "? path" is untracked, any other tag a tracked file that changed or went away.
        tracked = {entry[2:]: entry[0] != "?" for entry in _split_z(listing)}
        candidates = list(tracked)
        big: list[str] = []
        stage: list[str] = []
        new_files = new_bytes = 0
        for relative in candidates:
            try:
                info = os.lstat(self.workspace / relative)
            except OSError:  # deleted: staged as a removal
                stage.append(relative)
                continue
            if stat.S_ISREG(info.st_mode):
                if info.st_size > CHECKPOINT_MAX_FILE_BYTES:
                    big.append(relative)
                    continue
                new_files += 1
                new_bytes += info.st_size
            stage.append(relative.rstrip("/"))  # "sub/": a nested repository
        if new_files > CHECKPOINT_MAX_NEW_FILES or new_bytes > CHECKPOINT_MAX_NEW_BYTES:
            raise _TooLarge(
                f"Checkpoints are off for this session: {self.workspace} is too large to "
                f"copy ({new_files:,} files, {new_bytes / 2**30:.1f} GiB) — undo cannot "
                "restore files; start the agent in the project's folder."
            )
        big.sort()
        # Tracked files that are ignored now (a .gitignore that changed, a file that grew
        # too big) leave the checkpoint: what is ignored is never restored, nor removed.
        # Ignore rules can only have changed with a .gitignore among the changed files,
        # or since an earlier session.
        dropped = [name for name in big if tracked[name]]
        if not self._ignores_checked or any(
            PurePosixPath(name).name == ".gitignore" for name in candidates
        ):
            dropped += _split_z(
                self._git("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")
            )
            self._ignores_checked = True
        if dropped:
            self._git("update-index", "-z", "--force-remove", "--stdin", stdin=_join_z(dropped))
        notices = self._standing_notices(big)
        if stage:
            notices += self._stage(stage, big)
        return self._git_text("write-tree"), notices

    def _stage(self, names: list[str], big: list[str]) -> list[str]:
        """Stage these changed paths; return notices about files that could not be read.

        A few paths are staged by name (`update-index`, no second walk of the tree);
        many (the first snapshot) or a path `update-index` refused (an unreadable
        file) go through `add -A`, which walks the tree and skips what it cannot read.
        """
        if len(names) <= _STAGE_BY_NAME:
            update = ["update-index", "--add", "--remove", "--replace", "-z", "--stdin"]
            status, _, _ = self._git_status(*update, stdin=_join_z(names))
            if status == 0:
                return []
        # Many new blobs go into one pack (bulk check-in, light compression) instead of
        # a loose file each: a third faster on a slow disk, and thousands fewer files.
        add = ["-c", "core.bigFileThreshold=1", "-c", "pack.compression=1", "add", "-A"]
        add.append("--ignore-errors")
        if big:
            pathspecs = [":/", *(f":(exclude,literal){name}" for name in big)]
            add += ["--pathspec-from-file=-", "--pathspec-file-nul"]
            status, _, error = self._git_status(*add, stdin=_join_z(pathspecs))
        else:
            status, _, error = self._git_status(*add)
        if status == 0:
            return []
        first = error.strip().splitlines()[0] if error.strip() else f"exit status {status}"
        return [f"Some files could not be read into the checkpoint: {first}"]

    def _standing_notices(self, big: list[str]) -> list[str]:
        notices = []
        if self._first:
            self._first = False
            present = [
                name
                for name in IGNORED_FOLDERS
                if name != ".git" and (self.workspace / name).is_dir()
            ]
            if present:
                notices.append(
                    f"Checkpoints leave out {', '.join(present)}: undo does not restore "
                    "ignored folders."
                )
        new = [name for name in big if name not in self._announced]
        if new:
            self._announced.update(big)
            named = ", ".join(big[:NOTICE_NAMES])
            more = f" and {len(big) - NOTICE_NAMES} more" if len(big) > NOTICE_NAMES else ""
            notices.append(
                f"Left out of checkpoints (over {CHECKPOINT_MAX_FILE_BYTES // 2**20} MiB, "
                f"undo cannot restore them): {named}{more}."
            )
        return notices

    def _checkpoints(self, conversation: str) -> list[tuple[int, str]]:
        """The conversation's checkpoints as (number, commit), oldest first."""
        prefix = self._ref_prefix(conversation)
        listing = self._git_text("for-each-ref", "--format=%(refname) %(objectname)", prefix)
        found = []
        for line in listing.splitlines():
            ref, _, commit = line.partition(" ")
            number = ref[len(prefix) :]
            if number.isdigit():
                found.append((int(number), commit))
        return sorted(found)

    def _commit(self, tree: str, message: str, parent: str | None) -> str:
        parents = ["-p", parent] if parent else []
        return self._git_text("commit-tree", tree, *parents, "-m", message)

    def _label(self, commit: str) -> str:
        raw = self._git("cat-file", "commit", commit)
        _, _, message = raw.partition(b"\n\n")
        return os.fsdecode(message).removesuffix("\n")

    def _drop(self, conversation: str, number: int, commit: str) -> None:
        self._git("update-ref", "-d", f"{self._ref_prefix(conversation)}{number}", commit)

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

    def _ref_prefix(self, conversation: str) -> str:
        return f"{_REF_ROOT}/{_ref_part(conversation)}/"

    # -- running git ------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        """The environment of every shadow-repository git call, built from scratch.

        No system or global config (a `core.fsmonitor` or `core.hooksPath` there
        could run a program, `core.excludesFile` would make snapshots differ from
        person to person); HOME and XDG_CONFIG_HOME point at a folder without git
        files for gits older than 2.32, which ignore GIT_CONFIG_GLOBAL.
        """
        env = _base_env()
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
        return _run_git(
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


class _TooLarge(CheckpointError):
    """The workspace is too large to snapshot."""


def _ref_part(conversation: str) -> str:
    """The conversation's name in a ref: its id if that is safe there, else a digest."""
    if _SAFE_REF_PART.fullmatch(conversation):
        return conversation
    return "h-" + hashlib.sha256(conversation.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _clean_label(label: str) -> str:
    """A label git can take as an argument: no NUL, not longer than a page or so."""
    label = label.replace("\0", "")
    return label if len(label) <= 4000 else label[:3999] + "…"


def _anchored_pattern(relative: str) -> str:
    """An exclude pattern matching exactly this folder under the work tree's top."""
    escaped = re.sub(r"([\\*?\[\]!#])", r"\\\1", relative)
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    return f"/{escaped}/\n"


def _split_z(data: bytes) -> list[str]:
    return [os.fsdecode(part) for part in data.split(b"\0") if part]


def _join_z(names: Sequence[str]) -> bytes:
    return b"".join(os.fsencode(name) + b"\0" for name in names)


# -- the project's own repository ---------------------------------------------------------


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
    env = _base_env()
    env["GIT_OPTIONAL_LOCKS"] = "0"
    overrides = ["-c", "core.fsmonitor=false", "-c", f"core.hooksPath={os.devnull}"]
    status, out, _ = _run_git(
        ["config", "--null", "--show-scope", "--name-only", "--get-regexp", r"^filter\."],
        cwd=folder,
        env=env,
        timeout=BRANCH_STATUS_TIMEOUT,
    )
    if status == 0:
        fields = _split_z(out)
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
    """The project's own `git diff HEAD` (for /diff); None when it is not a repository.

    Run like `branch_status`, and with external diff drivers and textconv off,
    which a repository's config could point at any program.
    """
    safe = _safe_git(workspace)
    if safe is None:
        return None
    folder, env, overrides = safe
    args = [*overrides, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "HEAD"]
    status, out, _ = _run_git(args, cwd=folder, env=env, timeout=DIFF_TIMEOUT)
    if status != 0:  # no commit yet: everything is new
        status, out, _ = _run_git(
            [*overrides, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "--cached"],
            cwd=folder,
            env=env,
            timeout=DIFF_TIMEOUT,
        )
    return out.decode("utf-8", "replace") if status == 0 else None


def _branch_status(workspace: Path) -> tuple[str, bool] | None:
    safe = _safe_git(workspace)
    if safe is None:
        return None
    folder, env, overrides = safe
    status, out, _ = _run_git(
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
    for entry in _split_z(out):
        if entry.startswith("# branch.head "):
            head = entry[len("# branch.head ") :]
        elif entry.startswith("# branch.oid "):
            oid = entry[len("# branch.oid ") :]
        elif not entry.startswith("#"):
            dirty = True
    if head == "(detached)":
        head = oid[:7] if oid and oid != "(initial)" else "HEAD"
    return (head, dirty) if head else None


# -- running git ------------------------------------------------------------------------


def _git_executable() -> str | None:
    return shutil.which(os.environ.get("GIT_PYTHON_GIT_EXECUTABLE") or "git")


def _base_env() -> dict[str, str]:
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


def _run_git(
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
