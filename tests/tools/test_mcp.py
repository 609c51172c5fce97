"""MCP servers against real servers written with the SDK (tests/support/mcp_servers).

Each server is a subprocess started by the client as a person's config would
start it; the Streamable HTTP one is a subprocess listening on loopback.
Starting an SDK server takes a second or two (the SDK's import), so tests
share one server where they can.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_cli.backends.loop import BuiltinLoop, LoopParts, LoopSettings
from agent_cli.backends.prompt import system_prompt
from agent_cli.engine.items import Conversation, ToolItem
from agent_cli.engine.session import Session
from agent_cli.providers.scripted import ScriptedProvider, answer, calls
from agent_cli.tools.base import ArgumentError, Effect, ToolContext, ToolRegistry, ToolResult
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.environment import EnvironmentPolicy
from agent_cli.tools.mcp import McpServers, McpTool, ServerConfig, to_result, tool_name
from agent_cli.tools.workspace import Workspace
from tests.support.mcp_servers import SERVER, stdio_args
from tests.support.waiting import FOREVER, GENEROUS, eventually, within

CTX = ToolContext(None)


def stdio(name: str, *options: str, **fields) -> ServerConfig:
    command, *args = stdio_args("--name", name, *options)
    return ServerConfig(name, command=command, args=tuple(args), **fields)


def by_name(tools) -> dict[str, McpTool]:
    return {t.name: t for t in tools}


async def call(tool: McpTool, **arguments):
    return await tool.run(CTX, arguments)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder.resolve()


def gone(pid: int) -> bool:
    """Not running: no such process, or a zombie (nothing here reaps orphans)."""
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True)
    return state.returncode != 0 or state.stdout.strip().startswith("Z")


# ------------------------------------------------------------------ stdio


async def test_stdio_server_tools_and_results(workspace: Path):
    env = {**os.environ, "AGENT_TEST_VISIBLE": "seen", "AGENT_TEST_API_KEY": "hidden"}
    config = stdio("docs", env={"FROM_ENTRY": "${AGENT_TEST_VISIBLE}-x"})
    servers = McpServers([config], workspace, env)
    try:
        tools, notices = await servers.tools()
        assert notices == []
        found = by_name(tools)
        assert {"docs_echo", "docs_fail", "docs_media", "docs_do_thing_x"} <= set(found)
        echo = found["docs_echo"]
        assert echo.effect is Effect.EXTERNAL and echo.mcp == "docs"
        assert echo.description.startswith("Say the text back.")
        assert echo.parameters["properties"]["text"]["type"] == "string"
        assert echo.read_only_hint is True and servers.hints["docs_echo"] is True
        assert servers.hints["docs_add"] is None
        assert echo.title({"text": "hi"}) == "docs: echo text=hi"
        assert found["docs_do_thing_x"].server_tool == "do.thing/x"

        assert await call(echo, text="hello") == ToolResult("hello")
        assert (await call(found["docs_add"], a=2, b=3)).text == "5"
        assert (await call(found["docs_do_thing_x"])).text == "done"
        failed = await call(found["docs_fail"], message="no way")
        assert failed.is_error and "fail" in failed.text

        media = (await call(found["docs_media"])).text.splitlines()
        assert media[0] == "here you are"
        assert media[1] == "[image: image/png, 2.0 KiB]"
        assert media[2] == "[audio: audio/wav, 2.0 KiB]"
        assert media[3:5] == ["[resource file:///notes.txt (text/plain)]", "note text"]
        assert "blob.bin (application/octet-stream): 2.0 KiB of binary data" in media[5]
        assert media[6] == (
            "[resource link report <file:///report.pdf> (application/pdf): the full report]"
        )

        who = json.loads((await call(found["docs_whoami"])).text)
        assert who["cwd"] == str(workspace)  # no cwd in the entry: the workspace
        assert who["env"] == {
            "AGENT_TEST_VISIBLE": "seen",
            "AGENT_TEST_API_KEY": None,  # secrets are scrubbed
            "FROM_ENTRY": "seen-x",  # the entry's own env, ${VAR} expanded
        }
        status = await servers.status()
        assert status[0].state == "ok" and ("docs_echo", "Say the text back.") in status[0].tools
    finally:
        await servers.aclose()


async def test_a_stopped_call_is_cancelled_and_the_server_goes_on(workspace: Path, tmp_path: Path):
    naps = tmp_path / "naps"
    servers = McpServers([stdio("s", "--naps", str(naps), timeout_ms=1000)], workspace, os.environ)
    try:
        found = by_name((await servers.tools())[0])
        task = asyncio.ensure_future(call(found["s_nap"], seconds=FOREVER))
        await eventually(naps.exists, "the call to reach the server")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await within(task)  # only the cancel ends an hour's nap
        assert (await call(found["s_echo"], text="still here")).text == "still here"

        slow = await call(found["s_nap"], seconds=5)  # longer than the entry's timeout_ms
        assert slow.is_error and "did not answer within 1 s" in slow.text
        assert (await call(found["s_nap"], seconds=0.01)).text == "slept 0.01"
    finally:
        await servers.aclose()


async def test_a_server_that_crashes_mid_call_is_restarted_by_the_next_call(workspace: Path):
    servers = McpServers([stdio("c")], workspace, os.environ)
    try:
        found = by_name((await servers.tools())[0])
        before = json.loads((await call(found["c_whoami"])).text)["pid"]
        crashed = await call(found["c_crash"])
        assert crashed.is_error and "stopped during the call" in crashed.text
        after = json.loads((await call(found["c_whoami"])).text)["pid"]
        assert after != before and gone(before)
    finally:
        await servers.aclose()


async def test_close_ends_the_whole_process_group(workspace: Path, tmp_path: Path):
    pids = tmp_path / "pids.json"
    servers = McpServers([stdio("g", "--pids", str(pids), "--child")], workspace, os.environ)
    await servers.tools()
    started = json.loads(pids.read_text())
    assert not gone(started["server"]) and not gone(started["child"])
    await servers.aclose()
    assert gone(started["server"]) and gone(started["child"])


# ------------------------------------------------- starting, names, filters


async def test_closing_while_servers_start_ends_them_at_once(workspace: Path, tmp_path: Path):
    pids = tmp_path / "pids.json"
    never = tmp_path / "never"  # the server waits for it to go on starting
    servers = McpServers(
        [stdio("slow", "--pids", str(pids), "--wait-for", str(never))],
        workspace,
        os.environ,
        start_timeout=FOREVER,  # nothing but the close ends the start
    )
    loading = asyncio.ensure_future(servers.tools())
    await eventually(pids.exists, "the server to be spawned")
    await within(servers.aclose())
    assert gone(json.loads(pids.read_text())["server"])
    tools, notices = await loading
    assert tools == [] and "'slow' was left out" in notices[0]


async def test_servers_start_together(workspace: Path, tmp_path: Path):
    """Two servers that each wait for a file before they finish starting: started one
    after the other, the second would not even be spawned until the first had started,
    and the file comes only once both have been."""
    files = [tmp_path / "a.json", tmp_path / "b.json"]
    go = tmp_path / "go"
    configs = [stdio(f.stem, "--pids", str(f), "--wait-for", str(go)) for f in files]
    servers = McpServers(configs, workspace, os.environ, start_timeout=GENEROUS)
    try:
        loading = asyncio.ensure_future(servers.tools())
        await eventually(lambda: all(f.exists() for f in files), "both servers to be spawned")
        go.touch()
        tools, notices = await within(loading)
        assert notices == [] and {"a_echo", "b_echo"} <= {t.name for t in tools}
    finally:
        await servers.aclose()


async def test_slow_and_broken_servers_are_left_out_with_a_notice(workspace: Path, tmp_path: Path):
    pids = tmp_path / "pids.json"
    configs = [
        stdio("slow", "--pids", str(pids), "--wait-for", str(tmp_path / "never")),
        ServerConfig("missing", command=str(workspace / "no-such-program")),
        ServerConfig("chatty", command="/bin/sh", args=("-c", "echo hello; echo oops >&2")),
        ServerConfig("off", command="/bin/false", disabled=True),
    ]
    servers = McpServers(configs, workspace, os.environ, start_timeout=0.5)
    try:
        tools, notices = await within(servers.tools())  # only the start timeout ends 'slow'
        assert tools == []
        text = "\n".join(notices)
        assert "'slow' was left out: it did not start within 0.5 s" in text
        assert "'missing' was left out: the program" in text and "not found" in text
        assert "'chatty' was left out" in text and "its last output: oops" in text
        assert "off" not in text
        assert gone(json.loads(pids.read_text())["server"])  # killed, not left sleeping
        states = {s.config.name: s.state for s in await servers.status()}
        assert states == {
            "slow": "failed",
            "missing": "failed",
            "chatty": "failed",
            "off": "disabled",
        }
    finally:
        await servers.aclose()


async def test_name_collisions_and_allow_deny(workspace: Path):
    configs = [
        stdio("x.y", allow=("echo", "a*")),
        stdio("x_y", deny=("add", "me*")),
    ]
    servers = McpServers(configs, workspace, os.environ)
    try:
        tools, notices = await servers.tools()
        owners = {t.name: (t.mcp, t.server_tool) for t in tools}
        assert owners["x_y_echo"] == ("x.y", "echo")
        assert owners["x_y_add"] == ("x.y", "add")
        assert owners["x_y_fail"] == ("x_y", "fail")
        assert "x_y_media" not in owners  # denied on x_y, not allowed on x.y
        assert notices == [
            "The MCP tool 'echo' of 'x_y' was left out: its name 'x_y_echo' is taken by "
            "'echo' of 'x.y'."
        ]  # 'add' of x_y is denied, so it never collides
    finally:
        await servers.aclose()


def test_tool_names_are_sanitised_and_capped():
    assert tool_name("my server", "get.page/v2") == "my_server_get_page_v2"
    assert tool_name("é", "ok") == "__ok"
    assert len(tool_name("s" * 40, "t" * 40)) == 64


def test_mcp_tools_pass_any_schema_through_and_check_only_required():
    async def nothing(_ctx, /, **_arguments):
        raise AssertionError

    schema = {
        "type": "object",
        "properties": {
            "filters": {"type": "array", "items": {"type": "object"}},
            "choice": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "free": {"type": "object"},
            "odd": {"type": "frobnicate"},
        },
        "required": ["filters"],
    }
    tool = McpTool("s_t", "", Effect.EXTERNAL, nothing, schema, lambda _: "", mcp="s")
    arguments = {
        "filters": [{"field": "a", "op": "="}],
        "choice": 3,
        "free": {"anything": [1, 2]},
        "odd": "x",
        "extra": True,
    }
    assert tool.check(arguments) == arguments
    with pytest.raises(ArgumentError, match="'filters'"):
        tool.check({"choice": 1})
    with pytest.raises(ArgumentError, match="JSON object"):
        tool.check([1])  # type: ignore[arg-type]


def test_structured_only_and_empty_results():
    from mcp_types import CallToolResult

    structured = to_result(CallToolResult(content=[], structured_content={"n": 1}))
    assert json.loads(structured.text) == {"n": 1} and not structured.is_error
    empty = to_result(CallToolResult(content=[], is_error=True))
    assert empty == ToolResult("(the tool returned nothing)", is_error=True)


# ------------------------------------------------------------------- HTTP


@pytest.fixture
def http_server(tmp_path: Path):
    """The test server on Streamable HTTP, in a subprocess on a free loopback port."""
    yield from _served(tmp_path, "--http", "/mcp")


@pytest.fixture
def sse_server(tmp_path: Path):
    """The test server on the legacy HTTP+SSE transport."""
    yield from _served(tmp_path, "--sse", "/sse")


def _served(tmp_path: Path, transport: str, path: str):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = (tmp_path / "http.log").open("w")
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--name", "web", transport, str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while True:
        with socket.socket() as attempt:
            if attempt.connect_ex(("127.0.0.1", port)) == 0:
                break
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(
                f"the HTTP server did not start: {(tmp_path / 'http.log').read_text()}"
            )
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        process.kill()
        process.wait()
        log.close()


async def test_streamable_http_server_with_headers(workspace: Path, http_server: str):
    config = ServerConfig(
        "web", url=http_server, headers={"X-Team": "${TEAM_NAME}", "X-Fixed": "yes"}
    )
    servers = McpServers([config], workspace, {"TEAM_NAME": "blue"})
    try:
        tools, notices = await servers.tools()
        assert notices == []
        found = by_name(tools)
        assert (await call(found["web_echo"], text="over http")).text == "over http"
        assert (await call(found["web_header"], name="x-team")).text == "blue"
        assert (await call(found["web_fail"], message="x")).is_error
    finally:
        await servers.aclose()


async def test_an_sse_entry_uses_the_legacy_transport(workspace: Path, sse_server: str):
    config = ServerConfig("web", url=sse_server, sse=True, headers={"X-Team": "${TEAM_NAME}"})
    servers = McpServers([config], workspace, {"TEAM_NAME": "green"})
    try:
        tools, notices = await servers.tools()
        assert notices == []
        found = by_name(tools)
        assert (await call(found["web_echo"], text="over sse")).text == "over sse"
        assert (await call(found["web_header"], name="x-team")).text == "green"
    finally:
        await servers.aclose()
    # The same address spoken to as Streamable HTTP is no MCP server: the transport mattered.
    plain = McpServers([ServerConfig("web", url=sse_server)], workspace, {}, start_timeout=5)
    try:
        tools, notices = await plain.tools()
        assert tools == [] and "left out" in notices[0]
    finally:
        await plain.aclose()


# ---------------------------------------------------------- through the loop


async def test_the_loop_offers_and_calls_mcp_tools_and_read_only_starts_none(workspace: Path):
    servers = McpServers([stdio("docs")], workspace, os.environ)
    loads: list[str] = []

    class CountingSource:
        """The servers as the loop's tool source, counting the loads."""

        listed_anew = False

        @property
        def offering(self) -> int:
            return servers.offering

        async def tools(self):
            loads.append("loaded")
            return await servers.tools()

        async def aclose(self) -> None:
            await servers.aclose()

    provider = ScriptedProvider(
        [answer("just reading"), calls(("c1", "docs_echo", '{"text": "hi"}')), answer("done")]
    )

    def backend(_conversation: Conversation) -> BuiltinLoop:
        return BuiltinLoop(
            provider=provider,
            tools=ToolRegistry(builtin_tools()),
            context=ToolContext(Workspace(workspace)),
            settings=LoopSettings("scripted-model", workspace),
            system_prompt=lambda mode: system_prompt(workspace, mode),
            parts=LoopParts(extra_tools=CountingSource()),
        )

    session = Session(Conversation(workspace=str(workspace), mode="read-only"), backend, None)
    try:
        await session.send("look around")
        assert loads == [] and "docs_echo" not in [t.name for t in provider.requests[0].tools]
        session.set_mode("full")
        await session.send("now echo")
        assert loads == ["loaded"]
        assert "docs_echo" in [t.name for t in provider.requests[1].tools]
        item = next(i for i in session.conversation.items if isinstance(i, ToolItem))
        assert (item.tool, item.mcp, item.state, item.result) == ("docs_echo", "docs", "done", "hi")
        assert item.read_only_hint is True  # the server's claim, for the card to show
    finally:
        await session.aclose()
        await servers.aclose()


async def test_an_http_server_that_is_not_running_is_said_plainly(workspace: Path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = ServerConfig("web", url=f"http://127.0.0.1:{port}/mcp")
    servers = McpServers([config], workspace, os.environ)
    tools, notices = await servers.tools()
    await servers.aclose()
    assert tools == []
    assert (
        "'web' was left out: nothing answers at its address (is the server running?)"
        in (notices[0])
    )


# ------------------------------------------------------------ the environment


async def test_a_stdio_server_inherits_the_environment_the_policy_allows(workspace: Path):
    """[shell_environment] filters what a server inherits; its entry's own `env` adds on top,
    and `${VAR}` there still reads the user's whole environment (how an entry names a key)."""
    env = {**os.environ, "AGENT_TEST_VISIBLE": "seen", "AGENT_TEST_API_KEY": "sk-entry"}
    policy = EnvironmentPolicy(ignore_default_excludes=True, exclude=("agent_test_visible",))
    config = stdio("envd", env={"FROM_ENTRY": "${AGENT_TEST_VISIBLE}-x"})
    servers = McpServers([config], workspace, env, env_policy=policy)
    try:
        tools, notices = await servers.tools()
        assert notices == []
        who = json.loads((await call(by_name(tools)["envd_whoami"])).text)
        assert who["env"] == {
            "AGENT_TEST_VISIBLE": None,  # excluded by the policy's glob, in any case
            "AGENT_TEST_API_KEY": "sk-entry",  # the default excludes were turned off
            "FROM_ENTRY": "seen-x",  # expanded from the whole environment all the same
        }
    finally:
        await servers.aclose()
