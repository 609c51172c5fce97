"""The slash commands reach what surrounds the conversation only through the port
wiring hands them (its `Bench`); a front end without one says so."""

from __future__ import annotations

import pytest

from agent_cli.frontends.interactive import Interactive
from agent_cli.providers.scripted import answer
from agent_cli.wiring import Bench
from tests.support.sessions import make_session


@pytest.mark.parametrize("command", ["/mcp", "/skills", "/tasks", "/diff", "/undo"])
async def test_without_a_bench_the_command_says_it_is_not_available(tmp_path, command):
    session, _, _ = make_session(tmp_path, [answer("Hi.")])
    reply = await Interactive(session, None, lambda _c: session).handle(command)
    assert reply.level == "error"
    assert reply.text == f"`{command}` is not available in this front end."


async def test_the_bench_reads_the_workspace_when_asked(tmp_path):
    session, _, _ = make_session(tmp_path, [answer("Hi.")])
    interactive = Interactive(session, None, lambda _c: session, bench=Bench(tmp_path))
    reply = await interactive.handle("/diff")
    assert reply.text == "This folder is not a git repository, so there is no diff to show."
    (tmp_path / ".agent").mkdir()
    (tmp_path / ".agent" / "mcp.json").write_text('{"mcpServers": {"t": {"command": "x"}}}')
    reply = await interactive.handle("/mcp")
    assert "| `t` |" not in reply.text and "are not trusted yet" in reply.text
