"""When a task runs: once, daily, weekly or every N minutes, in local time.

Parsed from the command line's flags, kept in the task file as JSON, and asked
one question: the first time it is due strictly after a given instant. A task
is due when that time, counted from its last run, has come; however many times
passed while nothing ran, one run catches up and the count starts again from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any, Literal

from agent_cli.errors import UsageError
from agent_cli.tasks.clock import Clock, parse_instant

Kind = Literal["once", "daily", "weekly", "every"]

MINIMUM_EVERY_MINUTES = 5  # a shorter interval would run a model round-the-clock
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # index = date.weekday()
DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
ONCE_FORMAT = "%Y-%m-%dT%H:%M"

_CLOCK_TIME = re.compile(r"(\d{1,2}):(\d{2})")
_INTERVAL = re.compile(r"(\d+)\s*([mh])")


@dataclass(frozen=True)
class Schedule:
    kind: Kind
    at: str = ""  # once: ISO with offset; daily and weekly: local "HH:MM"
    weekdays: tuple[int, ...] = ()  # weekly: 0 = Monday .. 6 = Sunday
    every_minutes: int = 0  # every: the interval

    def next_after(self, after: datetime, clock: Clock) -> datetime | None:
        """The first time this schedule is due strictly after the instant `after` (UTC)."""
        if self.kind == "once":
            at = parse_instant(self.at)
            return at if at > after else None
        if self.kind == "every":
            return after + timedelta(minutes=self.every_minutes)
        days = range(8) if self.kind == "weekly" else range(2)
        start = clock.wall(after).date()
        for offset in days:
            day = start + timedelta(days=offset)
            if self.kind == "weekly" and day.weekday() not in self.weekdays:
                continue
            slot = self._on(day, clock)
            if slot > after:
                return slot
        return None  # not reached: one of the next eight days always matches

    def _on(self, day: date, clock: Clock) -> datetime:
        """The instant of this schedule's wall-clock time on `day` (that day's offset)."""
        hour, minute = (int(part) for part in self.at.split(":"))
        return clock.instant(datetime.combine(day, time(hour, minute)))

    def describe(self, clock: Clock) -> str:
        """As a person writes it: "daily 09:00", "weekly mon,thu 08:30", "every 2h"."""
        if self.kind == "once":
            return f"once {clock.show(parse_instant(self.at))}"
        if self.kind == "daily":
            return f"daily {self.at}"
        if self.kind == "weekly":
            return f"weekly {','.join(WEEKDAYS[d] for d in self.weekdays)} {self.at}"
        hours, minutes = divmod(self.every_minutes, 60)
        return f"every {hours}h" if hours and not minutes else f"every {self.every_minutes}m"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        if self.kind == "every":
            data["every_minutes"] = self.every_minutes
        else:
            data["at"] = self.at
        if self.kind == "weekly":
            data["weekdays"] = [WEEKDAYS[d] for d in self.weekdays]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Schedule:
        kind = data["kind"]
        if kind not in ("once", "daily", "weekly", "every"):
            raise ValueError(f"unknown schedule kind {kind!r}")
        schedule = cls(
            kind=kind,
            at=str(data.get("at", "")),
            weekdays=tuple(WEEKDAYS.index(day) for day in data.get("weekdays", [])),
            every_minutes=int(data.get("every_minutes", 0)),
        )
        if kind == "once":
            parse_instant(schedule.at)  # a bad time fails when the file is read, not later
        elif kind in ("daily", "weekly"):
            _clock_time(schedule.at, "at")
        return schedule


# -- the command line's flags ----------------------------------------------------------


def parse(
    clock: Clock,
    *,
    once: str | None = None,
    daily: str | None = None,
    weekly: str | None = None,
    every: str | None = None,
) -> Schedule:
    """The one schedule the flags give; a UsageError saying what to write otherwise."""
    given = [(flag, value) for flag, value in _flags(once, daily, weekly, every) if value]
    if len(given) != 1:
        raise UsageError(
            "Give exactly one schedule: --daily HH:MM, --weekly mon,thu@HH:MM, "
            "--every 30m (or 2h), or --once YYYY-MM-DDTHH:MM."
        )
    flag, value = given[0]
    value = value.strip()
    if flag == "--once":
        return _once(value, clock)
    if flag == "--daily":
        return Schedule("daily", at=_clock_time(value, flag))
    if flag == "--weekly":
        return _weekly(value)
    return _every(value)


def _flags(*values: str | None) -> list[tuple[str, str | None]]:
    return list(zip(("--once", "--daily", "--weekly", "--every"), values, strict=True))


def _clock_time(text: str, flag: str) -> str:
    """ "9:05" → "09:05"; anything that is not a time of day is a UsageError."""
    match = _CLOCK_TIME.fullmatch(text.strip())
    if match is None or int(match[1]) > 23 or int(match[2]) > 59:
        raise UsageError(
            f"{flag} takes a time of day as HH:MM (24-hour), like 09:00 — not {text!r}."
        )
    return f"{int(match[1]):02d}:{match[2]}"


def _once(text: str, clock: Clock) -> Schedule:
    try:
        wall = datetime.strptime(text, ONCE_FORMAT)
    except ValueError:
        raise UsageError(
            f"--once takes a local date and time as YYYY-MM-DDTHH:MM, like 2025-06-01T09:00 — "
            f"not {text!r}."
        ) from None
    at = clock.instant(wall)
    if at <= clock.now():
        raise UsageError(f"--once {text} has already passed — give a time still to come.")
    return Schedule("once", at=clock.iso(at))


def _weekly(text: str) -> Schedule:
    days_text, _, clock_text = text.partition("@")
    if not clock_text:
        raise UsageError(
            f"--weekly takes days and a time as DAYS@HH:MM, like mon,thu@08:30 — not {text!r}."
        )
    days: set[int] = set()
    for part in days_text.lower().split(","):
        first, _, last = part.strip().partition("-")
        start = _weekday(first)
        end = _weekday(last) if last else start
        span = (end - start) % 7  # mon-fri, and fri-mon across the week's end
        days.update((start + step) % 7 for step in range(span + 1))
    return Schedule("weekly", at=_clock_time(clock_text, "--weekly"), weekdays=tuple(sorted(days)))


def _weekday(name: str) -> int:
    """ "thu", "thur" and "thursday" name Thursday; "th" and "thux" nothing."""
    for index, full in enumerate(DAY_NAMES):
        if len(name) >= 3 and full.startswith(name):
            return index
    raise UsageError(
        f"--weekly: {name!r} is not a day — use mon, tue, wed, thu, fri, sat, sun "
        "(a list like mon,thu or a range like mon-fri)."
    )


def _every(text: str) -> Schedule:
    match = _INTERVAL.fullmatch(text.lower())
    if match is None:
        raise UsageError(f"--every takes minutes or hours, like 30m or 2h — not {text!r}.")
    minutes = int(match[1]) * (60 if match[2] == "h" else 1)
    if minutes < MINIMUM_EVERY_MINUTES:
        raise UsageError(
            f"--every {text} is too often: the shortest interval is {MINIMUM_EVERY_MINUTES}m."
        )
    return Schedule("every", every_minutes=minutes)
