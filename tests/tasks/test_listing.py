"""The TUI's `/tasks` lines and the listing's words for next runs and outcomes."""

from __future__ import annotations

from dataclasses import replace

from agent_cli.tasks import summary_lines
from agent_cli.tasks.clock import Clock, parse_instant
from agent_cli.tasks.listing import next_run_text, outcome_text
from agent_cli.tasks.model import LastRun, Task
from agent_cli.tasks.schedule import parse
from agent_cli.tasks.store import TaskStore
from tests.tasks.conftest import HandClock


def digest(hand: HandClock) -> Task:
    return Task(
        id="a1b2c3",
        name="digest",
        prompt="write the digest",
        schedule=parse(hand.clock, daily="09:00"),
        workspace="/tmp",
        created=hand.clock.iso(hand.clock.now()),
    )


def test_summary_lines_are_empty_without_tasks():
    assert summary_lines() == []


def test_summary_lines_give_name_schedule_next_run_and_last_outcome(store: TaskStore):
    clock = Clock()
    task = Task(
        id="a1b2c3",
        name="digest",
        prompt="write the digest",
        schedule=parse(clock, every="2h"),
        workspace="/tmp",
        created="2025-06-02T08:00:00+00:00",
        last_run=LastRun(
            at="2025-06-02T10:00:00+00:00", stopped_reason="answered", conversation="c1", refused=2
        ),
    )
    with store.editing() as tasks:
        tasks.append(task)
    [line] = summary_lines()
    last = clock.show(parse_instant("2025-06-02T10:00:00+00:00"))
    due = clock.show(parse_instant("2025-06-02T12:00:00+00:00"))
    assert line == f"digest · every 2h · next {due} (due) · last {last} answered, 2 refused"


def test_summary_lines_say_when_the_task_file_is_damaged(store: TaskStore):
    store.file.parent.mkdir(parents=True, exist_ok=True)
    store.file.write_text("not json")
    [line] = summary_lines()
    assert line.startswith(f"The task file {store.file} could not be read")


def test_next_run_words(hand: HandClock):
    task = digest(hand)
    assert next_run_text(task, hand.clock) == "2025-06-02 09:00"
    hand.set("2025-06-02T09:30")
    assert next_run_text(task, hand.clock) == "2025-06-02 09:00 (due)"
    assert next_run_text(replace(task, enabled=False), hand.clock) == "off"
    assert next_run_text(replace(task, running=1), hand.clock) == "running now"


def test_outcome_words(hand: HandClock):
    task = digest(hand)
    assert outcome_text(task, hand.clock) == "never run"
    at = "2025-06-02T09:00:00+02:00"
    running = replace(task, last_run=LastRun(at=at))
    assert outcome_text(running, hand.clock) == "running since 2025-06-02 09:00"
    failed = replace(task, last_run=LastRun(at, "error", "c9", "the model is gone"))
    assert outcome_text(failed, hand.clock) == (
        "2025-06-02 09:00 error: the model is gone (conversation c9)"
    )
