"""The timer that calls `agent tasks run-due`: a systemd user timer, or else a crontab line.

`plan` only works out what would be done (so the command can show it and
ask first); `apply` writes the unit files and asks `systemctl --user` to load
and start the timer. `systemctl` is whichever one is first on PATH, so tests
put a fake there and never touch the person's real timers.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from agent_cli.errors import AgentError

UNIT = "agent-tasks"
CALENDAR = "minutely"  # how often run-due looks; what runs, and when, is the schedule's
SYSTEMCTL_TIMEOUT = 30  # seconds for one `systemctl --user` call


@dataclass(frozen=True)
class Plan:
    """What `install` will do: unit files and systemctl calls, or a line for the crontab."""

    command: tuple[str, ...]  # how the timer calls run-due
    files: tuple[tuple[Path, str], ...] = ()
    systemctl: tuple[tuple[str, ...], ...] = ()
    crontab_line: str = ""  # set when there is no systemd user manager to talk to


def plan(command: tuple[str, ...], units: Path, log: Path) -> Plan:
    """The systemd files under `units` when a user manager answers; else the crontab line."""
    if _systemd_available():
        return Plan(
            command=command,
            files=(
                (units / f"{UNIT}.service", _service(command)),
                (units / f"{UNIT}.timer", _timer()),
            ),
            systemctl=(
                ("systemctl", "--user", "daemon-reload"),
                ("systemctl", "--user", "enable", "--now", f"{UNIT}.timer"),
            ),
        )
    words = " ".join(shlex.quote(word) for word in [*command, "tasks", "run-due"])
    line = f"* * * * * {words} >> {shlex.quote(str(log))} 2>&1"
    return Plan(command=command, crontab_line=line.replace("%", "\\%"))  # % ends a cron command


def apply(chosen: Plan) -> None:
    """Write the unit files and enable the timer; an AgentError saying what failed."""
    for path, text in chosen.files:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as e:
            raise AgentError(
                f"Could not write {path}: {e.strerror or e} — fix the folder's permissions."
            ) from e
    for call in chosen.systemctl:
        done = _systemctl(call[1:])
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            raise AgentError(
                f"`{' '.join(call)}` failed ({said[-1] if said else f'exit {done.returncode}'}) "
                "— the files are written; run it yourself once systemd answers."
            )


def agent_command() -> tuple[str, ...]:
    """This very `agent`, by absolute path: a timer runs with a bare PATH."""
    script = Path(sys.argv[0])
    if script.name == "agent" and script.is_file():
        return (str(script.absolute()),)
    return (sys.executable, "-m", "agent_cli")  # run as `python -m agent_cli`


def _systemd_available() -> bool:
    """True when `systemctl --user` reaches a running user manager."""
    if shutil.which("systemctl") is None:
        return False
    try:
        return _systemctl(("--user", "show-environment")).returncode == 0
    except AgentError:
        return False


def _systemctl(arguments: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    program = shutil.which("systemctl") or "systemctl"
    try:
        return subprocess.run(
            [program, *arguments],
            capture_output=True,
            text=True,
            timeout=SYSTEMCTL_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise AgentError(f"Could not run systemctl ({e}) — set the timer up yourself.") from e


def _service(command: tuple[str, ...]) -> str:
    exec_start = " ".join(_unit_word(word) for word in [*command, "tasks", "run-due"])
    return (
        "[Unit]\n"
        "Description=agent: run the scheduled tasks that are due\n"
        "\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"ExecStart={exec_start}\n"
    )


def _timer() -> str:
    return (
        "[Unit]\n"
        "Description=agent: look for due scheduled tasks every minute\n"
        "\n"
        "[Timer]\n"
        f"OnCalendar={CALENDAR}\n"
        "AccuracySec=1s\n"  # the default, a minute, would let a task start late by one
        "Persistent=true\n"
        "\n"
        "[Install]\n"
        "WantedBy=timers.target\n"
    )


def _unit_word(word: str) -> str:
    """A word as systemd's ExecStart reads it: % doubled, quoted when it has a space."""
    word = word.replace("%", "%%")
    if any(c.isspace() for c in word) or '"' in word or "\\" in word:
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return word
