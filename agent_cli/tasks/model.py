"""A scheduled task and its last run, with their JSON round trip (made and read only here)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_cli.tasks.clock import Clock, parse_instant
from agent_cli.tasks.schedule import Schedule

RUNNING = "running"  # a LastRun's stopped_reason while it goes on
TITLE_PREFIX = "[task {name}]"  # how a task's conversation is marked (its title starts with it)
DEFAULT_MODE = "read-only"  # nobody is at the screen: changes only when the task says so


def new_task_id() -> str:
    return os.urandom(3).hex()


@dataclass(frozen=True)
class LastRun:
    """How the last run went: when it started, why it ended, and the conversation it left."""

    at: str  # ISO with offset, the minute it started
    stopped_reason: str = RUNNING  # a StopReason value ("answered", "error", ...), or "running"
    conversation: str = ""  # the stored conversation's id ("" when the run could not start)
    error: str = ""
    refused: int = 0  # changes answered "no" because nobody could be asked

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "stopped_reason": self.stopped_reason,
            "conversation": self.conversation,
            "error": self.error,
            "refused": self.refused,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LastRun:
        parse_instant(data["at"])
        return cls(
            at=data["at"],
            stopped_reason=str(data.get("stopped_reason", RUNNING)),
            conversation=str(data.get("conversation", "")),
            error=str(data.get("error", "")),
            refused=int(data.get("refused", 0)),
        )


@dataclass(frozen=True)
class Task:
    id: str
    name: str
    prompt: str
    schedule: Schedule
    workspace: str  # an absolute folder
    created: str  # ISO with offset
    mode: str = DEFAULT_MODE
    enabled: bool = True
    last_run: LastRun | None = None
    running: int = 0  # the process running it now, else 0

    def next_run(self, clock: Clock) -> datetime | None:
        """When it is due next (UTC; maybe already past), counted from its last run.

        None when it never runs again (a `once` task that ran). A switched-off
        task has a next time too: the one it would have.
        """
        since = self.last_run.at if self.last_run else self.created
        return self.schedule.next_after(parse_instant(since), clock)

    def is_due(self, clock: Clock) -> bool:
        if not self.enabled or self.running:
            return False
        due = self.next_run(clock)
        return due is not None and due <= clock.now()

    @property
    def title(self) -> str:
        return TITLE_PREFIX.format(name=self.name)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "prompt": self.prompt,
            "schedule": self.schedule.to_json(),
            "workspace": self.workspace,
            "mode": self.mode,
            "enabled": self.enabled,
            "created": self.created,
            "last_run": self.last_run.to_json() if self.last_run else None,
            "running": self.running,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Task:
        parse_instant(data["created"])
        last = data.get("last_run")
        return cls(
            id=str(data["id"]),
            name=str(data["name"]),
            prompt=str(data["prompt"]),
            schedule=Schedule.from_json(data["schedule"]),
            workspace=str(data["workspace"]),
            created=data["created"],
            mode=str(data.get("mode", DEFAULT_MODE)),
            enabled=bool(data.get("enabled", True)),
            last_run=LastRun.from_json(last) if last else None,
            running=int(data.get("running", 0)),
        )
