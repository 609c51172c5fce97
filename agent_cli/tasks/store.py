"""The task file: one JSON file, written whole and renamed, changed only under a lock.

Every change is a read-modify-write under an exclusive `flock` on a lock file
beside it, so two `agent tasks` processes (two `run-due` started by a timer
and by hand, an `add` during a run) never lose each other's changes or claim
the same run. Reading alone takes no lock: a rename is atomic.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent_cli.durable import write_atomically
from agent_cli.errors import StoreError, UsageError
from agent_cli.tasks.model import Task

VERSION = 1


class TaskStore:
    def __init__(self, file: Path) -> None:
        self.file = file
        self.lock_file = file.with_name(file.name + ".lock")

    def load(self) -> list[Task]:
        """Every task, in the order they were added; none when there is no file yet."""
        try:
            raw = self.file.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as e:
            raise self._unreadable(e) from e
        try:
            return [Task.from_json(entry) for entry in json.loads(raw)["tasks"]]
        except (ValueError, KeyError, TypeError) as e:
            raise self._unreadable(e) from e

    @contextmanager
    def editing(self) -> Iterator[list[Task]]:
        """The tasks, as a list to change in place; written back (if changed) on leaving."""
        with self._locked():
            tasks = self.load()
            before = list(tasks)
            yield tasks
            if tasks != before:
                self._save(tasks)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            handle = self.lock_file.open("a")
        except OSError as e:
            raise self._unwritable(e) from e
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
            yield

    def _save(self, tasks: list[Task]) -> None:
        data = {"version": VERSION, "tasks": [task.to_json() for task in tasks]}
        text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
        try:
            write_atomically(self.file, text.encode("utf-8"))
        except OSError as e:
            raise self._unwritable(e) from e

    def _unreadable(self, e: Exception) -> StoreError:
        return StoreError(
            f"The task file {self.file} could not be read ({e}) — fix it, or move it away "
            "to start with no tasks."
        )

    def _unwritable(self, e: OSError) -> StoreError:
        return StoreError(
            f"Could not save the tasks in {self.file}: {e.strerror or e} — free some space or "
            "fix the folder's permissions; the last saved version is intact."
        )


def find(tasks: list[Task], key: str) -> int:
    """The index of the task with this id (or a unique start of it), or this exact name."""
    for index, task in enumerate(tasks):
        if task.id == key:
            return index
    matches = [i for i, task in enumerate(tasks) if key and task.id.startswith(key)]
    if not matches:
        matches = [i for i, task in enumerate(tasks) if task.name == key]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"There is no task {key!r} — `agent tasks list` shows their ids.")
    raise UsageError(f"{key!r} matches {len(matches)} tasks — give its id from `agent tasks list`.")
