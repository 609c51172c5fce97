"""`agent acp` end to end: the real command in a subprocess, driven by the ACP SDK's client
side, answering from the fake model server.

The `Editor` below is a small ACP client like Zed's: it records every update,
answers permission requests from a script, and (when it says so at
initialize) serves fs/read_text_file and fs/write_text_file from its own
buffers, falling back to the disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    EmbeddedResourceContentBlock,
    FileSystemCapabilities,
    InitializeResponse,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ResourceContentBlock,
    TextResourceContents,
    WriteTextFileResponse,
)

from tests.support.cli import saved
from tests.support.fake_openai import (
    FakeOpenAI,
    chunk,
    frames,
    http_error,
    raw,
    text,
    tool_calls,
)

TIMEOUT = 30
NEVER = "never"  # an Editor answer: the person never answers


def call(name: str, **args: object) -> tuple[str, str, str]:
    return (f"call_{name}", name, json.dumps(args))


def told(fake: FakeOpenAI, request: int) -> str:
    """What the model read last in request `request` (a tool result or the user message)."""
    return fake.requests[request]["messages"][-1]["content"]


def offered(fake: FakeOpenAI, request: int) -> set[str]:
    return {t["function"]["name"] for t in fake.requests[request].get("tools", [])}


class Editor:
    """An ACP client that records what the agent sends and answers from a script."""

    def __init__(self, answers: tuple[str, ...] = ()) -> None:
        self.updates: list[Any] = []
        self.permissions: list[tuple[Any, list[Any]]] = []
        self.unannounced: list[str] = []  # permissions asked before their tool call was shown
        self.answers = list(answers)
        self.asked = asyncio.Event()
        self.buffers: dict[str, str] = {}
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, options: list[Any], session_id: str, tool_call: Any, **_: Any
    ) -> RequestPermissionResponse:
        if tool_call.tool_call_id not in [c.tool_call_id for c in self.calls()]:
            self.unannounced.append(tool_call.tool_call_id)
        self.permissions.append((tool_call, options))
        self.asked.set()
        answer = self.answers.pop(0)
        if answer == NEVER:
            await asyncio.Event().wait()
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def read_text_file(self, path: str, session_id: str, **_: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(
        self, content: str, path: str, session_id: str, **_: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        Path(path).write_text(content)
        return WriteTextFileResponse()

    # -- what arrived

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def said(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))

    def calls(self) -> list[Any]:
        return self.of("tool_call")

    def call_updates(self, call_id: str) -> list[Any]:
        return [u for u in self.of("tool_call_update") if u.tool_call_id == call_id]

    def final_status(self, call_id: str) -> str:
        statuses = [u.status for u in self.call_updates(call_id) if u.status]
        return statuses[-1] if statuses else ""


@asynccontextmanager
async def serving(
    workspace: Path, fake: FakeOpenAI, editor: Editor, *args: str, fs: bool = False
) -> AsyncIterator[tuple[Any, InitializeResponse]]:
    """`agent acp` running, initialized; on exit stdin closes and it must end with 0."""
    environment = dict(os.environ, OPENAI_BASE_URL=fake.base_url)
    log = workspace.parent / "acp-stderr.txt"
    with log.open("ab") as stderr:
        async with asyncio.timeout(TIMEOUT):
            async with spawn_agent_process(
                editor,
                sys.executable,
                "-m",
                "agent_cli",
                "acp",
                "--cwd",
                str(workspace),
                *args,
                env=environment,
                cwd=workspace,
                transport_kwargs={"stderr": stderr},
            ) as (conn, process):
                capabilities = ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs)
                )
                hello = await conn.initialize(
                    protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities
                )
                yield conn, hello
            assert process.returncode == 0, log.read_text()
    assert "Traceback" not in log.read_text(), log.read_text()
    assert editor.unannounced == [], "a permission was asked before its tool call was sent"


async def test_a_session_streams_the_answer_and_its_reasoning(fake, workspace):
    (workspace / "notes.txt").write_text("alpha\n")
    (workspace / ".agent").mkdir()
    (workspace / ".agent" / "config.toml").write_text("max_rounds = 1\n")
    fake.add(
        text("Hello there, friend.", reasoning="The person greets me."),
        text("Seen."),
        tool_calls(call("get_info")),
        http_error(400, "the model is not loaded"),
    )
    editor = Editor()
    async with serving(workspace, fake, editor) as (conn, hello):
        capabilities = hello.agent_capabilities
        assert hello.protocol_version == PROTOCOL_VERSION
        assert capabilities.load_session is True
        assert capabilities.prompt_capabilities.embedded_context is True
        assert hello.agent_info.name == "agent" and hello.agent_info.version
        assert hello.auth_methods == []

        session = await conn.new_session(cwd=str(workspace))
        assert session.modes.current_mode_id == "ask"
        modes = [m.id for m in session.modes.available_modes]
        assert modes == ["ask", "auto", "read-only", "full", "plan"]

        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert answer.stop_reason == "end_turn"
        assert editor.said() == "Hello there, friend."
        assert editor.said("agent_thought_chunk") == "The person greets me."
        assert told(fake, 0) == "hi"

        # A link and an embedded file become text in our user message; the link, a file
        # in the workspace, is an `@path` mention, which attaches the file.
        link = ResourceContentBlock(
            type="resource_link", name="notes.txt", uri=(workspace / "notes.txt").as_uri()
        )
        embedded = EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri="file:///elsewhere/spec.md", text="# Spec"),
        )
        await conn.prompt(
            session_id=session.session_id,
            prompt=[text_block("look at "), link, text_block(" please"), embedded],
        )
        assert told(fake, 1) == (
            'look at @notes.txt please\n\n<context ref="file:///elsewhere/spec.md">\n# Spec\n'
            '</context>\n\n<attached file="notes.txt">\nalpha\n\n</attached>'
        )

        # The round limit (from the project's config) ends the turn with a notice.
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("info")])
        assert answer.stop_reason == "max_turn_requests"
        assert editor.said().endswith(
            "\n\n> Warning: Stopped after 1 rounds, the limit for one "
            "message. Send another message to let it go on.\n\n"
        )

        # A run that fails answers with an error carrying our sentence.
        with pytest.raises(RequestError) as failed:
            await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
        assert "the model is not loaded" in str(failed.value)

        with pytest.raises(RequestError, match="not an absolute path"):
            await conn.new_session(cwd="project")
        with pytest.raises(RequestError, match="does not exist"):
            await conn.new_session(cwd=str(workspace / "missing"))
        with pytest.raises(RequestError, match="no session"):
            await conn.prompt(session_id="nope", prompt=[text_block("hi")])

    stored = saved()
    assert [c["id"] for c in stored] == [session.session_id]
    assert stored[0]["workspace"] == str(workspace.resolve())


async def test_permissions_answered_allow_reject_always_and_modes_decide(fake, workspace):
    (workspace / "a.txt").write_text("alpha\n")
    fake.add(
        tool_calls(
            call("edit_file", path="a.txt", edits=[{"old_text": "alpha", "new_text": "beta"}])
        ),
        text("Edited."),
        tool_calls(call("exec_shell_command", command="touch made.txt")),
        text("Not done."),
        tool_calls(call("exec_shell_command", command="mkdir -p one")),
        tool_calls(call("exec_shell_command", command="mkdir -p two")),
        text("Both made."),
        text("Reading only."),
        tool_calls(call("write_file", path="w.txt", content="written\n")),
        text("Wrote it."),
        tool_calls(call("task", description="count files", prompt="Count the files.")),
        text("There are five files.", reasoning="Counting."),
        text("Five, says my helper."),
    )
    editor = Editor(answers=("allow-once", "reject-once", "allow-always"))
    async with serving(workspace, fake, editor) as (conn, _):
        session = (await conn.new_session(cwd=str(workspace))).session_id

        answer = await conn.prompt(session_id=session, prompt=[text_block("edit it")])
        assert answer.stop_reason == "end_turn"
        assert (workspace / "a.txt").read_text() == "beta\n"
        request, options = editor.permissions[0]
        assert [(o.option_id, o.kind) for o in options] == [
            ("allow-once", "allow_once"),
            ("allow-always", "allow_always"),
            ("reject-once", "reject_once"),
        ]
        assert request.kind == "edit" and request.title == "Edit a.txt"
        (diff,) = [c for c in request.content if c.type == "diff"]
        target = str(workspace.resolve() / "a.txt")
        assert (diff.path, diff.old_text, diff.new_text) == (target, "alpha\n", "beta\n")
        assert [loc.path for loc in request.locations] == [target]
        (started,) = editor.calls()
        assert (started.kind, started.status, started.tool_call_id) == (
            "edit",
            "pending",
            request.tool_call_id,
        )
        statuses = [u.status for u in editor.call_updates(started.tool_call_id) if u.status]
        assert statuses[-2:] == ["in_progress", "completed"]
        finished = editor.call_updates(started.tool_call_id)[-1]
        assert any(c.type == "diff" for c in finished.content)
        assert "Edited a.txt" in next(
            c.content.text for c in finished.content if c.type == "content"
        )

        await conn.prompt(session_id=session, prompt=[text_block("make a file")])
        command, _ = editor.permissions[1]
        assert command.kind == "execute" and "touch made.txt" in command.content[0].content.text
        assert editor.final_status(command.tool_call_id) == "failed"
        assert not (workspace / "made.txt").exists()
        assert "declined" in told(fake, 3)

        # "Always" allows the next such command without asking again.
        await conn.prompt(session_id=session, prompt=[text_block("make two")])
        assert len(editor.permissions) == 3
        assert "exec_shell_command(mkdir -p *)" in editor.permissions[2][1][1].name
        assert (workspace / "one").is_dir() and (workspace / "two").is_dir()
        assert editor.said().endswith("Both made.")

        # The mode decides what is offered and what is asked.
        await conn.set_session_mode(session_id=session, mode_id="read-only")
        await conn.prompt(session_id=session, prompt=[text_block("look")])
        assert "write_file" not in offered(fake, 7) and "read_file" in offered(fake, 7)
        await conn.set_session_mode(session_id=session, mode_id="full")
        await conn.prompt(session_id=session, prompt=[text_block("write")])
        assert (workspace / "w.txt").read_text() == "written\n"
        assert len(editor.permissions) == 3  # full mode asks nothing
        with pytest.raises(RequestError, match="no mode 'yolo'"):
            await conn.set_session_mode(session_id=session, mode_id="yolo")

        # A sub-agent's work is a "think" tool call and thoughts; the message is ours alone.
        editor.updates.clear()
        await conn.prompt(session_id=session, prompt=[text_block("delegate")])
        assert editor.said() == "Five, says my helper."
        assert editor.said("agent_thought_chunk") == "Counting.There are five files."
        (task,) = editor.calls()
        assert (task.kind, editor.final_status(task.tool_call_id)) == ("think", "completed")
    assert saved()[0]["mode"] == "full"


async def test_cancel_stops_a_streaming_run_and_a_waiting_permission(fake, workspace):
    stalled = raw(
        frames(chunk({"role": "assistant", "content": "Thinking about"}), done=False), stall=30
    )
    fake.add(
        stalled,
        tool_calls(call("write_file", path="x.txt", content="x")),
        text("Fine."),
        stalled,
    )
    editor = Editor(answers=(NEVER,))
    async with serving(workspace, fake, editor) as (conn, _):
        session = (await conn.new_session(cwd=str(workspace))).session_id

        running = asyncio.ensure_future(conn.prompt(session_id=session, prompt=[text_block("go")]))
        while not editor.said():
            await asyncio.sleep(0.01)
        await conn.cancel(session_id=session)
        assert (await running).stop_reason == "cancelled"
        assert editor.said().startswith("Thinking about")

        running = asyncio.ensure_future(
            conn.prompt(session_id=session, prompt=[text_block("write")])
        )
        await editor.asked.wait()
        await conn.cancel(session_id=session)
        assert (await running).stop_reason == "cancelled"
        (call_start,) = editor.calls()
        assert editor.final_status(call_start.tool_call_id) == "failed"
        assert not (workspace / "x.txt").exists()

        # The session goes on after a stop.
        answer = await conn.prompt(session_id=session, prompt=[text_block("and now?")])
        assert answer.stop_reason == "end_turn" and editor.said().endswith("Fine.")

        # The editor going away mid-run ends the run; the process exits 0 (see `serving`).
        running = asyncio.ensure_future(conn.prompt(session_id=session, prompt=[text_block("…")]))
        while not editor.said().endswith("Thinking about"):
            await asyncio.sleep(0.01)
    with contextlib.suppress(ConnectionError):
        await running
    (stored,) = saved()
    assert stored["state"] == "idle"
    assert stored["items"][-1] == {**stored["items"][-1], "kind": "notice", "text": "Stopped."}


async def test_load_replays_a_stored_conversation_and_goes_on(fake, workspace, tmp_path):
    (workspace / "notes.txt").write_text("alpha\n")
    fake.add(
        tool_calls(call("read_file", path="notes.txt")),
        text("It says alpha.", reasoning="Short file."),
        text("Still alpha."),
    )
    first = Editor()
    async with serving(workspace, fake, first) as (conn, _):
        session = (await conn.new_session(cwd=str(workspace))).session_id
        await conn.prompt(session_id=session, prompt=[text_block("read notes")])

    other = tmp_path / "other"
    other.mkdir()
    editor = Editor()
    async with serving(workspace, fake, editor) as (conn, _):
        loaded = await conn.load_session(cwd=str(workspace), session_id=session)
        assert loaded.modes.current_mode_id == "ask"
        kinds = [u.session_update for u in editor.updates]
        assert kinds == [
            "user_message_chunk",
            "tool_call",
            "agent_thought_chunk",
            "agent_message_chunk",
        ]
        assert editor.said("user_message_chunk") == "read notes"
        (replayed,) = editor.calls()
        assert (replayed.kind, replayed.status, replayed.title) == (
            "read",
            "completed",
            "Read notes.txt",
        )
        assert "alpha" in replayed.content[0].content.text
        assert editor.said() == "It says alpha."

        await conn.prompt(session_id=session, prompt=[text_block("and again?")])
        roles = [m["role"] for m in fake.requests[2]["messages"]]
        assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]

        with pytest.raises(RequestError, match="No conversation"):
            await conn.load_session(cwd=str(workspace), session_id="20000101-000000-abcdef")
        with pytest.raises(RequestError, match="belongs to"):
            await conn.load_session(cwd=str(other), session_id=session)


async def test_files_go_through_the_editor_inside_the_workspace_only(fake, workspace):
    (workspace / "notes.txt").write_text("on disk\n")
    (workspace.parent / "secret.txt").write_text("top secret\n")
    fake.add(
        tool_calls(
            call("read_file", path="notes.txt"),
            ("call_escape", "read_file", json.dumps({"path": "../secret.txt"})),
        ),
        tool_calls(call("write_file", path="out.txt", content="made\n")),
        tool_calls(call("write_file", path="../evil.txt", content="x")),
        text("Done."),
    )
    editor = Editor()
    notes = str(workspace.resolve() / "notes.txt")
    editor.buffers[notes] = "unsaved in the editor\n"
    async with serving(workspace, fake, editor, "--mode", "full", fs=True) as (conn, _):
        session = await conn.new_session(cwd=str(workspace))
        assert session.modes.current_mode_id == "full"
        await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])

    results = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert "unsaved in the editor" in results[0]
    assert "outside the workspace" in results[1] and "top secret" not in results[1]
    assert editor.reads == [notes]
    assert editor.writes == [(str(workspace.resolve() / "out.txt"), "made\n")]
    assert "outside the workspace" in told(fake, 3)
    assert not (workspace.parent / "evil.txt").exists()


async def test_without_a_provider_it_serves_and_each_prompt_says_how_to_configure_one(
    fake, workspace, isolated_home, monkeypatch
):
    # Started as editors start it: the SDK's trimmed environment by default (PATH,
    # HOME, ...), so the shell's OPENAI_BASE_URL never reaches it.
    monkeypatch.setenv("HOME", str(isolated_home))
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    editor = Editor()
    log = workspace.parent / "acp-stderr.txt"
    with log.open("wb") as stderr:
        async with asyncio.timeout(TIMEOUT):
            async with spawn_agent_process(
                editor,
                sys.executable,
                "-m",
                "agent_cli",
                "acp",
                cwd=workspace,
                transport_kwargs={"stderr": stderr},
            ) as (conn, process):
                hello = await conn.initialize(protocol_version=PROTOCOL_VERSION)
                assert hello.agent_info.name == "agent"
                session = await conn.new_session(cwd=str(workspace))
                assert session.modes.current_mode_id == "ask"
                for turn in (1, 2):
                    answer = await conn.prompt(
                        session_id=session.session_id, prompt=[text_block("hi")]
                    )
                    assert answer.stop_reason == "end_turn"
                    said = editor.said()
                    assert said.count("No model provider is configured") == turn
            assert process.returncode == 0
    sentence = said.split("\n\n")[1].removeprefix("> Error: ")
    assert sentence.startswith("No model provider is configured") and "[providers." in sentence
    assert said == f"\n\n> Error: {sentence}\n\n" * 2
    assert log.read_text().count(f"agent: {sentence}\n") == 2
    assert "Traceback" not in log.read_text()
    assert fake.requests == []  # the shell's server was never told about


def test_stdout_carries_only_the_protocol_even_into_a_file(fake, workspace, tmp_path):
    fake.add(text("Hi from a file."))
    replies, errors = tmp_path / "replies.jsonl", tmp_path / "stderr.txt"
    environment = dict(os.environ, OPENAI_BASE_URL=fake.base_url)
    with replies.open("wb") as stdout, errors.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "agent_cli", "acp"],
            stdin=subprocess.PIPE,
            stdout=stdout,
            stderr=stderr,
            cwd=workspace,
            env=environment,
        )
        assert process.stdin is not None

        def send(message: dict[str, Any]) -> None:
            assert process.stdin is not None
            process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
            process.stdin.flush()

        def answer(request: int) -> dict[str, Any]:
            deadline = time.monotonic() + TIMEOUT
            while time.monotonic() < deadline:
                for line in replies.read_text().splitlines():
                    message = json.loads(line)
                    if message.get("id") == request and "method" not in message:
                        return message
                time.sleep(0.02)
            raise AssertionError(f"no answer to request {request}: {replies.read_text()}")

        send({"id": 1, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION}})
        process.stdin.write(b"this is not JSON\n")
        send(
            {"id": 2, "method": "session/new", "params": {"cwd": str(workspace), "mcpServers": []}}
        )
        session = answer(2)["result"]["sessionId"]
        prompt = [{"type": "text", "text": "hi"}]
        send(
            {
                "id": 3,
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": prompt},
            }
        )
        assert answer(3)["result"] == {"stopReason": "end_turn"}
        process.stdin.close()
        assert process.wait(TIMEOUT) == 0

    lines = [json.loads(line) for line in replies.read_text().splitlines()]
    assert all(line["jsonrpc"] == "2.0" for line in lines)
    updates = [m["params"]["update"] for m in lines if m.get("method") == "session/update"]
    chunks = [u for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(c["content"]["text"] for c in chunks) == "Hi from a file."
    assert errors.read_text() == "agent acp: Error parsing JSON-RPC message\n"


def test_a_stdin_that_cannot_be_watched_still_ends_cleanly(fake, workspace):
    # /dev/null is a device epoll refuses: read by a thread, it is an immediate end.
    result = subprocess.run(
        [sys.executable, "-m", "agent_cli", "acp"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=workspace,
        env=dict(os.environ, OPENAI_BASE_URL=fake.base_url),
        timeout=TIMEOUT,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
