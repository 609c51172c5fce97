"""What is due, claimed once, and recorded: missed runs, `once`, dead claims, the task file."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from dataclasses import replace

import pytest

from agent_cli.errors import StoreError, UsageError
from agent_cli.tasks.model import Task
from agent_cli.tasks.schedule import parse
from agent_cli.tasks.scheduler import (
    DIED,
    Outcome,
    claim,
    claim_next_due,
    finish,
    settle,
)
from agent_cli.tasks.store import TaskStore, find
from tests.tasks.conftest import HandClock


def added(store: TaskStore, hand: HandClock, task_id: str = "t1", **flags: str) -> Task:
    task = Task(
        id=task_id,
        name=f"task {task_id}",
        prompt="do it",
        schedule=parse(hand.clock, **flags),
        workspace="/tmp",
        created=hand.clock.iso(hand.clock.now()),
    )
    with store.editing() as tasks:
        tasks.append(task)
    return task


def stored(store: TaskStore, task_id: str = "t1") -> Task:
    tasks = store.load()
    return tasks[find(tasks, task_id)]


def answered(store: TaskStore, task: Task) -> Task | None:
    return finish(store, task, Outcome("answered", conversation="c1"))


def test_nothing_is_due_before_its_time(store: TaskStore, hand: HandClock):
    added(store, hand, daily="09:00")
    hand.set("2025-06-02T08:59")
    assert claim_next_due(store, hand.clock) is None
    hand.set("2025-06-02T09:00")
    assert claim_next_due(store, hand.clock) is not None


def test_a_run_missed_for_days_runs_once_and_the_schedule_goes_on_from_it(
    store: TaskStore, hand: HandClock
):
    added(store, hand, daily="09:00")
    hand.set("2025-06-05T12:00")  # Thursday: Monday's, Tuesday's, ... 09:00 all passed
    claimed = claim_next_due(store, hand.clock)
    assert claimed is not None and claimed.running == os.getpid()
    assert claim_next_due(store, hand.clock) is None, "a claimed task was claimed again"
    answered(store, claimed)
    assert claim_next_due(store, hand.clock) is None, "one run per missed slot"
    task = stored(store)
    assert task.last_run is not None and task.last_run.at == "2025-06-05T12:00:00+02:00"
    assert hand.clock.show(task.next_run(hand.clock)) == "2025-06-06 09:00"


def test_a_claim_is_recorded_to_the_minute_so_every_does_not_drift(
    store: TaskStore, hand: HandClock
):
    added(store, hand, every="30m")
    hand.set("2025-06-02T08:30:40")
    answered(store, claim_next_due(store, hand.clock))
    hand.set("2025-06-02T09:00:00")
    assert claim_next_due(store, hand.clock) is not None


def test_a_once_task_switches_itself_off_after_its_run(store: TaskStore, hand: HandClock):
    added(store, hand, once="2025-06-02T10:00")
    hand.set("2025-06-02T10:00")
    claimed = claim_next_due(store, hand.clock)
    assert claimed is not None
    assert stored(store).enabled, "it switched off before it ran"
    answered(store, claimed)
    task = stored(store)
    assert not task.enabled and task.next_run(hand.clock) is None
    hand.set("2025-06-03T10:00")
    assert claim_next_due(store, hand.clock) is None


def test_a_switched_off_task_is_never_claimed_by_schedule(store: TaskStore, hand: HandClock):
    task = added(store, hand, every="5m")
    with store.editing() as tasks:
        tasks[0] = replace(task, enabled=False)
    hand.set("2025-06-03T08:00")
    assert claim_next_due(store, hand.clock) is None
    assert claim(store, "t1", hand.clock).running, "run by hand, it still runs"


def test_a_task_running_now_cannot_be_run_again(store: TaskStore, hand: HandClock):
    added(store, hand, daily="09:00")
    claim(store, "t1", hand.clock)
    with pytest.raises(UsageError, match="is running now"):
        claim(store, "task t1", hand.clock)


def test_a_claim_whose_process_died_becomes_an_error_and_is_not_rerun(
    store: TaskStore, hand: HandClock
):
    added(store, hand, daily="09:00")
    hand.set("2025-06-02T09:00")
    claimed = claim_next_due(store, hand.clock)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    with store.editing() as tasks:
        tasks[0] = replace(claimed, running=int(dead.stdout))
    hand.set("2025-06-02T09:05")
    assert claim_next_due(store, hand.clock) is None, "the 09:00 run started already"
    task = stored(store)
    assert task.running == 0 and task.last_run is not None
    assert (task.last_run.stopped_reason, task.last_run.error) == ("error", DIED)
    assert settle(task) == task


def test_concurrent_claims_never_claim_the_same_task_twice(store: TaskStore, hand: HandClock):
    for number in range(5):
        added(store, hand, f"t{number}", every="5m")
    hand.set("2025-06-02T09:00")
    claimed: list[str] = []

    def claim_all() -> None:
        while (task := claim_next_due(store, hand.clock)) is not None:
            claimed.append(task.id)

    threads = [threading.Thread(target=claim_all) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(claimed) == [f"t{n}" for n in range(5)]


def test_a_finished_run_of_a_removed_task_is_dropped(store: TaskStore, hand: HandClock):
    added(store, hand, daily="09:00")
    task = claim(store, "t1", hand.clock)
    with store.editing() as tasks:
        tasks.clear()
    assert answered(store, task) is None
    assert store.load() == []


def test_ids_are_found_by_prefix_and_names_exactly(store: TaskStore, hand: HandClock):
    added(store, hand, "abc123", daily="09:00")
    added(store, hand, "abd456", daily="09:00")
    tasks = store.load()
    assert find(tasks, "abc") == 0 and find(tasks, "task abd456") == 1
    with pytest.raises(UsageError, match="matches 2 tasks"):
        find(tasks, "ab")
    with pytest.raises(UsageError, match="There is no task 'zz'"):
        find(tasks, "zz")


def test_a_damaged_task_file_is_one_clear_error(store: TaskStore):
    store.file.parent.mkdir(parents=True, exist_ok=True)
    store.file.write_text('{"tasks": [{"id": 1}]}')
    with pytest.raises(StoreError, match=r"could not be read .* move it away"):
        store.load()
