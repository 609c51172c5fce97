"""Conversations on disk: atomic, crash-safe, listable (SPEC §3).

One JSON file per conversation, always written whole to a temporary file in
the same folder, flushed to disk, then renamed over the old one: a crash, a
`kill -9` or a full disk at any moment leaves either the previous version or
the new one, never a torn file. A process killed mid-write leaves its
temporary file behind (`.ID.json.PID.XXXX.tmp`, never listed); the first save of
the next Store in the folder removes those whose writer is gone.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import tempfile
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import NamedTuple

from agent_cli.engine.items import (
    Conversation,
    NoticeItem,
    item_to_json,
)
from agent_cli.errors import NoSuchConversation, StoreError

SUFFIX = ".json"
TEMP_SUFFIX = ".tmp"
SEPARATORS = (",", ":")
START_SLACK_SECONDS = 2.0  # /proc's start times are rounded to whole seconds (btime)
RECOVERED_NOTICE = (
    "The previous run ended here without saving its end: the process running it stopped, "
    "or its last save failed (a full disk)."
)


class Summary(NamedTuple):
    id: str
    title: str
    workspace: str
    agent: str
    items: int
    updated: float


class Store:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        # Each conversation's items as last written, so a save re-encodes only what
        # changed: a long conversation is saved after every round, and encoding all
        # of it each time made a round's cost grow with the conversation.
        self._written: dict[str, dict[str, str]] = {}
        self._swept = False

    def path(self, conversation_id: str) -> Path:
        return self.directory / f"{conversation_id}{SUFFIX}"

    def save(self, conversation: Conversation, changed: AbstractSet[str] | None = None) -> None:
        """Write the conversation atomically; on failure the previous version stays.

        `changed` names the items changed since the last save (None: any may
        have, as at a run's end); the others are written as they were encoded
        then, so a save during a run costs what changed, not the whole
        conversation. The file's bytes always reach the disk before the rename;
        the folder entry is synced only for a whole save (losing it to a power
        cut brings back the previous version, never a torn one).
        """
        data = self._encode(conversation, changed)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            if not self._swept:
                self._swept = True
                _remove_orphaned_temporaries(self.directory)
            _write_atomically(
                self.path(conversation.id), data.encode("utf-8"), sync_folder=changed is None
            )
        except OSError as e:
            raise StoreError(
                f"Could not save conversation {conversation.id} in {self.directory}: "
                f"{e.strerror or e} — free some space or fix the folder's permissions; "
                "the last saved version is intact."
            ) from e

    def _encode(self, conversation: Conversation, changed: AbstractSet[str] | None) -> str:
        written = self._written.get(conversation.id, {}) if changed is not None else {}
        changed = changed or frozenset()
        fresh: dict[str, str] = {}
        for item in conversation.items:
            text = None if item.id in changed else written.get(item.id)
            if text is None:
                text = json.dumps(item_to_json(item), ensure_ascii=False, separators=SEPARATORS)
            fresh[item.id] = text
        self._written[conversation.id] = fresh
        head = json.dumps(conversation.header_json(), ensure_ascii=False, separators=SEPARATORS)
        return f'{head[:-1]},"items":[{",".join(fresh.values())}]}}'

    def load(self, conversation_id: str) -> Conversation:
        """Load by id (or a unique prefix); a run that died mid-way reads idle with a notice."""
        path = self._find(conversation_id)
        try:
            conversation = Conversation.from_json(json.loads(path.read_bytes()))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise StoreError(
                f"Conversation file {path} could not be read ({e}) — "
                "remove it with `agent sessions rm` or restore it from a backup."
            ) from e
        if conversation.state == "running" and running_elsewhere(conversation) is None:
            conversation.mark_idle()
            conversation.items.append(NoticeItem(RECOVERED_NOTICE, "warn"))
        return conversation

    def list(self, workspace: str | None = None) -> list[Summary]:
        """Summaries, most recently updated first; unreadable files are skipped."""
        summaries = []
        for path in self._files_newest_first():
            try:
                data = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue
            if workspace is not None and data.get("workspace") != workspace:
                continue
            summaries.append(
                Summary(
                    id=data.get("id", path.stem),
                    title=data.get("title", ""),
                    workspace=data.get("workspace", ""),
                    agent=data.get("agent", "builtin"),
                    items=len(data.get("items", [])),
                    updated=data.get("updated", 0.0),
                )
            )
        summaries.sort(key=lambda s: s.updated, reverse=True)
        return summaries

    def last(self, workspace: str) -> Conversation | None:
        """The most recently updated conversation of this workspace, if any."""
        summaries = self.list(workspace)
        return self.load(summaries[0].id) if summaries else None

    def remove(self, conversation_id: str) -> None:
        self._find(conversation_id).unlink()

    def find(self, conversation_id: str) -> Path:
        """The file of a conversation, by id or a unique prefix (without reading it)."""
        return self._find(conversation_id)

    def _find(self, conversation_id: str) -> Path:
        if not conversation_id or "/" in conversation_id or conversation_id.startswith("."):
            raise NoSuchConversation(
                f"{conversation_id!r} is not a conversation id — see `agent sessions`."
            )
        exact = self.path(conversation_id)
        if exact.exists():
            return exact
        matches = sorted(self.directory.glob(f"{conversation_id}*{SUFFIX}"))
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise NoSuchConversation(
                f"No conversation {conversation_id!r} — list them with `agent sessions`."
            )
        raise NoSuchConversation(
            f"{conversation_id!r} matches {len(matches)} conversations — give more of the id."
        )

    def _files_newest_first(self) -> builtins.list[Path]:
        if not self.directory.is_dir():
            return []
        files = [p for p in self.directory.iterdir() if p.suffix == SUFFIX]
        return sorted(files, key=_mtime, reverse=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _write_atomically(path: Path, data: bytes, sync_folder: bool = True) -> None:
    prefix = f".{path.name}.{os.getpid()}."  # the writer's pid: see _remove_orphaned_temporaries
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if not sync_folder:
        return
    # The rename is durable only once the folder's entry is on disk too.
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _remove_orphaned_temporaries(directory: Path) -> None:
    """Remove the temporary files of writers that died mid-write (a kill, a crash).

    A file whose writer still runs (or may: another user's, or a pid reused) is left.
    """
    for path in directory.glob(f".*{SUFFIX}.*{TEMP_SUFFIX}"):
        try:
            pid = int(path.name.removesuffix(TEMP_SUFFIX).split(".")[-2])
        except (ValueError, IndexError):
            continue  # not ours (or from before pids were in the name)
        if pid == os.getpid() or _running(pid):
            continue
        with contextlib.suppress(OSError):
            path.unlink()


def running_elsewhere(conversation: Conversation) -> int | None:
    """The id of another live process running this conversation, if one is.

    A pid the system has since given to a process started after the
    conversation's last save is not its writer (where the start time is known).
    """
    pid = conversation.pid
    if conversation.state != "running" or pid <= 0 or pid == os.getpid() or not _running(pid):
        return None
    started = _process_start(pid)
    if started is not None and started > conversation.updated + START_SLACK_SECONDS:
        return None
    return pid


def _process_start(pid: int) -> float | None:
    """When process `pid` started (seconds since the epoch), where /proc says (Linux)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = next(
            float(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        ticks = int(stat.rpartition(")")[2].split()[19])  # field 22, after the command name
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: running
    return True
