"""Persistence: atomic, crash-safe, listable (SPEC §3)."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from agent_cli.engine.items import (
    AssistantItem,
    Conversation,
    NoticeItem,
    ToolCall,
    ToolItem,
    UserItem,
)
from agent_cli.engine.store import RECOVERED_NOTICE, Store, running_elsewhere
from agent_cli.errors import NoSuchConversation, StoreError
from agent_cli.providers.base import Usage
from agent_cli.providers.scripted import answer
from tests.support.sessions import make_session


def sample(workspace: str = "/w") -> Conversation:
    c = Conversation(workspace=workspace, title="t", usage=Usage(3, 4, 1))
    c.items += [
        UserItem("hi"),
        AssistantItem("hello", "thinking", False, [ToolCall("c1", "read_file", '{"path": "a"}')]),
        ToolItem("read_file", "c1", title="Read a", state="done", result="x", diff="d"),
        NoticeItem("careful", "warn"),
    ]
    return c


def test_round_trip_keeps_every_field(tmp_path):
    store = Store(tmp_path)
    c = sample()
    store.save(c)
    loaded = store.load(c.id)
    assert loaded.to_json() == c.to_json()


def test_load_by_unique_prefix_and_clear_errors(tmp_path):
    store = Store(tmp_path)
    c = sample()
    store.save(c)
    assert store.load(c.id[:15]).id == c.id
    with pytest.raises(StoreError, match="No conversation"):
        store.load("nope")
    with pytest.raises(StoreError, match="not a conversation id"):
        store.load("../etc/passwd")


def test_a_run_that_died_reads_idle_with_a_notice(tmp_path):
    store = Store(tmp_path)
    c = sample()
    c.mark_running()
    store.save(c)
    loaded = store.load(c.id)
    assert loaded.state == "idle"
    assert loaded.items[-1].text == RECOVERED_NOTICE


def test_last_in_workspace_and_listing_newest_first(tmp_path):
    store = Store(tmp_path)
    a, b, other = sample("/w"), sample("/w"), sample("/elsewhere")
    for i, c in enumerate((a, b, other)):
        c.updated = 1000.0 + i
        store.save(c)
    assert store.last("/w").id == b.id
    assert [s.id for s in store.list("/w")] == [b.id, a.id]
    assert store.last("/nothing") is None
    assert store.list()[0].items == 4


def test_corrupt_file_is_a_clear_error_and_skipped_in_listing(tmp_path):
    store = Store(tmp_path)
    good = sample()
    store.save(good)
    (tmp_path / "20200101-000000-bad.json").write_text("{not json")
    assert [s.id for s in store.list()] == [good.id]
    with pytest.raises(StoreError, match="could not be read"):
        store.load("20200101-000000-bad")


def test_full_disk_keeps_the_previous_version(tmp_path, monkeypatch):
    store = Store(tmp_path)
    c = sample()
    store.save(c)
    before = store.path(c.id).read_bytes()
    c.items.append(UserItem("more"))

    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(StoreError, match="No space left"):
        store.save(c)
    monkeypatch.undo()
    assert store.path(c.id).read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [store.path(c.id).name]  # no temp left


async def test_session_reports_a_failed_save_once_and_goes_on(tmp_path, monkeypatch):
    store = Store(tmp_path / "store")
    session, _, rec = make_session(tmp_path, [answer("fine")], store=store)

    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "full")

    monkeypatch.setattr(os, "fsync", full)
    result = await session.send("hi")
    assert result.reason.value == "answered"
    errors = [e for e in rec.events if e.type == "notice" and e.level == "error"]
    assert len(errors) == 1 and "free some space" in errors[0].text


WRITER = textwrap.dedent(
    """
    import sys
    from agent_cli.engine.items import Conversation, UserItem
    from agent_cli.engine.store import Store

    store = Store(__import__("pathlib").Path(sys.argv[1]))
    c = Conversation(workspace="/w", id="20260101-000000-abcdef")
    big = "x" * 200_000
    n = 0
    while True:
        n += 1
        c.items.append(UserItem(f"{n} {big}"))
        store.save(c)
        print(n, flush=True)
    """
)


def test_kill_9_during_writes_leaves_a_readable_conversation(tmp_path):
    folder = tmp_path / "conv"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder)], stdout=subprocess.PIPE, text=True
    )
    try:
        for _ in range(5):  # let it get well into its writes
            assert proc.stdout.readline()
        time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(10)
    loaded = Store(folder).load("20260101-000000-abcdef")
    numbers = [int(i.text.split()[0]) for i in loaded.items]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 5
    data = json.loads(Store(folder).path(loaded.id).read_text())
    assert data["id"] == loaded.id


def test_a_save_encodes_again_only_what_changed(tmp_path):
    store = Store(tmp_path)
    conversation = sample()
    user, _, tool, _ = conversation.items
    store.save(conversation)
    user.text = "edited without saying so"
    tool.result = "a new result"
    running = ToolItem("exec_shell_command", "c2", state="running", result="partial")
    conversation.items.append(running)
    store.save(conversation, changed={tool.id})
    loaded = store.load(conversation.id)
    assert loaded.items[0].text == "hi"  # not named as changed: written as before
    assert loaded.items[2].result == "a new result"
    assert loaded.items[4].result == "partial"  # new items are always encoded
    running.result = "more output"
    store.save(conversation, changed=set())
    assert store.load(conversation.id).items[4].result == "partial"  # until it is named
    store.save(conversation)  # None: every item again
    assert store.load(conversation.id).items[0].text == "edited without saying so"
    assert store.load(conversation.id).items[4].result == "more output"
    assert json.loads(store.path(conversation.id).read_text()) == conversation.to_json()


async def test_a_runs_end_saves_every_item_whatever_changed_it(tmp_path):
    store = Store(tmp_path / "store")
    session, _, _ = make_session(tmp_path, [answer("one")], store=store)
    await session.send("hello")
    stored = json.loads(store.path(session.conversation.id).read_text())
    assert stored == session.conversation.to_json()


def _sleeper() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_a_run_another_live_process_is_doing_is_left_running(tmp_path):
    store = Store(tmp_path)
    c = sample()
    other = _sleeper()
    try:
        c.state, c.pid, c.updated = "running", other.pid, time.time()
        store.save(c)
        loaded = store.load(c.id)
        assert (loaded.state, loaded.pid) == ("running", other.pid)
        assert running_elsewhere(loaded) == other.pid
        assert loaded.to_json() == c.to_json()  # no notice added
    finally:
        other.kill()
        other.wait()
    after = store.load(c.id)
    assert after.state == "idle" and after.items[-1].text == RECOVERED_NOTICE


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="start times from /proc")
def test_a_pid_reused_by_a_process_started_after_the_last_save_is_not_the_runner(tmp_path):
    store = Store(tmp_path)
    c = sample()
    other = _sleeper()
    try:
        c.state, c.pid, c.updated = "running", other.pid, time.time() - 3600
        store.save(c)
        assert running_elsewhere(c) is None
        assert store.load(c.id).state == "idle"
    finally:
        other.kill()
        other.wait()


def test_an_unknown_id_is_a_usage_error(tmp_path):
    store = Store(tmp_path)
    with pytest.raises(NoSuchConversation) as caught:
        store.load("nope")
    assert caught.value.exit_code == 2
