"""Every schedule kind, parsed from its flag and asked when it is next due, in Berlin time."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timedelta

import pytest

from agent_cli.errors import UsageError
from agent_cli.tasks.clock import parse_instant
from agent_cli.tasks.schedule import Schedule, parse
from tests.tasks.conftest import HandClock


def local(hand: HandClock, instant: datetime | None) -> str:
    """An instant as Berlin ISO with its offset, the way a person checks it."""
    assert instant is not None
    return hand.clock.local(instant).isoformat(timespec="minutes")


def at(hand: HandClock, wall: str) -> datetime:
    return hand.clock.instant(datetime.fromisoformat(wall))


def test_daily_is_due_today_before_its_time_and_tomorrow_after_it(hand: HandClock):
    daily = parse(hand.clock, daily="9:05")
    assert daily == Schedule("daily", at="09:05")
    assert local(hand, daily.next_after(at(hand, "2025-06-02T08:00"), hand.clock)) == (
        "2025-06-02T09:05+02:00"
    )
    assert local(hand, daily.next_after(at(hand, "2025-06-02T09:05"), hand.clock)) == (
        "2025-06-03T09:05+02:00"
    )


def test_daily_keeps_its_wall_clock_time_across_both_dst_changes(hand: HandClock):
    daily = parse(hand.clock, daily="09:00")
    spring = daily.next_after(at(hand, "2025-03-29T09:00"), hand.clock)
    assert local(hand, spring) == "2025-03-30T09:00+02:00"
    assert spring - at(hand, "2025-03-29T09:00") == timedelta(hours=23)
    autumn = daily.next_after(at(hand, "2025-10-25T09:00"), hand.clock)
    assert local(hand, autumn) == "2025-10-26T09:00+01:00"
    assert autumn - at(hand, "2025-10-25T09:00") == timedelta(hours=25)


def test_a_time_the_spring_change_skips_runs_just_after_it_once(hand: HandClock):
    daily = parse(hand.clock, daily="02:30")  # 02:00-03:00 does not exist on 2025-03-30
    first = daily.next_after(at(hand, "2025-03-29T02:30"), hand.clock)
    assert local(hand, first) == "2025-03-30T03:30+02:00"
    assert local(hand, daily.next_after(first, hand.clock)) == "2025-03-31T02:30+02:00"


def test_a_time_the_autumn_change_repeats_runs_once(hand: HandClock):
    daily = parse(hand.clock, daily="02:30")  # 02:00-03:00 happens twice on 2025-10-26
    first = daily.next_after(at(hand, "2025-10-25T02:30"), hand.clock)
    assert local(hand, first) == "2025-10-26T02:30+02:00"
    second = daily.next_after(first, hand.clock)
    assert local(hand, second) == "2025-10-27T02:30+01:00", "the repeated hour ran it twice"


def test_weekly_runs_on_its_days_only(hand: HandClock):
    weekly = parse(hand.clock, weekly="Mon,thursday@08:30")
    assert weekly == Schedule("weekly", at="08:30", weekdays=(0, 3))
    monday_after = weekly.next_after(at(hand, "2025-06-02T09:00"), hand.clock)
    assert local(hand, monday_after) == "2025-06-05T08:30+02:00"
    thursday_after = weekly.next_after(monday_after, hand.clock)
    assert local(hand, thursday_after) == "2025-06-09T08:30+02:00"
    assert weekly.describe(hand.clock) == "weekly mon,thu 08:30"


def test_weekly_ranges_wrap_around_the_week(hand: HandClock):
    assert parse(hand.clock, weekly="mon-fri@9:00").weekdays == (0, 1, 2, 3, 4)
    assert parse(hand.clock, weekly="fri-mon@9:00").weekdays == (0, 4, 5, 6)


def test_every_counts_real_minutes_even_across_a_dst_change(hand: HandClock):
    every = parse(hand.clock, every="2h")
    assert every == Schedule("every", every_minutes=120)
    assert every.describe(hand.clock) == "every 2h"
    before = at(hand, "2025-03-30T01:30")
    assert local(hand, every.next_after(before, hand.clock)) == "2025-03-30T04:30+02:00"
    assert parse(hand.clock, every="90m").describe(hand.clock) == "every 90m"


def test_once_is_due_at_its_time_and_never_after(hand: HandClock):
    once = parse(hand.clock, once="2025-06-03T07:15")
    assert once.at == "2025-06-03T07:15:00+02:00"
    assert once.describe(hand.clock) == "once 2025-06-03 07:15"
    due = once.next_after(at(hand, "2025-06-02T08:00"), hand.clock)
    assert local(hand, due) == "2025-06-03T07:15+02:00"
    assert once.next_after(due, hand.clock) is None


def test_a_schedule_survives_its_json_round_trip(hand: HandClock):
    for schedule in (
        parse(hand.clock, once="2025-12-24T18:00"),
        parse(hand.clock, daily="07:00"),
        parse(hand.clock, weekly="sat,sun@10:00"),
        parse(hand.clock, every="45m"),
    ):
        assert Schedule.from_json(schedule.to_json()) == schedule
    assert parse_instant(parse(hand.clock, once="2025-12-24T18:00").at).utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        ({"daily": "25:00"}, "--daily takes a time of day as HH:MM"),
        ({"daily": "9am"}, "--daily takes a time of day as HH:MM"),
        ({"weekly": "mon,thu"}, "--weekly takes days and a time as DAYS@HH:MM"),
        ({"weekly": "funday@09:00"}, "'funday' is not a day"),
        ({"weekly": "th@09:00"}, "'th' is not a day"),
        ({"every": "2m"}, "too often: the shortest interval is 5m"),
        ({"every": "0h"}, "too often"),
        ({"every": "half an hour"}, "--every takes minutes or hours"),
        ({"once": "2025-06-02 09:00"}, "--once takes a local date and time as YYYY-MM-DDTHH:MM"),
        ({"once": "2025-06-01T09:00"}, "has already passed"),
        ({}, "Give exactly one schedule"),
        ({"daily": "09:00", "every": "30m"}, "Give exactly one schedule"),
    ],
)
def test_bad_schedules_say_what_to_write(hand: HandClock, flags: dict[str, str], said: str):
    with pytest.raises(UsageError) as raised:
        parse(hand.clock, **flags)
    assert said in str(raised.value)
    assert raised.value.exit_code == 2


def test_the_systems_own_zone_is_read_with_its_dst_rules():
    """Without a zone given, local time is the system's (TZ here), DST included."""
    code = (
        "from datetime import datetime\n"
        "from agent_cli.tasks.clock import Clock\n"
        "from agent_cli.tasks.schedule import parse\n"
        "clock = Clock()\n"
        "after = clock.instant(datetime(2025, 3, 29, 9, 0))\n"
        "print(clock.iso(parse(clock, daily='09:00').next_after(after, clock)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "TZ": "Europe/Berlin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "2025-03-30T09:00:00+02:00"
