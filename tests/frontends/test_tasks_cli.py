"""`agent tasks` end to end: the real CLI (in this process; two tests in its own), with
its own XDG folders."""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from agent_cli import paths
from agent_cli.tasks.clock import Clock
from agent_cli.tasks.store import TaskStore
from tests.support.cli import agent, agent_process, err, out, saved
from tests.support.fake_openai import FakeOpenAI, text, tool_calls

HEADER = ["ID", "NAME", "SCHEDULE", "WORKSPACE", "ON", "NEXT RUN", "LAST OUTCOME"]


def added_id(result) -> str:
    assert result.returncode == 0, err(result)
    found = re.match(r"Added task ([0-9a-f]{6}) ", out(result))
    assert found, out(result)
    return found[1]


def listed(workspace: Path) -> list[dict]:
    result = agent(workspace, "tasks", "list", "--json")
    assert result.returncode == 0, err(result)
    return json.loads(out(result))


def make_due(task_id: str) -> None:
    """Move a task's start back an hour, so its schedule has come (and been missed)."""
    clock = Clock()
    store = TaskStore(paths.tasks_file())
    with store.editing() as tasks:
        for index, task in enumerate(tasks):
            if task.id == task_id:
                earlier = clock.now().replace(second=0, microsecond=0) - timedelta(hours=1)
                tasks[index] = replace(task, created=clock.iso(earlier))


def test_add_then_list_shows_every_column(workspace: Path):
    task_id = added_id(
        agent_process(
            workspace, "tasks", "add", "summarise the commits", "--daily", "9:00", "--name", "news"
        )
    )
    result = agent_process(workspace, "tasks", "list")
    assert result.returncode == 0, err(result)
    header, row = out(result).splitlines()
    assert header.split("  ")[0] == "ID" and [w for w in re.split(r"\s{2,}", header)] == HEADER
    cells = re.split(r"\s{2,}", row)
    assert cells[:5] == [task_id, "news", "daily 09:00", str(workspace), "yes"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d 09:00", cells[5])
    assert cells[6] == "never run"
    [task] = listed(workspace)
    assert task["schedule"] == {"kind": "daily", "at": "09:00"}
    assert (task["mode"], task["prompt"]) == ("read-only", "summarise the commits")
    assert task["next_run"].endswith(":00")


def test_add_takes_every_schedule_kind_and_names_a_task_after_its_prompt(workspace: Path):
    other = workspace / "other"
    other.mkdir()
    for flags in (
        ["--weekly", "mon,thu@08:30", "--mode", "full"],
        ["--every", "2h", "--workspace", str(other)],
        ["--once", "2099-01-01T00:00"],
    ):
        added_id(agent(workspace, "tasks", "add", "look at the open issues today", *flags))
    tasks = listed(workspace)
    assert [t["schedule"]["kind"] for t in tasks] == ["weekly", "every", "once"]
    assert tasks[0]["mode"] == "full" and tasks[1]["workspace"] == str(other)
    assert tasks[2]["schedule"]["at"].startswith("2099-01-01T00:00:00")
    assert {t["name"] for t in tasks} == {"look at the open issues"}


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--every", "2m"], "the shortest interval is 5m"),
        (["--daily", "nine"], "--daily takes a time of day as HH:MM"),
        (["--weekly", "someday@10:00"], "is not a day"),
        (["--once", "tomorrow"], "YYYY-MM-DDTHH:MM"),
        ([], "Give exactly one schedule"),
        (["--daily", "09:00", "--workspace", "nowhere"], "does not exist"),
    ],
)
def test_add_refuses_bad_input_with_one_sentence_and_exit_2(
    workspace: Path, args: list[str], said: str
):
    result = agent(workspace, "tasks", "add", "do it", *args)
    assert result.returncode == 2
    assert said in err(result) and "Traceback" not in err(result)
    assert listed(workspace) == []


@pytest.mark.parametrize("command", ["rm", "enable", "disable", "run"])
def test_an_unknown_id_is_exit_2(workspace: Path, command: str):
    result = agent(workspace, "tasks", command, "nope")
    assert result.returncode == 2
    assert err(result) == "agent: There is no task 'nope' — `agent tasks list` shows their ids.\n"


def test_disable_enable_and_rm(workspace: Path):
    task_id = added_id(agent(workspace, "tasks", "add", "check", "--every", "30m"))
    assert agent(workspace, "tasks", "disable", task_id).returncode == 0
    assert listed(workspace)[0]["enabled"] is False
    assert "off" in out(agent(workspace, "tasks", "list"))
    enabled = agent(workspace, "tasks", "enable", task_id[:3])
    assert enabled.returncode == 0 and "Next run:" in out(enabled)
    assert listed(workspace)[0]["enabled"] is True
    removed = agent(workspace, "tasks", "rm", task_id)
    assert removed.returncode == 0 and "conversations are kept" in out(removed)
    assert listed(workspace) == []


def test_run_prints_the_answer_and_refuses_changes_in_ask_mode(workspace: Path, fake: FakeOpenAI):
    fake.add(
        tool_calls(("c1", "write_file", json.dumps({"path": "a.txt", "content": "x"}))),
        text("I could not write it."),
    )
    task_id = added_id(
        agent_process(
            workspace,
            "tasks",
            "add",
            "write a.txt",
            "--daily",
            "09:00",
            "--mode",
            "ask",
            "--name",
            "writer",
        )
    )
    result = agent_process(workspace, "tasks", "run", task_id, fake=fake)

    assert result.returncode == 0, err(result)
    assert out(result) == "I could not write it.\n"
    assert "1 change(s) were refused" in err(result)
    assert not (workspace / "a.txt").exists()
    [conversation] = saved()
    assert conversation["title"].startswith("[task writer] write a.txt")
    assert conversation["id"] in err(result)
    assert [i["state"] for i in conversation["items"] if i["kind"] == "tool"] == ["denied"]
    assert conversation["items"][-1]["kind"] == "notice"
    last = listed(workspace)[0]["last_run"]
    assert (last["stopped_reason"], last["refused"], last["conversation"]) == (
        "answered",
        1,
        conversation["id"],
    )
    assert "answered, 1 refused" in out(agent_process(workspace, "tasks", "list"))


def test_running_a_once_task_switches_it_off(workspace: Path, fake: FakeOpenAI):
    fake.add(text("Done."))
    task_id = added_id(agent(workspace, "tasks", "add", "once", "--once", "2099-01-01T00:00"))
    assert agent(workspace, "tasks", "run", task_id, fake=fake).returncode == 0
    [task] = listed(workspace)
    assert task["enabled"] is False and task["next_run"] is None
    again = agent(workspace, "tasks", "enable", task_id)  # run early by hand: its time still comes
    assert "Next run: 2099-01-01 00:00." in out(again)
    store = TaskStore(paths.tasks_file())
    with store.editing() as tasks:  # as if it had run at its time, long ago
        tasks[0] = replace(
            tasks[0], schedule=replace(tasks[0].schedule, at="2000-01-01T00:00+00:00")
        )
    assert agent(workspace, "tasks", "disable", task_id).returncode == 0
    assert "will not run again" in out(agent(workspace, "tasks", "enable", task_id))


def test_run_without_a_provider_says_so_and_records_it(workspace: Path):
    task_id = added_id(agent(workspace, "tasks", "add", "check", "--every", "5m"))
    result = agent(workspace, "tasks", "run", task_id)
    assert result.returncode == 2
    assert "could not run: No model provider is configured" in err(result)
    last = listed(workspace)[0]["last_run"]
    assert last["stopped_reason"] == "error" and "No model provider" in last["error"]
    assert saved() == []


def test_run_due_runs_a_missed_task_once_and_is_silent_when_nothing_is_due(
    workspace: Path, fake: FakeOpenAI
):
    fake.add(text("Digest ready."))
    quiet = agent(workspace, "tasks", "run-due", fake=fake)
    assert (quiet.returncode, out(quiet), err(quiet)) == (0, "", "")
    due = added_id(agent(workspace, "tasks", "add", "digest", "--every", "5m"))
    added_id(agent(workspace, "tasks", "add", "not yet", "--every", "5m"))
    make_due(due)

    first = agent(workspace, "tasks", "run-due", fake=fake)
    second = agent(workspace, "tasks", "run-due", fake=fake)

    assert first.returncode == 0, err(first)
    assert out(first) == "Digest ready.\n"
    assert f"running task {due} (digest)" in err(first)
    assert (second.returncode, out(second), err(second)) == (0, "", "")
    assert len(fake.requests) == 1


def test_install_with_yes_writes_the_timer_files(workspace: Path, tmp_path: Path, isolated_home):
    log = fake_systemctl(tmp_path / "bin")
    result = agent(workspace, "tasks", "install", "--yes", env=path_with(tmp_path / "bin"))
    assert result.returncode == 0, err(result)
    units = isolated_home / "config" / "systemd" / "user"
    service = (units / "agent-tasks.service").read_text()
    assert re.search(r"^ExecStart=/\S+ .*tasks run-due$", service, re.MULTILINE), service
    assert "OnCalendar=minutely" in (units / "agent-tasks.timer").read_text()
    assert str(units / "agent-tasks.service") in out(result) and "ExecStart=" in out(result)
    assert "--user enable --now agent-tasks.timer" in log.read_text()


def test_install_without_a_terminal_or_yes_refuses_and_writes_nothing(
    workspace: Path, tmp_path: Path, isolated_home
):
    log = fake_systemctl(tmp_path / "bin")
    result = agent(workspace, "tasks", "install", env=path_with(tmp_path / "bin"))
    assert result.returncode == 2
    assert "without a terminal to ask on — pass --yes" in err(result)
    assert "agent-tasks.timer" in out(result), "it shows what it would write"
    assert not (isolated_home / "config" / "systemd").exists()
    assert "enable" not in log.read_text()


def test_install_without_systemd_prints_the_crontab_line(
    workspace: Path, tmp_path: Path, isolated_home
):
    fake_systemctl(tmp_path / "bin", user_manager=False)
    result = agent(workspace, "tasks", "install", env=path_with(tmp_path / "bin"))
    assert result.returncode == 0, err(result)
    assert re.search(
        r"^  \* \* \* \* \* \S.* tasks run-due >> \S+tasks\.log 2>&1$", out(result), re.MULTILINE
    ), out(result)
    assert not (isolated_home / "config" / "systemd").exists()
    log = Path(re.search(r">> (\S+) 2>&1", out(result))[1])
    assert log.parent.is_dir(), "cron cannot append to a file in a folder that does not exist"


def fake_systemctl(folder: Path, user_manager: bool = True) -> Path:
    folder.mkdir()
    log = folder / "systemctl.log"
    script = folder / "systemctl"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{log}"\n'
        f'case "$*" in *show-environment*) exit {0 if user_manager else 1};; esac\n'
        "exit 0\n"
    )
    script.chmod(0o755)
    log.touch()
    return log


def path_with(folder: Path) -> dict[str, str]:
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
