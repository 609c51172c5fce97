"""Session: the order of a run's events, when a conversation was last used, one run at a time."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from agent_cli.engine.store import Store
from agent_cli.errors import UsageError
from agent_cli.providers.scripted import answer
from tests.support.sessions import make_session


async def test_run_started_comes_before_the_prompt_item(tmp_path):
    session, _, recorder = make_session(tmp_path, [answer("Hi.")])
    await session.send("hello")
    types = recorder.types()
    assert types[:2] == ["run_started", "item_added"], types
    assert recorder.events[1].item.text == "hello"
    assert types[-1] == "run_finished" and types.count("run_started") == 1


async def test_a_run_moves_the_conversations_updated_time_on(tmp_path):
    store = Store(tmp_path / "store")
    session, _, _ = make_session(tmp_path, [answer("Hi.")], store=store)
    session.conversation.updated = 1000.0  # made long ago
    before = time.time()
    await session.send("hello")
    assert session.conversation.updated >= before
    assert store.load(session.conversation.id).updated == session.conversation.updated


async def test_a_conversation_another_live_process_runs_is_refused(tmp_path):
    session, _, recorder = make_session(tmp_path, [answer("never")])
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        conversation = session.conversation
        conversation.state, conversation.pid = "running", other.pid
        conversation.updated = time.time()
        with pytest.raises(UsageError, match=f"another agent \\(process {other.pid}\\)"):
            await session.send("hello")
        assert conversation.items == [] and recorder.events == []
    finally:
        other.kill()
        other.wait()
    result = await session.send("hello")  # that process is gone: its run ended
    assert result.reason == "answered" and conversation.state == "idle"


async def test_a_notice_between_runs_is_kept_published_and_saved(tmp_path):
    store = Store(tmp_path / "store")
    session, _, recorder = make_session(tmp_path, [answer("Hi.")], store=store)
    await session.send("hello")
    recorder.events.clear()
    session.notice("2 change(s) were refused.", "warn")
    assert recorder.types() == ["item_added", "notice"]
    assert recorder.events[1].text == "2 change(s) were refused."
    stored = store.load(session.conversation.id).items[-1]
    assert (stored.kind, stored.level) == ("notice", "warn")
    assert stored.text == "2 change(s) were refused."


async def test_a_notice_is_refused_during_a_run(tmp_path):
    session, _, _ = make_session(tmp_path, [answer("Hi.")])
    refused: list[str] = []

    def during(event) -> None:
        if event.type == "run_started":
            try:
                session.notice("in the middle")
            except UsageError as e:
                refused.append(str(e))

    session.events.subscribe(during)
    await session.send("hello")
    assert refused and "Run.notice" in refused[0]
    assert all(getattr(item, "text", "") != "in the middle" for item in session.conversation.items)


async def test_switch_model_closes_the_backend_and_the_next_message_builds_one(tmp_path):
    store = Store(tmp_path / "store")
    session, _, _ = make_session(tmp_path, [answer("one"), answer("two")], store=store)
    await session.send("hello")
    first = session.backend
    assert first is not None and session.agent_commands == ()
    await session.switch_model("local/other-model")
    assert session.backend is None
    assert store.load(session.conversation.id).model == "local/other-model"
    await session.send("again")
    assert session.backend is not None and session.backend is not first
