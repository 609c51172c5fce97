"""A language server starts in the commands' sandbox, with the network off (SPEC §14);
without a sandbox it reaches what the user can."""

from __future__ import annotations

import shutil
import socket
import sys
from pathlib import Path

from agent_cli.lsp.config import Found, ServerConfig
from agent_cli.lsp.servers import LanguageServers
from tests.lsp.conftest import FAKE
from tests.sandbox.conftest import make_sandbox
from tests.support.waiting import GENEROUS, within


async def network_said(workspace: Path, sandbox: object) -> list[str]:
    """What the fake server (a copy in the workspace: bubblewrap hides the host's /tmp)
    says when asked to connect to a loopback port that is listening."""
    shutil.copy(FAKE, workspace / "server.py")
    entry = Found(ServerConfig("fake", (sys.executable, "server.py"), ("*.py",)), sys.executable)
    servers = LanguageServers([entry], workspace, sandbox, settle_time=GENEROUS)  # type: ignore[arg-type]
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        code = workspace / "code.py"
        text = f"# NETWORK {listener.getsockname()[1]}\n"
        code.write_text(text)
        found = await within(servers.check(code, None, text))
        return [d.message for d in found.diagnostics] + found.notes
    finally:
        listener.close()
        await servers.aclose()


async def test_a_language_server_runs_in_the_sandbox_with_the_network_off(kind, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert await network_said(workspace, make_sandbox(kind)) == ["network: refused"]


async def test_without_a_sandbox_it_reaches_the_network_and_says_so_once(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    said = await network_said(workspace, make_sandbox("off"))
    assert said == [
        "network: connected",
        'language servers run without a sandbox: turned off by [sandbox] mode = "off" in the '
        "user's config",
    ]
