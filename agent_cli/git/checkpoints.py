"""Checkpoints for undo (SPEC §8), kept in the workspace's shadow repository.

A checkpoint is a commit of the whole workspace (as git sees it: `.gitignore`d
files, the folders in `IGNORED_FOLDERS` and files over
`CHECKPOINT_MAX_FILE_BYTES` left out) under `refs/checkpoints/<conversation>/<n>`.
Undo restores the newest one of a conversation and drops its ref, so a
repeated undo steps further back. A checkpoint names the turn it was recorded
in (a `Turn:` line in its message): a rewind to a message restores the files
to the first checkpoint of the turns it takes out, and drops that one and
every later one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agent_cli.errors import CheckpointError, NothingToUndo
from agent_cli.git.run import checkpoints_available, join_z, split_z
from agent_cli.git.shadow import IGNORED_FOLDERS, MARKER, ShadowRepository

ANNOUNCED = "announced-folders"  # in the shadow repository: the left-out folders named so far
CHECKPOINT_MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files larger than this are left out of checkpoints (with a notice)."""

CHECKPOINT_MAX_NEW_FILES = 200_000
CHECKPOINT_MAX_NEW_BYTES = 2 * 1024 * 1024 * 1024
"""A snapshot that would copy more than this (an agent started in a home folder, say)
turns checkpoints off for the session instead of filling the disk."""

NOTICE_NAMES = 3  # how many left-out files a notice names
_STAGE_BY_NAME = 1000  # up to this many changed paths are staged by name, not by a walk

_REF_ROOT = "refs/checkpoints"
_UNDONE_ROOT = "refs/undone"
_SAFE_REF_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
_TURN = "\n\nTurn: "  # ends a checkpoint's message: the turn it was recorded in


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


class Checkpoints(ShadowRepository):
    """The checkpoints of one workspace, kept in its shadow repository.

    Blocking: callers in async code use `asyncio.to_thread`. Safe to use from
    several threads and processes at once: every operation holds a file lock.
    """

    def __init__(self, workspace: Path, root: Path | None = None) -> None:
        super().__init__(workspace, root)
        self._announced: set[str] = set()  # left-out files a notice has named already
        self._first = True
        self._off: str | None = None  # why checkpoints are off for this session

    # -- the API ----------------------------------------------------------------------

    def record(self, conversation: str, label: str, turn: str = "") -> list[str]:
        """Record the workspace as it is now, before a change labelled `label`, made in
        `turn` (the correlation id of the message's turn, "" for none).

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
                notices = self._folders_notice() + notices
                checkpoints = self._checkpoints(conversation)
                number = checkpoints[-1][0] + 1 if checkpoints else 1
                parent = checkpoints[-1][1] if checkpoints else None
                message = _clean_label(label) + (f"{_TURN}{turn}" if turn else "")
                commit = self._commit(tree, message, parent)
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
        if not (self.shadow / MARKER).is_file():
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
            label = _without_turn(self._label(commit))
            before = self._commit(current, f"Before undoing '{short_label(label)}'", commit)
            self._git("update-ref", f"{_UNDONE_ROOT}/{_ref_part(conversation)}/{number}", before)
            self._apply(current, target, changes)
            self._drop(conversation, number, commit)
        return Restored(label, changes)

    def first_change(self, conversation: str, turns: Collection[str]) -> str | None:
        """The label of the first change made in one of `turns` (what `restore_before`
        would go back to before); None when none of them changed a file."""
        if not turns or not checkpoints_available() or not (self.shadow / MARKER).is_file():
            return None
        with self._locked():
            found = self._first_of(conversation, turns)
        return None if found is None else found[2]

    def restore_before(self, conversation: str, turns: Collection[str]) -> Restored:
        """Restore the files as they were before the first change made in one of `turns`
        (the turns a rewind takes out of the conversation).

        That checkpoint and every later one of the conversation are dropped: the
        changes they were taken before are no longer the conversation's. The state
        just before is kept under `refs/undone/<conversation>/<n>`, as undo does.
        """
        if not checkpoints_available():
            raise CheckpointError(
                "Cannot restore the files: git is not installed, so no checkpoints were "
                "recorded — install git to use this."
            )
        nothing = NothingToUndo(
            "No file was changed after that message in this conversation: there is "
            "nothing to restore."
        )
        if not (self.shadow / MARKER).is_file():
            raise nothing
        with self._locked():
            found = self._first_of(conversation, turns)
            if found is None:
                raise nothing
            number, commit, label = found
            current, _ = self._snapshot()
            target = self._git_text("rev-parse", "--verify", "-q", f"{commit}^{{tree}}")
            changes = self._diff(current, target)
            if changes:
                message = f"Before rewinding to before '{short_label(label)}'"
                before = self._commit(current, message, commit)
                undone = f"{_UNDONE_ROOT}/{_ref_part(conversation)}/{number}"
                self._git("update-ref", undone, before)
                self._apply(current, target, changes)
            for later, later_commit in self._checkpoints(conversation):
                if later >= number:
                    self._drop(conversation, later, later_commit)
        return Restored(label, changes)

    def copy(self, conversation: str, to: str) -> None:
        """Give conversation `to` (a fork of `conversation`) the same checkpoints, so undo
        and rewind reach as far back in it. Raises CheckpointError when git fails."""
        if not checkpoints_available() or not (self.shadow / MARKER).is_file():
            return
        with self._locked():
            prefix = self._ref_prefix(to)
            for number, commit in self._checkpoints(conversation):
                self._git("update-ref", f"{prefix}{number}", commit, "")

    def _first_of(self, conversation: str, turns: Collection[str]) -> tuple[int, str, str] | None:
        """(number, commit, label) of the oldest checkpoint recorded in one of `turns`."""
        prefix = self._ref_prefix(conversation)
        listing = self._git(
            "for-each-ref", "--format=%(refname)%00%(objectname)%00%(contents)%00", prefix
        )
        found = []
        for entry in os.fsdecode(listing).split("\0\n"):
            ref, _, rest = entry.partition("\0")
            commit, _, message = rest.partition("\0")
            number = ref[len(prefix) :]
            label, _, turn = message.rstrip("\n").rpartition(_TURN)
            if number.isdigit() and label and turn in turns:
                found.append((int(number), commit, label))
        return min(found) if found else None

    # -- snapshots and refs -----------------------------------------------------------

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
        tracked = {entry[2:]: entry[0] != "?" for entry in split_z(listing)}
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
            dropped += split_z(
                self._git("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")
            )
            self._ignores_checked = True
        if dropped:
            self._git("update-index", "-z", "--force-remove", "--stdin", stdin=join_z(dropped))
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
            status, _, _ = self._git_status(*update, stdin=join_z(names))
            if status == 0:
                return []
        # Many new blobs go into one pack (bulk check-in, light compression) instead of
        # a loose file each: a third faster on a slow disk, and thousands fewer files.
        add = ["-c", "core.bigFileThreshold=1", "-c", "pack.compression=1", "add", "-A"]
        add.append("--ignore-errors")
        if big:
            pathspecs = [":/", *(f":(exclude,literal){name}" for name in big)]
            add += ["--pathspec-from-file=-", "--pathspec-file-nul"]
            status, _, error = self._git_status(*add, stdin=join_z(pathspecs))
        else:
            status, _, error = self._git_status(*add)
        if status == 0:
            return []
        first = error.strip().splitlines()[0] if error.strip() else f"exit status {status}"
        return [f"Some files could not be read into the checkpoint: {first}"]

    def _folders_notice(self) -> list[str]:
        """The ignored folders the workspace has, said once per workspace: the folders
        named already are kept in the shadow repository (the user data folder), so a new
        conversation does not say it again; a folder that appears later is named then."""
        if not self._first:
            return []
        self._first = False
        present = [
            name for name in IGNORED_FOLDERS if name != ".git" and (self.workspace / name).is_dir()
        ]
        said_file = self.shadow / ANNOUNCED
        try:
            said = set(said_file.read_text(encoding="utf-8").split("\n"))
        except OSError:
            said = set()
        new = [name for name in present if name not in said]
        if not new:
            return []
        with contextlib.suppress(OSError):  # unwritable: it is said again next time
            said_file.write_text("\n".join(sorted(said.union(new) - {""})) + "\n", "utf-8")
        return [f"Checkpoints leave out {', '.join(new)}: undo does not restore ignored folders."]

    def _standing_notices(self, big: list[str]) -> list[str]:
        notices = []
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

    def _drop(self, conversation: str, number: int, commit: str) -> None:
        self._git("update-ref", "-d", f"{self._ref_prefix(conversation)}{number}", commit)

    def _ref_prefix(self, conversation: str) -> str:
        return f"{_REF_ROOT}/{_ref_part(conversation)}/"


class _TooLarge(CheckpointError):
    """The workspace is too large to snapshot."""


def _ref_part(conversation: str) -> str:
    """The conversation's name in a ref: its id if that is safe there, else a digest."""
    if _SAFE_REF_PART.fullmatch(conversation):
        return conversation
    return "h-" + hashlib.sha256(conversation.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _without_turn(message: str) -> str:
    """A checkpoint's label: its message without the turn it names."""
    label, found, _ = message.rpartition(_TURN)
    return label if found else message


def _clean_label(label: str) -> str:
    """A label git can take as an argument: no NUL, not longer than a page or so."""
    label = label.replace("\0", "")
    return label if len(label) <= 4000 else label[:3999] + "…"
