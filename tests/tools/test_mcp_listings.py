"""Remembered MCP listings: a conversation is offered a server's tools without waiting for
it, and the server starts when one of them is called (real SDK servers, as in test_mcp)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_cli.tools import mcp_listings
from agent_cli.tools.base import ToolContext
from agent_cli.tools.mcp import McpServers, ServerConfig
from tests.support.mcp_servers import stdio_args

CTX = ToolContext(None)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder.resolve()


def docs(pids: Path, *options: str) -> ServerConfig:
    command, *args = stdio_args("--name", "docs", "--pids", str(pids), *options)
    return ServerConfig("docs", command=command, args=tuple(args))


async def offered(config: ServerConfig, workspace: Path) -> tuple[McpServers, dict, list[str]]:
    servers = McpServers([config], workspace, os.environ)
    tools, notices = await servers.tools()
    return servers, {t.name: t for t in tools}, notices


async def test_a_second_session_is_offered_the_tools_and_starts_the_server_on_a_call(
    workspace: Path, tmp_path: Path
):
    pids = tmp_path / "pids.json"
    config = docs(pids)
    first, tools, _ = await offered(config, workspace)
    await first.aclose()
    assert pids.exists()  # the first session had to start it to learn its tools
    pids.unlink()

    second, again, notices = await offered(config, workspace)
    try:
        assert notices == [] and again.keys() == tools.keys()
        assert again["docs_echo"].parameters == tools["docs_echo"].parameters
        assert again["docs_echo"].read_only_hint is True
        assert not pids.exists()  # offered from memory: nothing started
        result = await again["docs_echo"].run(CTX, {"text": "hi"})
        assert (result.text, result.is_error) == ("hi", False)
        assert pids.exists() and not second.listed_anew
    finally:
        await second.aclose()


async def test_a_tool_the_server_no_longer_lists_is_refused_then_the_new_list_offered(
    workspace: Path, tmp_path: Path
):
    config = docs(tmp_path / "pids.json")
    servers = McpServers([config], workspace, os.environ)
    key = servers._servers[0].key
    old = mcp_listings.Listed("retired", None, "Gone since.", {"type": "object"}, None)
    mcp_listings.remember(key, [old])
    try:
        tools, _ = await servers.tools()
        assert [t.name for t in tools] == ["docs_retired"]
        result = await tools[0].run(CTX, {})
        assert result.is_error and "no longer offers the tool 'retired'" in result.text
        assert servers.listed_anew
        fresh, _ = await servers.tools()  # what the next message is offered
        assert "docs_echo" in {t.name for t in fresh} and "docs_retired" not in fresh
        assert not servers.listed_anew
    finally:
        await servers.aclose()
    kept = mcp_listings.recall(key)
    assert kept is not None and "echo" in {t.name for t in kept}


async def test_a_server_that_fails_is_forgotten_and_then_started_up_front(
    workspace: Path, tmp_path: Path
):
    config = ServerConfig("gone", command=str(tmp_path / "no-such-program"))
    servers = McpServers([config], workspace, os.environ)
    key = servers._servers[0].key
    mcp_listings.remember(key, [mcp_listings.Listed("echo", None, "", {}, None)])
    try:
        (tool,), _ = await servers.tools()
        result = await tool.run(CTX, {})
        assert result.is_error and "could not be started:" in result.text
        assert "not found" in result.text
    finally:
        await servers.aclose()
    assert mcp_listings.recall(key) is None
    again = McpServers([config], workspace, os.environ)
    try:
        tools, notices = await again.tools()
        assert tools == [] and "'gone' was left out" in notices[0]
    finally:
        await again.aclose()


def test_the_key_follows_what_starts_the_server(workspace: Path, tmp_path: Path):
    base = ServerConfig("s", command="srv", args=("--a",), env={"T": "${TOKEN}"})
    key = mcp_listings.listing_key(base.identity(workspace))
    changed = [
        ServerConfig("s", command="srv", args=("--b",), env={"T": "${TOKEN}"}),
        ServerConfig("s", command="srv2", args=("--a",), env={"T": "${TOKEN}"}),
        ServerConfig("s", command="srv", args=("--a",), env={"T": "other"}),
        ServerConfig("s", command="srv", args=("--a",), env={"T": "${TOKEN}"}, cwd="sub"),
    ]
    assert all(mcp_listings.listing_key(c.identity(workspace)) != key for c in changed)
    assert mcp_listings.listing_key(base.identity(tmp_path)) != key  # another workspace
    allowed = ServerConfig("s", command="srv", args=("--a",), env={"T": "${TOKEN}"}, allow=("x",))
    assert mcp_listings.listing_key(allowed.identity(workspace)) == key  # same server, filtered


def test_an_unreadable_memory_is_no_memory():
    key = mcp_listings.listing_key(["x"])
    mcp_listings.remember(key, [mcp_listings.Listed("t", "T", "d", {"type": "object"}, True)])
    assert mcp_listings.recall(key) == [
        mcp_listings.Listed("t", "T", "d", {"type": "object"}, True)
    ]
    file = next((Path(os.environ["XDG_CACHE_HOME"]) / "agent").rglob(f"{key}.json"))
    file.write_text("{not json")
    assert mcp_listings.recall(key) is None
    file.write_text('{"format": 0, "tools": []}')
    assert mcp_listings.recall(key) is None
