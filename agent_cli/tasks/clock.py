"""Local time for schedules: wall-clock times to instants and back, with a clock tests set.

Schedules are written in local wall-clock time ("daily 09:00") but compared as
instants in UTC. Comparing or adding aware datetimes that share one `tzinfo`
is done by Python on the wall clock (a DST change would go unseen), so every
sum and comparison here is on UTC instants, and a wall time is turned into an
instant only for one given day, with that day's offset.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Clock:
    """The time now and the local time zone; both replaceable in tests."""

    zone: tzinfo | None = None  # None: the system's own local time, with its DST rules
    now_utc: Callable[[], datetime] = field(default=_utc_now)

    def now(self) -> datetime:
        """Now, as an aware UTC instant."""
        return self.now_utc().astimezone(UTC)

    def instant(self, wall: datetime) -> datetime:
        """A naive local wall-clock time as an aware UTC instant.

        A time a DST change skips (02:30 on a spring-forward night) becomes the
        instant that many minutes after the change; a time it repeats, the
        first of the two.
        """
        if self.zone is None:
            return wall.astimezone(UTC)  # Python reads a naive time as the system's local time
        return wall.replace(tzinfo=self.zone).astimezone(UTC)

    def wall(self, instant: datetime) -> datetime:
        """An instant as naive local wall-clock time."""
        return self.local(instant).replace(tzinfo=None)

    def local(self, instant: datetime) -> datetime:
        """An instant as aware local time (its offset the one in force then)."""
        return instant.astimezone(self.zone) if self.zone else instant.astimezone()

    def iso(self, instant: datetime) -> str:
        """ISO 8601 in local time with its offset, to the second: what the task file keeps."""
        return self.local(instant).isoformat(timespec="seconds")

    def show(self, instant: datetime) -> str:
        """A local time as a person reads it in a listing: "2025-06-02 09:00"."""
        return f"{self.wall(instant):%Y-%m-%d %H:%M}"


def parse_instant(text: str) -> datetime:
    """An ISO 8601 time with its offset (as the task file keeps it) as an aware UTC instant."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no UTC offset")
    return moment.astimezone(UTC)
