"""Slash commands both interactive front ends share (SPEC §12, §11), through a real session."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_cli import wiring
from agent_cli.engine.items import NoticeItem
from agent_cli.frontends.interactive import Interactive
from agent_cli.settings import Price, Settings, load_settings
from agent_cli.wiring import Opening
from tests.support.fake_openai import FakeOpenAI, text


@pytest.fixture
def settings(fake: FakeOpenAI, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    return load_settings(workspace)


@pytest.fixture
async def interactive(settings: Settings) -> AsyncIterator[Interactive]:
    opened = await wiring.open_interactive(settings, Opening(), "ask")
    try:
        yield opened
    finally:
        await opened.aclose()


async def test_model_lists_the_servers_models_with_the_usage(interactive: Interactive):
    reply = await interactive.handle("/model")
    assert reply.action == "pick_model"
    assert "The model is `openai/m1`" in reply.text
    assert "| `m1` |" in reply.text and "| `m2` |" in reply.text
    assert "0 input and 0 output tokens" in reply.text and "$" not in reply.text


async def test_model_switches_the_model_the_next_message_uses(
    interactive: Interactive, fake: FakeOpenAI
):
    fake.add(text("from m1"), text("from m2"))
    await interactive.session.send("first")
    reply = await interactive.handle("/model m2")
    assert "Model switched to `openai/m2`" in reply.text
    assert interactive.session.conversation.model == "openai/m2"
    await interactive.session.send("second")
    assert [request["model"] for request in fake.requests] == ["m1", "m2"]


async def test_model_reports_the_cost_when_the_model_has_a_price(
    fake: FakeOpenAI, settings: Settings
):
    priced = dataclasses.replace(settings, prices={"m1": Price(input=2.0, output=10.0)})
    interactive = await wiring.open_interactive(priced, Opening(), "ask")
    try:
        fake.add(text("hi", usage=(1_000, 100)))
        await interactive.session.send("hello")
        reply = await interactive.handle("/model")
        assert "1,000 input and 100 output tokens, about $0.0030" in reply.text
    finally:
        await interactive.aclose()


async def test_agent_lists_the_catalog_with_what_is_missing(interactive: Interactive):
    reply = await interactive.handle("/agent")
    assert reply.action == "pick_agent"
    assert "worked by `builtin`" in reply.text
    for agent in ("opencode", "codex", "claude", "gemini", "pi"):
        assert f"| `{agent}` |" in reply.text


async def test_agent_refuses_an_unknown_or_missing_agent_and_keeps_the_current_one(
    interactive: Interactive,
):
    reply = await interactive.handle("/agent opencod")
    assert reply.level == "error" and "opencode" in reply.text  # did you mean
    reply = await interactive.handle("/agent gemini")
    assert reply.level == "error" and "not on PATH" in reply.text
    assert interactive.session.conversation.agent == "builtin"


async def test_agent_builtin_is_already_the_one(interactive: Interactive):
    reply = await interactive.handle("/agent builtin")
    assert "already works this conversation" in reply.text


async def test_tasks_lists_the_scheduled_tasks(interactive: Interactive, workspace: Path):
    from tests.support.cli import agent_process

    reply = await interactive.handle("/tasks")
    assert "No scheduled tasks" in reply.text
    added = agent_process(
        workspace, "tasks", "add", "look for TODOs", "--daily", "09:00", "--name", "todo"
    )
    assert added.returncode == 0, added.stderr.decode()
    reply = await interactive.handle("/tasks")
    assert "todo" in reply.text and "09:00" in reply.text


async def test_the_mcp_sdk_is_imported_ahead_when_servers_are_configured(
    settings: Settings, workspace: Path, monkeypatch: pytest.MonkeyPatch
):
    from agent_cli.tools import mcp

    monkeypatch.setattr(mcp, "_SDK", None)  # as in a fresh process
    opened = await wiring.open_interactive(settings, Opening(), "ask")
    await opened.aclose()
    assert mcp._SDK is None  # nothing configured: nothing imported
    (workspace / ".agent").mkdir()
    (workspace / ".agent" / "mcp.json").write_text('{"mcpServers": {}}')
    opened = await wiring.open_interactive(settings, Opening(), "ask")
    try:
        assert mcp._SDK is not None  # the import runs in a worker thread meanwhile
        await mcp._SDK
    finally:
        await opened.aclose()


def git(workspace: Path, *args: str) -> None:
    import subprocess

    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", *identity, *args], cwd=workspace, check=True, capture_output=True)


async def test_diff_shows_the_workspaces_git_diff(interactive: Interactive, workspace: Path):
    reply = await interactive.handle("/diff")
    assert "not a git repository" in reply.text
    git(workspace, "init", "-q")
    (workspace / "a.txt").write_text("one\n")
    git(workspace, "add", "a.txt")
    git(workspace, "commit", "-qm", "first")
    assert (await interactive.handle("/diff")).text == "No changes against git's HEAD."
    (workspace / "a.txt").write_text("two\n")
    reply = await interactive.handle("/diff")
    assert reply.text.startswith("```diff") and "-one" in reply.text and "+two" in reply.text


async def test_diff_shows_new_untracked_files_as_git_status_lists_them(
    interactive: Interactive, workspace: Path
):
    git(workspace, "init", "-q")
    (workspace / ".gitignore").write_text("ignored.txt\n")
    git(workspace, "add", ".gitignore")
    git(workspace, "commit", "-qm", "first")
    (workspace / "new.py").write_text("print('hi')\nx = 1")
    (workspace / "ignored.txt").write_text("secret\n")
    (workspace / "blob.bin").write_bytes(b"\0\1\2")
    (workspace / "link").symlink_to("/etc/passwd")
    reply = await interactive.handle("/diff")
    text = reply.text
    assert "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n" in text
    assert "@@ -0,0 +1,2 @@\n+print('hi')\n+x = 1\n\\ No newline at end of file" in text
    assert "Binary files /dev/null and b/blob.bin differ" in text
    assert "new file mode 120000" in text and "+/etc/passwd\n" in text  # the link, not its file
    assert "root:" not in text and "ignored.txt" not in text and "secret" not in text


async def test_undo_reverts_the_agents_last_change(
    interactive: Interactive, fake: FakeOpenAI, workspace: Path
):
    import json

    from tests.support.fake_openai import tool_calls

    (workspace / "a.txt").write_text("before\n")
    arguments = json.dumps({"path": "a.txt", "content": "after\n"})
    fake.add(tool_calls(("c1", "write_file", arguments)), text("Written."))
    interactive.session.set_mode("full")
    await interactive.session.send("change it")
    assert (workspace / "a.txt").read_text() == "after\n"
    reply = await interactive.handle("/undo")
    notice = interactive.session.conversation.items[-1]
    assert isinstance(notice, NoticeItem) and notice.for_model and reply.text == ""
    assert "/undo: Restored 1 file" in notice.text and "M a.txt" in notice.text
    assert (workspace / "a.txt").read_text() == "before\n"
    again = await interactive.handle("/undo")
    assert "Nothing to undo" in again.text


async def test_the_model_reads_what_undo_reverted_with_the_next_message(
    interactive: Interactive, fake: FakeOpenAI, workspace: Path
):
    import json

    from tests.support.fake_openai import tool_calls

    arguments = json.dumps({"path": "a.txt", "content": "after\n"})
    fake.add(tool_calls(("c1", "write_file", arguments)), text("Written."), text("Seen."))
    interactive.session.set_mode("full")
    await interactive.session.send("write it")
    await interactive.handle("/undo")
    await interactive.session.send("what now?")
    messages = fake.requests[-1]["messages"]
    contents = [m["content"] for m in messages if m["role"] == "user"]
    assert "/undo: Restored 1 file" in contents[-2] and "D a.txt" in contents[-2]
    assert contents[-2].startswith("[A note from the agent program")
    assert contents[-1] == "what now?"
    earlier = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "user"]
    assert not any("/undo" in str(c) for c in earlier)  # nothing before the undo said it


async def test_skills_mcp_and_an_unknown_command_answer_in_one_reply(interactive: Interactive):
    skills = await interactive.handle("/skills")
    assert "| `review-change` | on | bundled |" in skills.text
    mcp = await interactive.handle("/mcp")
    assert mcp.text.startswith("No MCP servers are configured.")
    unknown = await interactive.handle("/bogus")
    assert unknown.level == "warn" and "/help" in unknown.text and "/theme" in unknown.text
    assert (await interactive.handle("/quit")).action == "quit"
    assert (await interactive.handle("/clear")).action == "clear"


async def test_compact_says_when_there_is_nothing_to_compact(interactive: Interactive):
    from agent_cli.engine.events import Event, NoticeEvent
    from agent_cli.engine.items import NoticeItem

    heard: list[Event] = []
    interactive.session.events.subscribe(heard.append)
    reply = await interactive.handle("/compact")
    assert reply.text == "", "the session's own notice says it"
    said = [e for e in heard if isinstance(e, NoticeEvent)]
    said += [e.item for e in heard if isinstance(getattr(e, "item", None), NoticeItem)]
    assert any("Nothing to compact" in str(n) for n in said), heard
