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
