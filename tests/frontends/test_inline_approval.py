"""The inline card's text (agent run on a terminal, the line REPL)."""

from __future__ import annotations

from rich.console import Console

from agent_cli.engine.approval import ApprovalRequest
from agent_cli.engine.items import ToolItem
from agent_cli.frontends.inline_approval import _show


def shown(request: ApprovalRequest) -> str:
    console = Console(record=True, width=100, color_system=None)
    _show(console, request)
    return console.export_text()


async def test_an_mcp_call_shows_its_server_and_its_claim():
    claimed = ToolItem("docs_echo", "c1", title="docs: echo text=hi", mcp="docs")
    claimed.read_only_hint = True
    assert "[MCP: docs · readOnlyHint: true]" in shown(ApprovalRequest(claimed, "tool"))
    silent = ToolItem("docs_add", "c2", title="docs: add", mcp="docs")
    assert "[MCP: docs · no readOnlyHint]" in shown(ApprovalRequest(silent, "tool"))
    ours = ToolItem("exec_shell_command", "c3", title="$ touch x")
    text = shown(ApprovalRequest(ours, "command", command="touch x", cwd="/w"))
    assert "MCP" not in text and "$ touch x" in text and "in /w" in text
