"""Conversations on disk: crash-safe, listable, a save costing what changed (SPEC §3).

One append-only log per conversation (`ID.jsonl`, see conversation_log): a
save appends the items that changed and a header that commits them, flushed
to disk. A crash, a `kill -9` or a full disk at any moment leaves the last
complete save: a save cut short is never read, and a failed append is cut off
again. A log is rewritten whole (compacted) by the first save a Store makes of
it (so a process appends only to a log it wrote, whose end it knows) and when
it holds more than twice what the conversation does: to a temporary file in
the same folder, flushed, then renamed over the old one, so a crash leaves the
previous version. A process killed mid-rewrite leaves its temporary file
behind (`.ID.jsonl.PID.XXXX.tmp`, never listed); the first save of the next
Store in the folder removes those whose writer is gone.

Conversations stored before the log, whole in one JSON document (`ID.json`),
still load and list; their next save converts them.

Images are kept by reference: each in a file of the folder `ID.media/` beside the
log, named for its bytes (so one pasted twice is one file), written and flushed
before the record that names it; the log holds the file's name, never base64.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from agent_cli.durable import TEMP_SUFFIX, write_atomically
from agent_cli.engine.conversation_log import (
    FileMark,
    Fingerprint,
    append,
    fingerprint,
    header_record,
    item_record,
    last_header,
    read_log,
    rewind_record,
    rewound_record,
)
from agent_cli.engine.items import (
    Conversation,
    Item,
    NoticeItem,
    ToolItem,
    UserItem,
    new_conversation_id,
)
from agent_cli.errors import NoSuchConversation, StoreError
from agent_cli.media import Image

SUFFIX = ".jsonl"
MEDIA_SUFFIX = ".media"  # the folder beside a log that holds its images
WHOLE_SUFFIX = ".json"  # a conversation stored whole, before the log
COMPACT_RATIO = 2  # a log is rewritten once it holds this many times what it says
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


@dataclass
class _Written:
    """What this Store last wrote of one conversation's log: a save appends what differs."""

    mark: FileMark
    items: dict[str, tuple[int, Fingerprint, int]]  # id → (position, fingerprint, record bytes)
    count: int
    live: int  # bytes the log would hold rewritten: every item's last record and a header
    header: int  # bytes of the last header record
    rewound: int = 0  # how many of the conversation's rewinds the log holds


class Store:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._written: dict[str, _Written] = {}
        self._swept = False

    def path(self, conversation_id: str) -> Path:
        return self.directory / f"{conversation_id}{SUFFIX}"

    def media(self, conversation_id: str) -> Path:
        """The folder holding a conversation's images."""
        return self.directory / f"{conversation_id}{MEDIA_SUFFIX}"

    def _keep_images(self, conversation_id: str, item: Item) -> None:
        """Write the images of an item about to be saved that have no file yet."""
        if not isinstance(item, UserItem | ToolItem) or not item.images:
            return
        folder = self.media(conversation_id)
        for image in item.images:
            path = folder / image.file
            if image.data and not path.exists():
                folder.mkdir(exist_ok=True)
                write_atomically(path, image.data)

    def _image_loader(self, conversation_id: str) -> Callable[[dict[str, Any]], Image]:
        folder = self.media(conversation_id)

        def load(ref: dict[str, Any]) -> Image:
            name = str(ref.get("file", ""))
            data = b""
            if name and "/" not in name and not name.startswith("."):
                with contextlib.suppress(OSError):  # gone: the model is told so
                    data = (folder / name).read_bytes()
            return Image.from_ref(ref, data)

        return load

    def save(self, conversation: Conversation, changed: AbstractSet[str] | None = None) -> None:
        """Save the conversation; on failure the last saved version stays.

        `changed` names the items changed since the last save (None: any may
        have, as at a run's end); only they and new items are written, so a
        save during a run costs what changed, not the whole conversation.
        """
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            if not self._swept:
                self._swept = True
                _remove_orphaned_temporaries(self.directory)
            if not self._append(conversation, changed):
                self._rewrite(conversation)
        except OSError as e:
            self._written.pop(conversation.id, None)  # the next save rewrites it whole
            raise StoreError(
                f"Could not save conversation {conversation.id} in {self.directory}: "
                f"{e.strerror or e} — free some space or fix the folder's permissions; "
                "the last saved version is intact."
            ) from e

    def _append(self, conversation: Conversation, changed: AbstractSet[str] | None) -> bool:
        """Append what changed; False when the log is to be rewritten whole instead."""
        written = self._written.get(conversation.id)
        if written is None:
            return False
        records: builtins.list[bytes] = []
        known, count = written.items, written.count
        if len(conversation.rewound) != written.rewound:
            rewind = self._rewind(conversation, written)
            if rewind is None:
                return False
            records.append(rewind)
            count = conversation.rewound[-1].at
            gone = {item.id for item in conversation.rewound[-1].items}
            known = {i: entry for i, entry in known.items() if i not in gone}
        items = conversation.items
        if len(items) < count or (count and _position_in(known, items[count - 1].id) != count - 1):
            return False  # items were inserted or removed: the positions no longer hold
        if changed is None:
            positions: builtins.list[int] = list(range(count))
        else:
            positions = [known[i][0] for i in changed if i in known]
        fresh: dict[str, tuple[int, Fingerprint, int]] = {}
        live = written.live + sum(map(len, records))  # a rewind's items stay, as history
        for position in [*positions, *range(count, len(items))]:
            item = items[position]
            before = known.get(item.id)
            if before is not None and before[0] != position:
                return False  # an item moved
            mark = fingerprint(item)
            if before is not None and before[1] == mark:
                continue
            self._keep_images(conversation.id, item)
            record = item_record(item, position)
            records.append(record)
            fresh[item.id] = (position, mark, len(record))
            live += len(record) - (before[2] if before is not None else 0)
        header = header_record(conversation)
        records.append(header)
        live += len(header) - written.header
        data = b"".join(records)
        if written.mark.size + len(data) > COMPACT_RATIO * live:
            return False
        now = append(self.path(conversation.id), data, written.mark)
        if now is None:
            return False  # another process wrote it since: rewritten, the last writer wins
        known.update(fresh)
        written.items, written.rewound = known, len(conversation.rewound)
        written.mark, written.count, written.live, written.header = (
            now, len(items), live, len(header)
        )  # fmt: skip
        return True

    @staticmethod
    def _rewind(conversation: Conversation, written: _Written) -> bytes | None:
        """The record of the one rewind since the last save, when the log holds exactly the
        items it took out, unchanged, at its end; None: the log is to be rewritten."""
        if len(conversation.rewound) != written.rewound + 1:
            return None
        rewound = conversation.rewound[-1]
        if rewound.at + len(rewound.items) != written.count:
            return None
        for position, item in enumerate(rewound.items, rewound.at):
            entry = written.items.get(item.id)
            if entry is None or entry[0] != position or entry[1] != fingerprint(item):
                return None
        return rewind_record(rewound)

    def _rewrite(self, conversation: Conversation) -> None:
        items: dict[str, tuple[int, Fingerprint, int]] = {}
        records = [rewound_record(rewound) for rewound in conversation.rewound]
        for position, item in enumerate(conversation.items):
            self._keep_images(conversation.id, item)
            record = item_record(item, position)
            records.append(record)
            items[item.id] = (position, fingerprint(item), len(record))
        header = header_record(conversation)
        records.append(header)
        data = b"".join(records)
        path = self.path(conversation.id)
        mark = FileMark.of(write_atomically(path, data))
        with contextlib.suppress(FileNotFoundError):  # stored whole before: converted now
            path.with_suffix(WHOLE_SUFFIX).unlink()
        count, rewound = len(conversation.items), len(conversation.rewound)
        self._written[conversation.id] = _Written(
            mark, items, count, len(data), len(header), rewound
        )

    def load(self, conversation_id: str) -> Conversation:
        """Load by id (or a unique prefix); a run that died mid-way reads idle with a notice."""
        path = self._find(conversation_id)
        data = read_stored(path)
        try:
            conversation = Conversation.from_json(data, self._image_loader(path.stem))
        except (ValueError, KeyError, TypeError) as e:
            raise _unreadable(path, e) from e
        if conversation.state == "running" and running_elsewhere(conversation) is None:
            conversation.mark_idle()
            conversation.items.append(NoticeItem(RECOVERED_NOTICE, "warn"))
        return conversation

    def list(self, workspace: str | None = None) -> builtins.list[Summary]:
        """Summaries, most recently updated first; unreadable files are skipped.

        A log is read from its end (its last header), not whole.
        """
        summaries = []
        for path in self._files_newest_first():
            try:
                summary = _summary(path)
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if workspace is None or summary.workspace == workspace:
                summaries.append(summary)
        summaries.sort(key=lambda s: s.updated, reverse=True)
        return summaries

    def last(self, workspace: str) -> Conversation | None:
        """The most recently updated conversation of this workspace, if any."""
        summaries = self.list(workspace)
        return self.load(summaries[0].id) if summaries else None

    def fork(self, conversation: Conversation) -> Conversation:
        """Save a copy of the conversation under a new id, and return it.

        The copy is independent: its own log, its own copy of the attached files. It is
        idle (a copy of a running conversation is its last save), and an external
        agent's session is not shared: that agent starts afresh in the copy.
        """
        copy = Conversation.from_json(conversation.to_json(), _same_images(conversation))
        copy.id = new_conversation_id()
        while self._exists(copy.id):  # two forks in the same second
            copy.id = new_conversation_id()
        copy.created = copy.updated = time.time()
        copy.agent_session = ""
        copy.mark_idle()
        media = self.media(conversation.id)
        try:
            if media.is_dir():
                shutil.copytree(media, self.media(copy.id))
        except OSError as e:
            raise StoreError(
                f"Could not copy the attached files of conversation {conversation.id} "
                f"({e.strerror or e}) — free some space or fix the folder's permissions."
            ) from e
        self.save(copy)
        return copy

    def _exists(self, conversation_id: str) -> bool:
        return any(
            (self.directory / f"{conversation_id}{suffix}").exists()
            for suffix in (SUFFIX, WHOLE_SUFFIX)
        )

    def remove(self, conversation_id: str) -> None:
        path = self._find(conversation_id)
        self._written.pop(path.stem, None)
        path.unlink()
        with contextlib.suppress(FileNotFoundError):  # stored whole, then converted
            path.with_suffix(WHOLE_SUFFIX).unlink()
        shutil.rmtree(self.media(path.stem), ignore_errors=True)

    def find(self, conversation_id: str) -> Path:
        """The file of a conversation, by id or a unique prefix (without reading it)."""
        return self._find(conversation_id)

    def _find(self, conversation_id: str) -> Path:
        if not conversation_id or "/" in conversation_id or conversation_id.startswith("."):
            raise NoSuchConversation(
                f"{conversation_id!r} is not a conversation id — see `agent sessions`."
            )
        for suffix in (SUFFIX, WHOLE_SUFFIX):
            exact = self.directory / f"{conversation_id}{suffix}"
            if exact.exists():
                return exact
        matches = _one_per_conversation(self.directory.glob(f"{conversation_id}*.json*"))
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
        files = _one_per_conversation(self.directory.iterdir())
        return sorted(files, key=_mtime, reverse=True)


def _position_in(known: dict[str, tuple[int, Fingerprint, int]], item_id: str) -> int:
    entry = known.get(item_id)
    return -1 if entry is None else entry[0]


def _same_images(conversation: Conversation) -> Callable[[dict[str, Any]], Image]:
    """A copy's images: the very ones the conversation holds, bytes and all."""
    everything = [*conversation.items, *(i for r in conversation.rewound for i in r.items)]
    held = {
        image.file: image
        for item in everything
        if isinstance(item, UserItem | ToolItem)
        for image in item.images
    }
    return lambda ref: held.get(str(ref.get("file", ""))) or Image.from_ref(ref, b"")


def read_stored(path: Path) -> dict[str, Any]:
    """A stored conversation in its JSON form (`Conversation.to_json`), as saved: a log
    as its last complete save left it, or a conversation stored whole."""
    try:
        data = path.read_bytes()
        if path.suffix == WHOLE_SUFFIX:
            stored: dict[str, Any] = json.loads(data)
            return stored
        return read_log(data)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise _unreadable(path, e) from e


def _unreadable(path: Path, e: Exception) -> StoreError:
    return StoreError(
        f"Conversation file {path} could not be read ({e}) — "
        "remove it with `agent sessions rm` or restore it from a backup."
    )


def _summary(path: Path) -> Summary:
    if path.suffix == WHOLE_SUFFIX:
        data = json.loads(path.read_bytes())
        count = len(data.get("items", []))
    else:
        data = last_header(path)
        count = data["items"]
    return Summary(
        id=data.get("id", path.stem),
        title=data.get("title", ""),
        workspace=data.get("workspace", ""),
        agent=data.get("agent", "builtin"),
        items=count,
        updated=data.get("updated", 0.0),
    )


def _one_per_conversation(paths: Iterable[Path]) -> builtins.list[Path]:
    """Conversation files, a log before the whole file it was converted from."""
    found: dict[str, Path] = {}
    for path in paths:
        if path.name.startswith(".") or path.suffix not in (SUFFIX, WHOLE_SUFFIX):
            continue
        if path.suffix == SUFFIX or path.stem not in found:
            found[path.stem] = path
    return sorted(found.values())


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _remove_orphaned_temporaries(directory: Path) -> None:
    """Remove the temporary files of writers that died mid-write (a kill, a crash).

    A file whose writer still runs (or may: another user's, or a pid reused) is left.
    """
    for path in directory.glob(f".*{WHOLE_SUFFIX}*{TEMP_SUFFIX}"):
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
