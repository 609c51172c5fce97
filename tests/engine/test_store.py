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
from agent_cli.engine.store import RECOVERED_NOTICE, Store, read_stored, running_elsewhere
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
    data = read_stored(Store(folder).path(loaded.id))
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
    assert read_stored(store.path(conversation.id)) == conversation.to_json()


async def test_a_runs_end_saves_every_item_whatever_changed_it(tmp_path):
    store = Store(tmp_path / "store")
    session, _, _ = make_session(tmp_path, [answer("one")], store=store)
    await session.send("hello")
    stored = read_stored(store.path(session.conversation.id))
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


# ------------------------------------------------------------------ the log


def test_a_save_appends_only_what_changed_and_an_update_replaces_the_item(tmp_path):
    store = Store(tmp_path)
    conversation = sample()
    store.save(conversation)
    log = store.path(conversation.id)
    size = log.stat().st_size
    tool = conversation.items[2]
    tool.result = "a new result"
    store.save(conversation, changed={tool.id})
    appended = [json.loads(line) for line in log.read_bytes()[size:].splitlines()]
    assert [sorted(record) for record in appended] == [["at", "item"], ["header"]]
    assert appended[0]["at"] == 2 and appended[0]["item"]["result"] == "a new result"
    assert read_stored(log) == conversation.to_json()  # in its place, not after the others
    assert Store(tmp_path).list()[0].items == 4


def test_a_log_holding_twice_what_it_says_is_rewritten_whole(tmp_path):
    store = Store(tmp_path)
    conversation = sample()
    tool = conversation.items[2]
    store.save(conversation)
    log = store.path(conversation.id)
    first = log.stat().st_ino
    rewritten = False
    for n in range(40):  # the same long result again and again: each save appends it once more
        tool.result = f"{n} " + "r" * 10_000
        store.save(conversation, changed={tool.id})
        rewritten = rewritten or log.stat().st_ino != first
        assert log.stat().st_size <= 2 * 10_500 + 2_000  # never much more than twice its live size
    assert rewritten
    assert read_stored(log) == conversation.to_json()
    assert [p.name for p in tmp_path.iterdir()] == [log.name]  # no temporary file left


def test_a_conversation_stored_whole_before_the_log_loads_lists_and_converts(tmp_path):
    conversation = sample()
    whole = tmp_path / f"{conversation.id}.json"
    whole.write_text(json.dumps(conversation.to_json()))  # as earlier versions stored it
    store = Store(tmp_path)
    [summary] = store.list()
    assert (summary.id, summary.title, summary.items) == (conversation.id, "t", 4)
    assert store.find(conversation.id[:15]) == whole
    loaded = store.load(conversation.id)
    assert loaded.to_json() == conversation.to_json()
    loaded.items.append(UserItem("more"))
    store.save(loaded)
    assert not whole.exists()  # converted: one log from now on
    assert read_stored(store.path(conversation.id)) == loaded.to_json()
    assert [s.items for s in Store(tmp_path).list()] == [5]


def test_a_conversion_killed_before_the_old_file_went_lists_once_and_reads_the_log(tmp_path):
    conversation = sample()
    store = Store(tmp_path)
    store.save(conversation)
    stale = conversation.to_json()
    stale["title"] = "the old file"
    (tmp_path / f"{conversation.id}.json").write_text(json.dumps(stale))
    assert [(s.id, s.title) for s in store.list()] == [(conversation.id, "t")]
    assert store.load(conversation.id[:15]).title == "t"
    store.remove(conversation.id)
    assert list(tmp_path.iterdir()) == []


def test_a_log_another_process_wrote_since_is_rewritten_by_the_last_writer(tmp_path):
    mine, theirs = Store(tmp_path), Store(tmp_path)
    conversation = sample()
    mine.save(conversation)
    other = theirs.load(conversation.id)
    other.items.append(UserItem("theirs"))
    theirs.save(other)
    conversation.items.append(UserItem("mine"))
    mine.save(conversation, changed=set())  # appending would mix the two: rewritten instead
    assert read_stored(mine.path(conversation.id)) == conversation.to_json()


def test_a_disk_full_in_the_middle_of_an_append_loses_nothing_saved_before(tmp_path, monkeypatch):
    store = Store(tmp_path)
    conversation = sample()
    store.save(conversation)
    log = store.path(conversation.id)
    before, saved_before = log.read_bytes(), read_stored(log)
    real_write = os.write
    calls = []

    def half_then_full(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))  # a real partial write
        raise OSError(errno.ENOSPC, "No space left on device")

    conversation.items.append(UserItem("more " * 1000))
    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(StoreError, match="No space left"):
        store.save(conversation, changed=set())
    monkeypatch.undo()
    assert len(calls) == 2
    assert log.read_bytes() == before  # the torn half was cut off again
    assert Store(tmp_path).load(conversation.id).to_json() == saved_before
    store.save(conversation, changed=set())  # space again: the next save has everything
    assert read_stored(log) == conversation.to_json()


def test_a_torn_append_that_could_not_be_cut_off_still_reads_as_the_save_before(
    tmp_path, monkeypatch
):
    store = Store(tmp_path)
    conversation = sample()
    store.save(conversation)
    log = store.path(conversation.id)
    saved_before = read_stored(log)
    real_write = os.write

    def torn(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[: len(data) - 5]))  # all but the header's end
        raise OSError(errno.ENOSPC, "No space left on device")

    def refused(fd: int, length: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    conversation.items.append(UserItem("more"))
    monkeypatch.setattr(os, "write", torn)
    monkeypatch.setattr(os, "ftruncate", refused)
    with pytest.raises(StoreError):
        store.save(conversation, changed=set())
    monkeypatch.undo()
    assert not log.read_bytes().endswith(b"\n")  # torn, and left so
    assert read_stored(log) == saved_before
    assert Store(tmp_path).list()[0].items == 4
    store.save(conversation, changed=set())  # never appended after a torn line: rewritten
    assert read_stored(log) == conversation.to_json()


APPENDER = textwrap.dedent(
    """
    import sys
    from agent_cli.engine.items import Conversation, ToolItem, UserItem
    from agent_cli.engine.store import Store

    store = Store(__import__("pathlib").Path(sys.argv[1]))
    c = Conversation(workspace="/w", id="20260101-000000-abcdef")
    tool = ToolItem("read_file", "c0", state="running")
    c.items.append(tool)
    store.save(c)
    big = "x" * 200_000
    n = 0
    while True:  # each save: a new item, and the tool item again (its result counts them)
        n += 1
        c.items.append(UserItem(f"{n} {big}"))
        tool.result = str(n)
        store.save(c, changed={tool.id})
        print(n, flush=True)
    """
)


def test_kill_9_during_appends_keeps_every_save_that_finished_and_each_whole(tmp_path):
    folder = tmp_path / "conv"
    proc = subprocess.Popen(
        [sys.executable, "-c", APPENDER, str(folder)], stdout=subprocess.PIPE, text=True
    )
    try:
        finished = [int(proc.stdout.readline()) for _ in range(20)]
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(10)
    loaded = Store(folder).load("20260101-000000-abcdef")
    tool, *users = loaded.items
    numbers = [int(i.text.split()[0]) for i in users]
    assert numbers == list(range(1, len(numbers) + 1))
    assert len(numbers) >= finished[-1]  # nothing a finished save wrote is lost
    assert tool.result == str(len(numbers))  # a save's records come together or not at all
