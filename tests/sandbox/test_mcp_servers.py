"""An MCP stdio server whose entry says `"sandbox": true` starts in the commands' sandbox,
with the network only when the entry also says so (SPEC §14); without one it is confined
by nothing and reaches what the user can."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

from agent_cli.tools.base import ToolContext
from agent_cli.tools.mcp import McpServers, ServerConfig
from tests.sandbox.conftest import make_sandbox
from tests.support.mcp_servers import stdio_args


def config(workspace: Path, **fields) -> ServerConfig:
    """The test server, from a copy in the workspace: the checkout may lie under /tmp,
    which bubblewrap replaces with a private one."""
    command, script, *args = stdio_args("--name", "probe", "--shell")
    shutil.copy(script, workspace / "server.py")
    return ServerConfig("probe", command=command, args=("server.py", *args), **fields)


async def shell_of(servers: McpServers):
    tools, notices = await servers.tools()
    sh = next((t for t in tools if t.name == "probe_sh"), None)
    assert sh is not None, notices

    async def run(command: str) -> str:
        return (await sh.run(ToolContext(None), {"command": command})).text

    return run


async def test_a_sandboxed_server_writes_only_the_workspace_and_reaches_no_port(
    kind, tmp_path, outside
):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    target = outside / "planted"
    servers = McpServers(
        [config(workspace, sandbox=True)], workspace, os.environ, sandbox=make_sandbox(kind)
    )
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        try:
            run = await shell_of(servers)
            assert (await run("echo in > inside.txt; cat inside.txt")).startswith("in\n")
            await run(f"echo x > {target}")
            probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), 2)"
            said = await run(f'python3 -c "{probe}" || echo refused')
            assert "refused" in said
        finally:
            await servers.aclose()
        listener.setblocking(False)
        try:
            listener.accept()
            raise AssertionError("the sandboxed server reached the listener")
        except BlockingIOError:
            pass
    assert (workspace / "inside.txt").read_text() == "in\n"
    assert not target.exists()


async def test_an_unsandboxed_server_is_not_confined(tmp_path: Path, outside):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    target = outside / "written"
    servers = McpServers([config(workspace)], workspace, os.environ, sandbox=make_sandbox("bwrap"))
    try:
        run = await shell_of(servers)
        assert "[exit 0]" in await run(f"echo x > {target}")
    finally:
        await servers.aclose()
    assert target.read_text() == "x\n"
