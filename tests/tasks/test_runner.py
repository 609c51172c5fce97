"""Real task runs against the loopback fake model: refusals, stored conversations, run-due."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from agent_cli import paths
from agent_cli.commands.task_runner import run_task
from agent_cli.engine.items import NoticeItem, ToolItem
from agent_cli.engine.store import Store
from agent_cli.frontends.run import NO_TERMINAL_REASON
from agent_cli.tasks.clock import Clock
from agent_cli.tasks.model import Task
from agent_cli.tasks.schedule import parse
from agent_cli.tasks.scheduler import claim, run_claimed, run_due
from agent_cli.tasks.store import TaskStore, find
from tests.support.cli import TIMEOUT
from tests.support.fake_openai import FakeOpenAI, Scripted, http_error, text, tool_calls
from tests.support.waiting import eventually_sync

CLOCK = Clock()  # the real clock: these runs are real


def call(name: str, **args: object) -> tuple[str, str, str]:
    return (f"call_{name}", name, json.dumps(args))


def add_task(
    store: TaskStore, workspace: Path, mode: str = "read-only", age: timedelta = timedelta(0)
) -> Task:
    """A task due `age` ago (every 5 minutes, added `age` + 5 minutes before now)."""
    created = CLOCK.now().replace(second=0, microsecond=0) - age - timedelta(minutes=5)
    task = Task(
        id="a1b2c3",
        name="digest",
        prompt="write the digest",
        schedule=parse(CLOCK, every="5m"),
        workspace=str(workspace),
        created=CLOCK.iso(created),
        mode=mode,
    )
    with store.editing() as tasks:
        tasks.append(task)
    return task


def stored_task(store: TaskStore) -> Task:
    tasks = store.load()
    return tasks[find(tasks, "a1b2c3")]


@pytest.fixture(autouse=True)
def provider(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)


def test_an_ask_task_refuses_changes_counts_them_and_keeps_the_conversation(
    store: TaskStore, workspace: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
):
    fake.add(tool_calls(call("write_file", path="out.md", content="x")), text("Could not write."))
    add_task(store, workspace, mode="ask")

    outcome = run_claimed(store, claim(store, "digest", CLOCK), run_task)

    assert (outcome.stopped_reason, outcome.refused, outcome.exit_code) == ("answered", 1, 0)
    assert not (workspace / "out.md").exists()
    conversation = Store(paths.conversations_dir()).load(outcome.conversation)
    assert conversation.title.startswith("[task digest] write the digest")
    assert conversation.mode == "ask"
    [card] = [item for item in conversation.items if isinstance(item, ToolItem)]
    assert (card.tool, card.state) == ("write_file", "denied")
    assert NO_TERMINAL_REASON in card.result
    notice = conversation.items[-1]
    assert isinstance(notice, NoticeItem) and notice.level == "warn"
    assert notice.text.startswith("1 change(s) were refused") and "--mode full" in notice.text
    printed = capsys.readouterr()
    assert "Could not write." in printed.out
    assert "1 change(s) were refused" in printed.err
    assert "--yes" not in printed.err, "agent run's advice does not fit a task"
    last = stored_task(store).last_run
    assert last is not None
    assert (last.stopped_reason, last.refused, last.conversation) == (
        "answered",
        1,
        conversation.id,
    )
    assert stored_task(store).running == 0


def test_a_task_is_read_only_unless_it_says_otherwise(
    store: TaskStore, workspace: Path, fake: FakeOpenAI
):
    fake.add(text("Nothing to change."))
    add_task(store, workspace)
    run_claimed(store, claim(store, "digest", CLOCK), run_task)
    offered = [tool["function"]["name"] for tool in fake.requests[0]["tools"]]
    assert "read_file" in offered and "write_file" not in offered


def test_a_full_task_may_change_files(store: TaskStore, workspace: Path, fake: FakeOpenAI):
    fake.add(tool_calls(call("write_file", path="out.md", content="news\n")), text("Written."))
    add_task(store, workspace, mode="full")
    outcome = run_claimed(store, claim(store, "digest", CLOCK), run_task)
    assert outcome.refused == 0
    assert (workspace / "out.md").read_text() == "news\n"


def test_a_run_that_fails_keeps_its_conversation_and_records_the_error(
    store: TaskStore, workspace: Path, fake: FakeOpenAI
):
    fake.add(http_error(400, "model not loaded"))
    add_task(store, workspace)
    outcome = run_claimed(store, claim(store, "digest", CLOCK), run_task)
    assert (outcome.stopped_reason, outcome.exit_code) == ("error", 1)
    assert "model not loaded" in outcome.error
    last = stored_task(store).last_run
    assert last is not None and last.stopped_reason == "error" and last.conversation
    assert "model not loaded" in last.error


def test_a_task_whose_workspace_is_gone_records_why_it_could_not_start(
    store: TaskStore, workspace: Path, fake: FakeOpenAI
):
    add_task(store, workspace)
    workspace.rmdir()
    outcome = run_claimed(store, claim(store, "digest", CLOCK), run_task)
    assert (outcome.stopped_reason, outcome.conversation, outcome.exit_code) == ("error", "", 2)
    assert "is not a folder any more" in outcome.error
    assert fake.requests == []
    assert "is not a folder any more" in stored_task(store).last_run.error  # type: ignore[union-attr]


def test_run_due_twice_runs_a_missed_task_once(store: TaskStore, workspace: Path, fake: FakeOpenAI):
    fake.add(text("First."), text("Second."))
    add_task(store, workspace, age=timedelta(hours=3))  # 36 slots of 5 minutes missed

    first = run_due(store, CLOCK, run_task)
    second = run_due(store, CLOCK, run_task)

    assert [outcome.stopped_reason for _, outcome in first] == ["answered"]
    assert second == []
    assert len(fake.requests) == 1 and fake.pending == 1


def test_two_run_due_processes_at_once_run_a_task_once(
    store: TaskStore, workspace: Path, fake: FakeOpenAI
):
    # A slow answer, so the first run is still going when the second process looks.
    fake.add(text("Only once.", chunks=10).replace(split=150, delay=0.1))
    add_task(store, workspace)
    command = [sys.executable, "-m", "agent_cli", "tasks", "run-due"]
    started = [
        subprocess.Popen(command, cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    results = [(process.wait(TIMEOUT), *process.communicate()) for process in started]

    assert [code for code, _, _ in results] == [0, 0], [e.decode() for _, _, e in results]
    assert len(fake.requests) == 1
    assert sum(b"Only once." in out for _, out, _ in results) == 1
    assert len(list(paths.conversations_dir().glob("*.jsonl"))) == 1


def test_a_run_due_during_a_long_run_leaves_the_running_task_alone(
    store: TaskStore, workspace: Path, fake: FakeOpenAI
):
    # The answer starts, then waits for the test: the first run goes on until released.
    answer = text("Slow.", chunks=10).body
    cut = answer.index(b"\n\n") + 2
    release = threading.Event()

    def rest() -> Iterator[bytes]:
        if release.wait(TIMEOUT):
            yield answer[cut:]

    fake.add(Scripted(answer[:cut], more=rest))
    task = add_task(store, workspace)
    command = [sys.executable, "-m", "agent_cli", "tasks", "run-due"]
    first = subprocess.Popen(command, cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    eventually_sync(lambda: fake.requests, "the first run's request")
    with store.editing() as tasks:  # make it due again while it runs
        tasks[0] = replace(stored_task(store), last_run=None, created=task.created)
    assert run_due(store, CLOCK, run_task) == []
    release.set()
    assert first.wait(TIMEOUT) == 0
    assert len(fake.requests) == 1
