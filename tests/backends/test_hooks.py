"""Hooks: real shell commands run at each event, through a real Session and loop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_cli import mcp_config
from agent_cli.backends.hooks import Hooks, ProjectHook
from agent_cli.backends.subagent_definitions import Definitions
from agent_cli.backends.subagents import Subagents
from agent_cli.engine.approval import Decision
from agent_cli.engine.backend import RunResult, StopReason
from agent_cli.engine.events import ApprovalRequested
from agent_cli.engine.items import Conversation, NoticeItem, ToolItem
from agent_cli.engine.session import Session
from agent_cli.providers.base import ModelInfo
from agent_cli.providers.scripted import ScriptedProvider, answer, calls
from agent_cli.settings import Hook, ProviderSettings, Settings, load_settings
from tests.support.sessions import make_session
from tests.support.waiting import FOREVER, eventually

TIMEOUT = 20
WRITE = ("w1", "write_file", json.dumps({"path": "out.txt", "content": "hi\n"}))
INFO = ("i1", "get_info", "{}")


@pytest.fixture
def recorder(tmp_path: Path) -> tuple[str, Path]:
    """A shell script hook that appends its stdin JSON, one line each, to a log file."""
    script = tmp_path / "record.sh"
    # One write per event: notification hooks may run alongside other hooks.
    script.write_text('#!/bin/sh\ndata=$(cat)\nprintf \'%s\\n\' "$data" >> "$1"\n')
    log = tmp_path / "hooks.log"
    return f"sh {script} {log}", log


def events(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


async def send(session: Session, text: str) -> RunResult:
    return await asyncio.wait_for(session.send(text), TIMEOUT)


def hooks(workspace: Path, **events: list[Hook]) -> Hooks:
    return Hooks(workspace, {name: tuple(found) for name, found in events.items()})


def notices(session: Session, level: str = "warn") -> list[str]:
    return [
        i.text for i in session.conversation.items if isinstance(i, NoticeItem) and i.level == level
    ]


# ----------------------------------------------------------------- each event


async def test_each_event_gets_its_json_on_stdin(tmp_path: Path, recorder) -> None:
    command, log = recorder
    every = [Hook(command)]
    configured = hooks(
        tmp_path,
        user_prompt_submit=every,
        pre_tool_use=every,
        post_tool_use=every,
        notification=every,
        stop=every,
    )
    turns = [calls(INFO), calls(WRITE), answer("done")]
    session, _, _ = make_session(tmp_path, turns, mode="ask", hooks=configured)
    session.events.subscribe(
        lambda e: isinstance(e, ApprovalRequested) and e.request.resolve(Decision("yes"))
    )
    await send(session, "write out.txt")

    seen = events(log)
    names = [e["event"] for e in seen]
    assert names[0] == "user_prompt_submit" and names[-1] == "stop"
    assert names.count("pre_tool_use") == 2 and names.count("post_tool_use") == 2
    conversation = session.conversation.id
    for event in seen:
        assert event["conversation"] == conversation
        assert event["workspace"] == str(tmp_path)
    assert seen[0]["prompt"] == "write out.txt"
    pre = [e for e in seen if e["event"] == "pre_tool_use"]
    assert pre[0]["tool"] == "get_info" and pre[0]["arguments"] == {}
    assert pre[1]["tool"] == "write_file" and pre[1]["arguments"]["path"] == "out.txt"
    post = [e for e in seen if e["event"] == "post_tool_use"]
    assert post[1]["state"] == "done" and "out.txt" in post[1]["result"]
    assert post[1]["file"] == "out.txt" and post[1]["is_error"] is False
    (note,) = [e for e in seen if e["event"] == "notification"]
    assert note["kind"] == "approval" and note["tool"] == "write_file"
    assert seen[-1]["reason"] == "answered" and seen[-1]["rounds"] == 3


async def test_a_warning_notice_is_a_notification(tmp_path: Path, recorder) -> None:
    command, log = recorder
    configured = hooks(tmp_path, notification=[Hook(command)], stop=[Hook(command)])
    session, _, _ = make_session(tmp_path, [calls(INFO)], max_rounds=1, hooks=configured)
    await send(session, "go")
    seen = events(log)
    assert seen[0]["event"] == "notification" and seen[0]["level"] == "warn"
    assert "Stopped after 1 rounds" in seen[0]["text"]
    assert seen[1]["event"] == "stop" and seen[1]["reason"] == "round_limit"


async def test_tool_patterns_limit_tool_events(tmp_path: Path, recorder) -> None:
    command, log = recorder
    configured = hooks(tmp_path, pre_tool_use=[Hook(command, tools=("write_*", "edit_file"))])
    turns = [calls(INFO), calls(WRITE), answer("done")]
    session, _, _ = make_session(tmp_path, turns, mode="full", hooks=configured)
    await send(session, "go")
    assert [e["tool"] for e in events(log)] == ["write_file"]


async def test_a_sub_agents_calls_reach_the_tool_hooks(tmp_path: Path, recorder) -> None:
    command, log = recorder
    configured = hooks(tmp_path, pre_tool_use=[Hook(command)], stop=[Hook(command)])
    task = ("t1", "task", json.dumps({"description": "look", "prompt": "where?"}))
    turns = [calls(task), calls(INFO), answer("here"), answer("ok")]
    session, _, _ = make_session(
        tmp_path, turns, hooks=configured, subagents=Subagents(Definitions(()), 3, 50)
    )
    await send(session, "go")
    seen = events(log)
    card = next(
        i for i in session.conversation.items if isinstance(i, ToolItem) and i.tool == "task"
    )
    assert [(e["event"], e.get("tool"), e.get("parent")) for e in seen] == [
        ("pre_tool_use", "task", ""),
        ("pre_tool_use", "get_info", card.id),
        ("stop", None, None),  # one stop: the sub-agent's run is part of the message's
    ]


# ------------------------------------------------------- blocking and failures


async def test_exit_2_blocks_the_call_and_the_model_reads_stderr(tmp_path: Path) -> None:
    block = Hook("echo 'Writes are frozen until Friday.' >&2; exit 2", tools=("write_file",))
    turns = [calls(WRITE), answer("ok, not writing")]
    session, provider, _ = make_session(
        tmp_path, turns, mode="full", hooks=hooks(tmp_path, pre_tool_use=[block])
    )
    await send(session, "write out.txt")
    item = next(i for i in session.conversation.items if isinstance(i, ToolItem))
    assert item.state == "denied" and item.is_error
    assert item.result == "Writes are frozen until Friday."
    assert not (tmp_path / "out.txt").exists()
    assert provider.requests[1].messages[-1].content == "Writes are frozen until Friday."
    assert not notices(session)  # a block is the hook's answer, not a failure


async def test_a_blocking_hook_comes_before_the_approval_card(tmp_path: Path) -> None:
    block = Hook("exit 2")
    turns = [calls(WRITE), answer("ok")]
    session, _, recorder = make_session(
        tmp_path, turns, mode="ask", hooks=hooks(tmp_path, pre_tool_use=[block])
    )
    await send(session, "write")
    assert not recorder.of(ApprovalRequested)
    item = next(i for i in session.conversation.items if isinstance(i, ToolItem))
    assert item.result == "A pre_tool_use hook blocked this call."


async def test_another_non_zero_exit_is_a_warning_and_the_call_goes_on(tmp_path: Path) -> None:
    failing = Hook("echo 'lint server down' >&2; exit 1")
    turns = [calls(WRITE), answer("written")]
    session, _, _ = make_session(
        tmp_path, turns, mode="full", hooks=hooks(tmp_path, pre_tool_use=[failing])
    )
    result = await send(session, "write")
    assert result.reason is StopReason.ANSWERED
    assert (tmp_path / "out.txt").read_text() == "hi\n"
    (warning,) = notices(session)
    assert "pre_tool_use hook `echo 'lint server down' >&2; exit 1`" in warning
    assert "exit code 1: lint server down" in warning


async def test_a_hook_past_its_timeout_is_killed_with_its_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    slow = Hook(f"sleep {FOREVER:g} & echo $! > {pid_file}; wait", timeout=0.5)
    session, _, _ = make_session(
        tmp_path, [answer("hi")], hooks=hooks(tmp_path, user_prompt_submit=[slow])
    )
    result = await send(session, "hello")  # within TIMEOUT: not the hour of its sleep
    assert result.reason is StopReason.ANSWERED
    (warning,) = notices(session)
    assert "took longer than 0.5 s and was stopped" in warning
    pid = int(pid_file.read_text())
    assert not _alive(pid), "the hook's background child outlived the timeout"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


async def test_a_stop_ends_a_running_hook(tmp_path: Path) -> None:
    # The hook says it started only once it has read its input to the end: by then the
    # runner has it running (past starting it), and only the stop can end it.
    started = tmp_path / "hook-started"
    slow = Hook(f"cat > /dev/null; touch {started}; sleep {FOREVER:g}", timeout=FOREVER)
    session, _, _ = make_session(
        tmp_path, [answer("hi")], hooks=hooks(tmp_path, user_prompt_submit=[slow])
    )
    running = asyncio.ensure_future(send(session, "hello"))
    await eventually(started.exists, "the hook to start")
    session.stop()
    result = await running  # within TIMEOUT: only the stop ends the hook
    assert result.reason is StopReason.STOPPED


# -------------------------------------------------------------------- secrets


async def say_hello_with(settings: Settings) -> None:
    """One message "hello" through the wired built-in loop (hooks and all) of `settings`."""
    from agent_cli.wiring import builtin_backend

    conversation = Conversation(workspace=str(settings.workspace))
    loop = builtin_backend(settings, conversation, ScriptedProvider([answer("hi")]), ModelInfo("m"))
    session = Session(conversation, lambda _c: loop, None)
    await send(session, "hello")
    await session.aclose()


async def test_hooks_never_receive_secrets(tmp_path: Path, monkeypatch) -> None:
    for name, value in {
        "OPENAI_API_KEY": "sk-openai-secret",
        "ANTHROPIC_API_KEY": "sk-ant-secret",
        "SERVICE_API_KEY": "service-secret",
        "GITHUB_TOKEN": "ghp-secret",
        "AWS_SECRET": "aws-secret",
        "DB_PASSWORD": "db-secret",
        "HOOK_VISIBLE": "plain-value",
    }.items():
        monkeypatch.setenv(name, value)
    dump = tmp_path / "dump.txt"
    hook = Hook(f"env > {dump}; cat >> {dump}")
    provider_settings = ProviderSettings(
        "openai", "openai", "http://127.0.0.1:9", api_key="sk-config-secret",
        headers={"X-Api-Key": "header-secret"},
    )  # fmt: skip
    settings = Settings(
        workspace=tmp_path, provider=provider_settings, hooks={"user_prompt_submit": (hook,)}
    )
    await say_hello_with(settings)
    text = dump.read_text()
    assert "HOOK_VISIBLE=plain-value" in text and '"prompt": "hello"' in text
    for secret in ("sk-openai-secret", "sk-ant-secret", "service-secret", "ghp-secret"):
        assert secret not in text
    for secret in ("aws-secret", "db-secret", "sk-config-secret", "header-secret"):
        assert secret not in text


async def test_hooks_follow_the_configured_shell_environment(tmp_path: Path, monkeypatch) -> None:
    from agent_cli.tools.environment import EnvironmentPolicy

    monkeypatch.setenv("HOOK_VISIBLE", "plain-value")
    monkeypatch.setenv("HOOK_HIDDEN", "excluded-value")
    dump = tmp_path / "dump.txt"
    policy = EnvironmentPolicy(exclude=("HOOK_HIDDEN",), set={"HOOK_SET": "from-config"})
    settings = Settings(
        workspace=tmp_path,
        provider=None,
        hooks={"user_prompt_submit": (Hook(f"env > {dump}"),)},
        shell_environment=policy,
    )
    await say_hello_with(settings)
    text = dump.read_text()
    assert "HOOK_VISIBLE=plain-value" in text and "HOOK_SET=from-config" in text
    assert "excluded-value" not in text


# ---------------------------------------------------------------- project trust


def project_hooks(workspace: Path, command: str) -> Settings:
    folder = workspace / ".agent"
    folder.mkdir(exist_ok=True)
    (folder / "config.toml").write_text(f"[hooks]\nstop = [{json.dumps(command)}]\n")
    return load_settings(workspace)


async def run_with(settings: Settings, ask=None) -> Session:
    from agent_cli.wiring import builtin_backend

    conversation = Conversation(workspace=str(settings.workspace))
    loop = builtin_backend(
        settings, conversation, ScriptedProvider([answer("hi")]), ModelInfo("m"), ask
    )
    session = Session(conversation, lambda _c: loop, None)
    await send(session, "hello")
    await session.aclose()
    return session


async def test_untrusted_project_hooks_are_ignored_then_used_after_a_yes(
    tmp_path: Path, recorder
) -> None:
    command, log = recorder
    settings = project_hooks(tmp_path, command)
    config = tmp_path / ".agent" / "config.toml"

    session = await run_with(settings)  # nobody to ask: ignored, with a notice
    assert not events(log)
    (warning,) = notices(session)
    assert f"The hooks in {config} were ignored" in warning

    asked: list[list[ProjectHook]] = []

    async def no(file: Path, entries: list) -> bool:
        asked.append(entries)
        return False

    await run_with(settings, no)
    assert not events(log) and asked[0] == [ProjectHook("stop", settings.project_hooks["stop"][0])]

    async def yes(file: Path, entries: list) -> bool:
        assert file == config
        return True

    await run_with(settings, yes)
    assert [e["event"] for e in events(log)] == ["stop"]
    assert mcp_config.is_trusted(tmp_path, config)

    await run_with(settings)  # trusted now: no question needed
    assert len(events(log)) == 2

    changed = project_hooks(tmp_path, command + " # changed")
    session = await run_with(changed)  # a changed file is asked about again
    assert len(events(log)) == 2 and notices(session)


def test_the_trust_question_names_every_command(tmp_path: Path) -> None:
    from agent_cli.commands.trust import trust_question

    entries = [
        ProjectHook("stop", Hook("notify-send done")),
        ProjectHook("pre_tool_use", Hook("x")),
    ]
    question = trust_question(tmp_path / "config.toml", entries)  # type: ignore[arg-type]
    assert "wants to run these commands (as hooks" in question
    assert "  stop: notify-send done" in question and "  pre_tool_use: x" in question
