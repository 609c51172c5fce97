"""`agent tasks`: prompts that run as conversations on a schedule (issue #9).

Only Typer is imported here: `agent --help` registers every command, so the
task machinery is imported inside each command when it runs.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent_cli.commands.common import Mode, guarded, start_debug_log

if TYPE_CHECKING:
    from agent_cli.tasks.clock import Clock
    from agent_cli.tasks.model import Task
    from agent_cli.tasks.scheduler import Outcome
    from agent_cli.tasks.store import TaskStore

ID = Annotated[str, typer.Argument(help="The task's id (see `agent tasks list`), or its name.")]
DEBUG = Annotated[bool, typer.Option("--debug", help="Write a debug log; show tracebacks.")]
NAME_WORDS = 5  # a task named after its prompt gets this many words of it

READ_ONLY = Mode("read-only")  # a task's default (Mode is built from MODES, by value)


def register(app: typer.Typer) -> None:
    tasks = typer.Typer(
        name="tasks",
        help="Scheduled prompts: add, list, run, and the timer that runs what is due.\n\n"
        "A task is a prompt that runs as a new conversation in its workspace, in local "
        "time. Nobody is at the screen: a change it asks for is refused (and counted), "
        "unless the task was added with --mode full. Each run's conversation is kept, "
        "titled [task NAME], for `agent sessions show`. `agent tasks run-due` runs what "
        "is due; `agent tasks install` sets up the timer that calls it every minute.",
        epilog='Examples: agent tasks add "summarise yesterday\'s commits" --daily 09:00 · '
        "agent tasks list · agent tasks run 3fa2c1 · agent tasks install",
        no_args_is_help=True,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    tasks.command(
        "add",
        epilog='Examples: agent tasks add "check the CI logs" --every 2h · '
        'agent tasks add "update the changelog" --weekly mon,thu@08:30 --mode full · '
        'agent tasks add "review open TODOs" --once 2025-06-01T09:00 --workspace ~/src/app',
    )(add)
    tasks.command("list", epilog="Examples: agent tasks list · agent tasks list --json | jq")(
        list_tasks
    )
    tasks.command("rm", epilog="Examples: agent tasks rm 3fa2c1")(remove)
    tasks.command("enable", epilog="Examples: agent tasks enable 3fa2c1")(enable)
    tasks.command("disable", epilog="Examples: agent tasks disable 3fa2c1")(disable)
    tasks.command("run", epilog="Examples: agent tasks run 3fa2c1 · agent tasks run digest -q")(run)
    tasks.command("run-due", epilog="Examples: agent tasks run-due (from cron or a systemd timer)")(
        run_due
    )
    tasks.command("install", epilog="Examples: agent tasks install · agent tasks install --yes")(
        install
    )
    app.add_typer(tasks, name="tasks")


def add(
    prompt: Annotated[str, typer.Argument(help="What the agent is asked each time it runs.")],
    daily: Annotated[str | None, typer.Option(help="Every day at HH:MM.")] = None,
    weekly: Annotated[
        str | None, typer.Option(help="On these days at a time: mon,thu@08:30 or mon-fri@09:00.")
    ] = None,
    every: Annotated[
        str | None, typer.Option(help="Every N minutes or hours from the last run: 30m, 2h.")
    ] = None,
    once: Annotated[
        str | None, typer.Option(help="Once, at a local YYYY-MM-DDTHH:MM; then it switches off.")
    ] = None,
    mode: Annotated[
        Mode,
        typer.Option(
            help="ask, auto, read-only or full. Nobody can approve: ask refuses changes, "
            "auto runs only edits and sandboxed commands."
        ),
    ] = READ_ONLY,
    workspace: Annotated[
        Path | None, typer.Option(help="The folder it works in (default: this one).")
    ] = None,
    name: Annotated[
        str | None, typer.Option(help="A name to know it by (default: its prompt's first words).")
    ] = None,
) -> None:
    """Add a task: a prompt and when to run it (local time)."""

    def action() -> int:
        from dataclasses import replace

        from agent_cli.errors import UsageError
        from agent_cli.tasks import schedule
        from agent_cli.tasks.model import Task, new_task_id

        clock = _clock()
        when = schedule.parse(clock, once=once, daily=daily, weekly=weekly, every=every)
        if not prompt.strip():
            raise UsageError('Give the task a prompt: agent tasks add "what to do" --daily 09:00.')
        folder = _workspace(workspace)
        label = (name or " ".join(prompt.split()[:NAME_WORDS])).strip()
        created = clock.now().replace(second=0, microsecond=0)  # schedules count in minutes
        task = Task(
            id="",
            name=label,
            prompt=prompt.strip(),
            schedule=when,
            workspace=str(folder),
            created=clock.iso(created),
            mode=mode.value,
        )
        with _store().editing() as tasks:
            taken = {t.id for t in tasks}
            fresh = new_task_id()
            while fresh in taken:
                fresh = new_task_id()
            task = replace(task, id=fresh)
            tasks.append(task)
        print(
            f"Added task {task.id} ({task.name}): {when.describe(clock)}, {task.mode}, "
            f"in {task.workspace}. Next run: {_next(task, clock)}."
        )
        if not _timer_installed():
            print("Tasks run when `agent tasks run-due` is called: `agent tasks install` sets up")
            print("a timer that calls it every minute.")
        return 0

    raise typer.Exit(guarded(False, action))


def list_tasks(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON, for scripts.")] = False,
) -> None:
    """List the tasks: id, name, schedule, workspace, on/off, next run, last outcome."""

    def action() -> int:
        import json

        from agent_cli.tasks.listing import table
        from agent_cli.tasks.scheduler import settle

        clock = _clock()
        tasks = _store().load()
        if as_json:
            rows = [{**t.to_json(), "next_run": _next_iso(t, clock)} for t in map(settle, tasks)]
            print(json.dumps(rows, ensure_ascii=False, indent=2))
        elif not tasks:
            print('No tasks — add one with: agent tasks add "what to do" --daily 09:00')
        else:
            print("\n".join(line.rstrip() for line in table(tasks, clock)))
        return 0

    raise typer.Exit(guarded(False, action))


def remove(task_id: ID) -> None:
    """Remove a task (the conversations of its runs are kept)."""

    def action() -> int:
        from agent_cli.tasks.store import find

        with _store().editing() as tasks:
            task = tasks.pop(find(tasks, task_id))
        print(f"Removed task {task.id} ({task.name}); its conversations are kept.")
        return 0

    raise typer.Exit(guarded(False, action))


def enable(task_id: ID) -> None:
    """Switch a task on: it runs at its next scheduled time."""
    raise typer.Exit(guarded(False, lambda: _switch(task_id, True)))


def disable(task_id: ID) -> None:
    """Switch a task off: it keeps its schedule but does not run until enabled."""
    raise typer.Exit(guarded(False, lambda: _switch(task_id, False)))


def _switch(task_id: str, on: bool) -> int:
    from dataclasses import replace

    from agent_cli.tasks.store import find

    clock = _clock()
    with _store().editing() as tasks:
        index = find(tasks, task_id)
        tasks[index] = task = replace(tasks[index], enabled=on)
    if not on:
        print(f"Task {task.id} ({task.name}) is off (`agent tasks enable {task.id}` undoes it).")
    elif task.next_run(clock) is None:
        print(
            f"Task {task.id} ({task.name}) is on, but it has run and will not run again — "
            "`agent tasks run` runs it now, or add a new task with another time."
        )
    else:
        print(f"Task {task.id} ({task.name}) is on. Next run: {_next(task, clock)}.")
    return 0


def run(
    task_id: ID,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the answer.")] = False,
    debug: DEBUG = False,
) -> None:
    """Run a task now, in the foreground, printing its answer like `agent run`."""

    def action() -> int:
        from agent_cli.commands.task_runner import run_task
        from agent_cli.tasks.scheduler import claim, run_claimed

        if debug:
            start_debug_log()
        store = _store()
        task = claim(store, task_id, _clock())
        outcome = run_claimed(store, task, lambda t: run_task(t, quiet))
        _report(task, outcome)
        return outcome.exit_code

    raise typer.Exit(guarded(debug, action))


def run_due(debug: DEBUG = False) -> None:
    """Run every task that is due now (for cron or a systemd timer; quiet when none is)."""

    def action() -> int:
        from agent_cli.tasks import scheduler

        if debug:
            start_debug_log()

        def run_task(task: Task) -> Outcome:  # imported only when a task is due: cron calls often
            from agent_cli.commands.task_runner import run_task

            return run_task(task)

        def announce(task: Task) -> None:
            print(
                f"agent: running task {task.id} ({task.name}) in {task.workspace}", file=sys.stderr
            )

        done = scheduler.run_due(_store(), _clock(), run_task, announce, _report)
        codes = {outcome.exit_code for _, outcome in done}
        if scheduler.INTERRUPTED in codes:
            return scheduler.INTERRUPTED
        return 1 if codes - {0} else 0

    raise typer.Exit(guarded(debug, action))


def install(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask first.")] = False,
) -> None:
    """Set up the timer that runs due tasks: a systemd user timer, or a crontab line to add."""

    def action() -> int:
        from agent_cli import paths
        from agent_cli.errors import UsageError
        from agent_cli.tasks import install as installing

        log = paths.log_dir() / "tasks.log"
        chosen = installing.plan(installing.agent_command(), _units_dir(), log)
        if chosen.crontab_line:
            with contextlib.suppress(OSError):  # cron cannot append to a file in no folder
                log.parent.mkdir(parents=True, exist_ok=True)
            print("systemd --user is not available here; add this line to your crontab")
            print("(`crontab -e`) to run due tasks every minute:")
            print()
            print(f"  {chosen.crontab_line}")
            print()
            print("The timer runs without your shell's environment: configure the provider")
            print(f"in {paths.user_config_file()}, not with variables.")
            return 0
        print("This writes:")
        for path, text in chosen.files:
            print(f"\n  {path}\n")
            print("".join(f"    {line}\n" if line else "\n" for line in text.splitlines()), end="")
        print("\nand runs:\n")
        for call in chosen.systemctl:
            print(f"  {' '.join(call)}")
        print()
        if not yes:
            if sys.stdin is None or not sys.stdin.isatty():
                raise UsageError(
                    "Not installing the timer without a terminal to ask on — pass --yes."
                )
            if not typer.confirm("Write these files and start the timer?", default=False):
                print("Nothing written.")
                return 0
        installing.apply(chosen)
        print(f"The timer is on: `systemctl --user list-timers {installing.UNIT}.timer` shows it.")
        print("It runs without your shell's environment: configure the provider in")
        print(f"{paths.user_config_file()}, not with variables.")
        return 0

    raise typer.Exit(guarded(False, action))


# ------------------------------------------------------------------ shared


def _report(task: Task, outcome: Outcome) -> None:
    if not outcome.conversation:
        print(
            f"agent: task {task.name} ({task.id}) could not run: {outcome.error}", file=sys.stderr
        )
        return
    print(
        f"agent: task {task.name} ({task.id}): {outcome.stopped_reason}; its conversation is "
        f"{outcome.conversation} (`agent sessions show {outcome.conversation}`).",
        file=sys.stderr,
    )


def _store() -> TaskStore:
    from agent_cli import paths
    from agent_cli.tasks.store import TaskStore

    return TaskStore(paths.tasks_file())


def _clock() -> Clock:
    from agent_cli.tasks.clock import Clock

    return Clock()


def _next(task: Task, clock: Clock) -> str:
    from agent_cli.tasks.listing import next_run_text

    return next_run_text(task, clock)


def _next_iso(task: Task, clock: Clock) -> str | None:
    due = task.next_run(clock) if task.enabled else None
    return clock.iso(due) if due is not None else None


def _workspace(folder: Path | None) -> Path:
    from agent_cli.errors import UsageError

    chosen = folder if folder is not None else Path.cwd()
    try:
        resolved = chosen.expanduser().resolve(strict=True)
    except OSError:
        raise UsageError(
            f"The folder {chosen} does not exist — pass an existing folder to --workspace."
        ) from None
    if not resolved.is_dir():
        raise UsageError(f"{chosen} is not a folder — pass a folder to --workspace.")
    return resolved


def _units_dir() -> Path:
    """systemd's folder for a user's own units ($XDG_CONFIG_HOME/systemd/user)."""
    from platformdirs import user_config_dir

    return Path(user_config_dir()) / "systemd" / "user"


def _timer_installed() -> bool:
    from agent_cli.tasks.install import UNIT

    return (_units_dir() / f"{UNIT}.timer").is_file()
