"""Tasks as a person reads them: the `agent tasks list` table and the TUI's `/tasks` lines."""

from __future__ import annotations

from agent_cli.tasks.clock import Clock, parse_instant
from agent_cli.tasks.model import RUNNING, Task
from agent_cli.tasks.scheduler import settle

HEADER = ("ID", "NAME", "SCHEDULE", "WORKSPACE", "ON", "NEXT RUN", "LAST OUTCOME")


def next_run_text(task: Task, clock: Clock) -> str:
    if task.running:
        return "running now"
    if not task.enabled:
        return "off"
    due = task.next_run(clock)
    if due is None:
        return "never"
    if due <= clock.now():
        return f"{clock.show(due)} (due)"
    return clock.show(due)


def outcome_text(task: Task, clock: Clock, with_conversation: bool = True) -> str:
    last = task.last_run
    if last is None:
        return "never run"
    started = clock.show(parse_instant(last.at))
    if last.stopped_reason == RUNNING:
        return f"running since {started}"
    text = f"{started} {last.stopped_reason}"
    if last.refused:
        text += f", {last.refused} refused"
    if last.error:
        text += f": {last.error}"
    if with_conversation and last.conversation:
        text += f" (conversation {last.conversation})"
    return text


def table(tasks: list[Task], clock: Clock) -> list[str]:
    """The listing's lines, a header first; the last outcome, the longest, at each line's end."""
    rows = [
        (
            task.id,
            task.name,
            task.schedule.describe(clock),
            task.workspace,
            "yes" if task.enabled else "no",
            next_run_text(task, clock),
            outcome_text(task, clock),
        )
        for task in map(settle, tasks)
    ]
    widths = [max(len(row[i]) for row in [HEADER, *rows]) for i in range(len(HEADER) - 1)]
    return [
        "  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[-1]])
        for row in [HEADER, *rows]
    ]


def summary_line(task: Task, clock: Clock) -> str:
    task = settle(task)
    return " · ".join(
        (
            task.name,
            task.schedule.describe(clock),
            f"next {next_run_text(task, clock)}",
            f"last {outcome_text(task, clock, with_conversation=False)}",
        )
    )
