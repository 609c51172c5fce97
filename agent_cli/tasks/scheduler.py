"""Which task runs now, claimed so no other process runs it too, and what became of it.

A run is claimed under the task file's lock: the task is marked running (with
this process's id) and its last run set to this minute, which is what makes it
not due any more. So a second `run-due`, at the same time or just after, finds
nothing to run. A claim whose process has died is settled as an error, and the
schedule goes on from it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace

from agent_cli.errors import AgentError, UsageError
from agent_cli.tasks.clock import Clock
from agent_cli.tasks.model import LastRun, Task
from agent_cli.tasks.store import TaskStore, find

INTERRUPTED = 130  # the exit code of a run stopped with Ctrl-C
DIED = "The run ended early: the process running it stopped."


@dataclass(frozen=True)
class Outcome:
    """How one run of a task ended."""

    stopped_reason: str  # a StopReason value
    conversation: str = ""  # "" when the run could not start
    error: str = ""
    refused: int = 0
    exit_code: int = 0


Runner = Callable[[Task], Outcome]


def settle(task: Task) -> Task:
    """The task with a claim whose process is gone turned into an error outcome."""
    if not task.running or _alive(task.running):
        return task
    last = task.last_run or LastRun(at=task.created)
    return replace(task, running=0, last_run=replace(last, stopped_reason="error", error=DIED))


def claim_next_due(
    store: TaskStore, clock: Clock, skip: frozenset[str] = frozenset()
) -> Task | None:
    """Claim the first task that is due now (not one in `skip`); None when none is."""
    with store.editing() as tasks:
        tasks[:] = [settle(task) for task in tasks]
        for index, task in enumerate(tasks):
            if task.id not in skip and task.is_due(clock):
                tasks[index] = _claimed(task, clock)
                return tasks[index]
    return None


def claim(store: TaskStore, key: str, clock: Clock) -> Task:
    """Claim a task to run now, whatever its schedule; a UsageError while it runs."""
    with store.editing() as tasks:
        tasks[:] = [settle(task) for task in tasks]
        index = find(tasks, key)
        task = tasks[index]
        if task.running:
            raise UsageError(
                f"Task {task.name} ({task.id}) is running now (process {task.running}) — "
                "wait for it to finish."
            )
        tasks[index] = _claimed(task, clock)
        return tasks[index]


def finish(store: TaskStore, task: Task, outcome: Outcome) -> Task | None:
    """Record how a claimed run ended; a `once` task switches itself off. None if removed."""
    with store.editing() as tasks:
        try:
            index = next(i for i, t in enumerate(tasks) if t.id == task.id)
        except StopIteration:
            return None  # removed while it ran: nothing to record it on
        current = tasks[index]
        started = task.last_run.at if task.last_run else current.created
        tasks[index] = replace(
            current,
            running=0,
            enabled=current.enabled and current.schedule.kind != "once",
            last_run=LastRun(
                at=started,
                stopped_reason=outcome.stopped_reason,
                conversation=outcome.conversation,
                error=outcome.error,
                refused=outcome.refused,
            ),
        )
        return tasks[index]


def run_due(
    store: TaskStore,
    clock: Clock,
    runner: Runner,
    on_start: Callable[[Task], None] | None = None,
    on_end: Callable[[Task, Outcome], None] | None = None,
) -> list[tuple[Task, Outcome]]:
    """Run every task that is due, one claim at a time; stop after an interrupted one."""
    done: list[tuple[Task, Outcome]] = []
    while (task := claim_next_due(store, clock, frozenset(t.id for t, _ in done))) is not None:
        if on_start is not None:
            on_start(task)
        outcome = run_claimed(store, task, runner)
        if on_end is not None:
            on_end(task, outcome)
        done.append((task, outcome))
        if outcome.exit_code == INTERRUPTED:
            break
    return done


def run_claimed(store: TaskStore, task: Task, runner: Runner) -> Outcome:
    """Run a claimed task and record its outcome, whatever happens to the run."""
    try:
        outcome = runner(task)
    except AgentError as e:  # it could not start: no provider, no workspace, ...
        outcome = Outcome("error", error=str(e), exit_code=e.exit_code)
    except KeyboardInterrupt:
        finish(store, task, Outcome("stopped", exit_code=INTERRUPTED))
        raise
    except BaseException as e:
        finish(store, task, Outcome("error", error=f"The run failed unexpectedly: {e!r}"))
        raise
    finish(store, task, outcome)
    return outcome


def _claimed(task: Task, clock: Clock) -> Task:
    # To the minute, as timers fire: a run that started at 10:30:20 counts as 10:30, so
    # `--every 30m` is due again at the 11:00 tick rather than drifting a minute a run.
    minute = clock.now().replace(second=0, microsecond=0)
    return replace(task, running=os.getpid(), last_run=LastRun(at=clock.iso(minute)))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True
