"""Scheduled tasks: a prompt that runs as a conversation on a schedule (issue #9).

- `schedule`: once, daily, weekly, every N minutes, in local time (`clock`)
- `model`, `store`: the tasks and their file, changed under a lock
- `scheduler`: claiming what is due so it runs once, recording how it went
- `install`: the systemd user timer (or crontab line) that calls `run-due`
- `listing`: tasks as lines for `agent tasks list` and the TUI's `/tasks`

One run of a task (a headless `agent run`) is `agent_cli.commands.task_runner`'s.

Importing this package imports none of its modules: `summary_lines` reads the
task file only when called.
"""

from __future__ import annotations

__all__ = ["summary_lines"]


def summary_lines() -> list[str]:
    """One line per task for the TUI's `/tasks`: name, schedule, next run, last outcome.

    No tasks: no lines. A task file that cannot be read: one line saying so
    and what to do, so the caller can show whatever comes back.
    """
    from agent_cli import paths
    from agent_cli.errors import StoreError
    from agent_cli.tasks.clock import Clock
    from agent_cli.tasks.listing import summary_line
    from agent_cli.tasks.store import TaskStore

    clock = Clock()
    try:
        tasks = TaskStore(paths.tasks_file()).load()
    except StoreError as e:
        return [str(e)]
    return [summary_line(task, clock) for task in tasks]
