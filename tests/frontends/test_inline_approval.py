"""The inline card's text (agent run on a terminal, the line REPL)."""

from __future__ import annotations

import asyncio

from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from agent_cli.engine.approval import ApprovalRequest, Decision
from agent_cli.engine.events import ApprovalRequested
from agent_cli.engine.items import ToolItem
from agent_cli.frontends.inline_approval import InlineApprover, _show


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


async def test_a_command_the_sandbox_stopped_says_what_and_asks_to_run_it_outside():
    item = ToolItem("exec_shell_command", "c4", title="$ npm install")
    request = ApprovalRequest(
        item, "command", command="npm install", cwd="/w", outside="the network"
    )
    text = shown(request)
    assert "The sandbox stopped it: the network." in text
    assert "Run it again outside the sandbox, unconfined?" in text
    assert "The sandbox" not in shown(ApprovalRequest(item, "command", command="ls", cwd="/w"))


async def answered(request: ApprovalRequest, typed: str) -> Decision:
    """Answer the card the way a person would, through prompt-toolkit reading a pipe."""
    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        keys.send_text(typed)
        InlineApprover(set_mode=lambda mode: None, on_interrupt=lambda: None)(
            ApprovalRequested(request)
        )
        return await asyncio.wait_for(request.wait(), 10)


COMPOUND_RULES = "exec_shell_command(python3 -c 'print(1)')\nexec_shell_command(echo done)"


def compound(suggested: str) -> ApprovalRequest:
    item = ToolItem("exec_shell_command", "c4", title="$ python3 -c … && echo done")
    command = "python3 -c 'print(1)' && echo done"
    return ApprovalRequest(item, "command", command=command, cwd="/w", suggested_rule=suggested)


async def test_always_on_a_compound_line_lists_each_rule_and_keeps_them_all(capfd):
    decision = await answered(compound(COMPOUND_RULES), "a\r\rp\r")  # Enter keeps them
    assert decision == Decision("always", rule=COMPOUND_RULES, scope="project")
    told = capfd.readouterr().err
    assert "must match one of these rules" in told
    assert "  exec_shell_command(python3 -c 'print(1)')\n  exec_shell_command(echo done)" in told


async def test_always_with_no_rule_to_offer_says_so_and_allows_once(capfd):
    assert await answered(compound(""), "a\r\r") == Decision("yes")  # Enter: once
    assert "No rule can allow this line" in capfd.readouterr().err
