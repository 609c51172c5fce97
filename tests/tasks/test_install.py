"""The timer's files and systemctl calls, with a fake `systemctl` first on PATH."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_cli.errors import AgentError
from agent_cli.tasks import install

COMMAND = ("/opt/my tools/agent",)


def fake_systemctl(folder: Path, user_manager: bool = True, failing: str = "") -> Path:
    """A `systemctl` that logs its arguments; `--user` reaches a manager only if asked to."""
    folder.mkdir(exist_ok=True)
    log = folder / "systemctl.log"
    script = folder / "systemctl"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{log}"\n'
        f'case "$*" in *show-environment*) exit {0 if user_manager else 1};; esac\n'
        + (
            f'case "$*" in *{failing}*) echo "Failed to {failing}: denied" >&2; exit 1;; esac\n'
            if failing
            else ""
        )
        + "exit 0\n"
    )
    script.chmod(0o755)
    return log


@pytest.fixture
def units(tmp_path: Path) -> Path:
    return tmp_path / "config" / "systemd" / "user"


def test_with_a_user_manager_it_writes_a_service_and_a_timer_and_enables_it(
    tmp_path: Path, units: Path, monkeypatch: pytest.MonkeyPatch
):
    log = fake_systemctl(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")

    plan = install.plan(COMMAND, units, tmp_path / "tasks.log")
    assert not (units / "agent-tasks.service").exists(), "planning wrote something"
    install.apply(plan)

    service = (units / "agent-tasks.service").read_text()
    assert 'ExecStart="/opt/my tools/agent" tasks run-due\n' in service
    assert "Type=oneshot" in service
    timer = (units / "agent-tasks.timer").read_text()
    assert "OnCalendar=minutely" in timer and "WantedBy=timers.target" in timer
    assert log.read_text().splitlines() == [
        "--user show-environment",
        "--user daemon-reload",
        "--user enable --now agent-tasks.timer",
    ]


@pytest.mark.parametrize("systemctl", ["missing", "no user manager"])
def test_without_systemd_it_gives_a_crontab_line_and_writes_nothing(
    tmp_path: Path, units: Path, monkeypatch: pytest.MonkeyPatch, systemctl: str
):
    if systemctl == "no user manager":
        fake_systemctl(tmp_path / "bin", user_manager=False)
    else:
        (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))

    plan = install.plan(("/usr/bin/agent",), units, tmp_path / "logs" / "tasks.log")

    assert plan.files == () and plan.systemctl == ()
    assert plan.crontab_line == (
        f"* * * * * /usr/bin/agent tasks run-due >> {tmp_path / 'logs' / 'tasks.log'} 2>&1"
    )


def test_a_crontab_line_quotes_for_the_shell_and_escapes_percent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    line = install.plan(COMMAND, tmp_path, Path("/var/log/a%b.log")).crontab_line
    assert line.endswith("'/opt/my tools/agent' tasks run-due >> /var/log/a\\%b.log 2>&1")


def test_a_failing_systemctl_is_one_sentence_after_the_files_are_written(
    tmp_path: Path, units: Path, monkeypatch: pytest.MonkeyPatch
):
    fake_systemctl(tmp_path / "bin", failing="enable")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    plan = install.plan(COMMAND, units, tmp_path / "tasks.log")
    with pytest.raises(AgentError, match="Failed to enable: denied") as raised:
        install.apply(plan)
    assert "the files are written" in str(raised.value)
    assert (units / "agent-tasks.timer").is_file()


def test_percent_signs_are_doubled_for_systemd(
    tmp_path: Path, units: Path, monkeypatch: pytest.MonkeyPatch
):
    fake_systemctl(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    install.apply(install.plan(("/home/a%b/agent",), units, tmp_path / "tasks.log"))
    service = (units / "agent-tasks.service").read_text()
    assert "ExecStart=/home/a%%b/agent tasks run-due\n" in service
