"""`auto`: the sandbox carries the risk of commands and workspace edits; the rest asks
(SPEC §8, §14). A sub-agent's mode never goes above its parent's."""

from __future__ import annotations

from pathlib import Path

from agent_cli.policy.modes import STRICTNESS, Verdict, capped, decide
from agent_cli.policy.rules import RuleSet
from agent_cli.tools.base import Effect, Tool, ToolResult
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.workspace import Workspace

TOOLS = builtin_tools()
SHELL = TOOLS.get("exec_shell_command")
WRITE = TOOLS.get("write_file")


async def _nothing(ctx: object) -> ToolResult:
    return ToolResult("")


MCP_TOOL = Tool("docs_search", "", Effect.EXTERNAL, _nothing, {"type": "object"}, str, mcp="docs")


def verdict(tool, args, ws: Path, sandboxed: bool = True, rules=None) -> Verdict:
    assert tool is not None
    return decide(tool, args, "auto", ws, rules, sandboxed).verdict


def test_sandboxed_commands_run_without_a_card(tmp_path):
    assert verdict(SHELL, {"command": "npm test && rm -rf build"}, tmp_path) is Verdict.ALLOW


def test_without_a_sandbox_commands_ask_as_in_ask_mode(tmp_path):
    assert verdict(SHELL, {"command": "touch x"}, tmp_path, sandboxed=False) is Verdict.ASK
    assert verdict(SHELL, {"command": "ls"}, tmp_path, sandboxed=False) is Verdict.ALLOW


def test_workspace_edits_run_but_where_code_runs_later_asks(tmp_path):
    (tmp_path / ".agent").mkdir()
    (tmp_path / "cfg").symlink_to(tmp_path / ".agent")
    assert verdict(WRITE, {"path": "src/a.py", "content": ""}, tmp_path) is Verdict.ALLOW
    for path in (".agent/config.toml", "cfg/mcp.json", ".git/hooks/x", "sub/../.agent/x"):
        assert verdict(WRITE, {"path": path, "content": ""}, tmp_path) is Verdict.ASK, path
    assert verdict(WRITE, {"path": "../outside.txt", "content": ""}, tmp_path) is Verdict.ASK


def test_mcp_tools_always_ask(tmp_path):
    assert verdict(MCP_TOOL, {}, tmp_path) is Verdict.ASK


def test_a_deny_rule_still_wins(tmp_path):
    rules = RuleSet(Workspace(tmp_path), deny=("exec_shell_command(curl *)",))
    assert verdict(SHELL, {"command": "curl x"}, tmp_path, rules=rules) is Verdict.REFUSE


def test_an_unsandboxed_rule_lets_a_command_leave_in_every_mode_but_read_only(tmp_path):
    rules = RuleSet(Workspace(tmp_path))
    rules.add("exec_shell_command(npm install *)", "conversation", unsandboxed=True)
    args = {"command": "npm install left-pad"}
    for mode in ("ask", "auto", "full"):
        decision = decide(SHELL, args, mode, tmp_path, rules, True)
        assert decision.verdict is Verdict.ALLOW and decision.unsandboxed, mode
        assert decision.rule == "exec_shell_command(npm install *), unsandboxed (conversation)"
    assert decide(SHELL, args, "read-only", tmp_path, rules, True).verdict is Verdict.REFUSE
    other = decide(SHELL, {"command": "npm publish"}, "auto", tmp_path, rules, True)
    assert not other.unsandboxed


def test_auto_sits_between_ask_and_full_for_a_sub_agents_cap():
    assert STRICTNESS == ("read-only", "plan", "ask", "auto", "full")
    assert capped("full", "auto") == "auto" and capped("auto", "ask") == "ask"
    assert capped("auto", "full") == "auto" and capped("read-only", "auto") == "read-only"
