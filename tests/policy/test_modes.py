"""The one decision before every call: mode, rules and the read-only command rule (SPEC §8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.policy.modes import Verdict, check_mode, decide, offered
from agent_cli.policy.rules import RuleSet
from agent_cli.tools.base import Effect, Tool, ToolRegistry, ToolResult
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.workspace import Workspace

TOOLS = builtin_tools()


def _tool(name: str) -> Tool:
    found = TOOLS.get(name)
    assert found is not None
    return found


async def _nothing(ctx: object) -> ToolResult:
    return ToolResult("")


MCP_TOOL = Tool("docs_search", "", Effect.EXTERNAL, _nothing, {"type": "object"}, str, mcp="docs")

CALLS = {
    "read": ("read_file", {"path": "a.txt"}),
    "write": ("write_file", {"path": "a.txt", "content": "x"}),
    "edit": ("edit_file", {"path": "a.txt", "edits": []}),
    "ls": ("exec_shell_command", {"command": "ls -la"}),
    "touch": ("exec_shell_command", {"command": "touch b.txt"}),
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("a\n")
    return tmp_path.resolve()


@pytest.mark.parametrize(
    ("call", "mode", "verdict", "changes"),
    [
        ("read", "ask", Verdict.ALLOW, False),
        ("read", "read-only", Verdict.ALLOW, False),
        ("read", "full", Verdict.ALLOW, False),
        ("write", "ask", Verdict.ASK, True),
        ("edit", "ask", Verdict.ASK, True),
        ("write", "read-only", Verdict.REFUSE, True),
        ("write", "full", Verdict.ALLOW, True),
        ("ls", "ask", Verdict.ALLOW, False),  # provably only reads: no card, no checkpoint
        ("ls", "read-only", Verdict.ALLOW, False),
        ("touch", "ask", Verdict.ASK, True),
        ("touch", "read-only", Verdict.REFUSE, True),
        ("touch", "full", Verdict.ALLOW, True),
    ],
)
def test_modes_decide_from_the_declared_effect(
    ws: Path, call: str, mode: str, verdict: Verdict, changes: bool
) -> None:
    name, args = CALLS[call]
    decision = decide(_tool(name), args, mode, ws)
    assert decision.verdict is verdict
    assert decision.changes is changes
    if verdict is Verdict.REFUSE:
        assert "read-only mode" in decision.reason


def test_mcp_tools_ask_are_refused_in_read_only_and_run_in_full(ws: Path) -> None:
    assert decide(MCP_TOOL, {}, "ask", ws).verdict is Verdict.ASK
    assert decide(MCP_TOOL, {}, "read-only", ws).verdict is Verdict.REFUSE
    assert decide(MCP_TOOL, {}, "full", ws).verdict is Verdict.ALLOW


def test_a_deny_rule_wins_in_every_mode_even_over_a_read_only_command(ws: Path) -> None:
    rules = RuleSet(
        Workspace(ws),
        allow=("exec_shell_command", "write_file"),
        deny=("exec_shell_command(ls *)", "write_file(a.txt)"),
    )
    for mode in ("ask", "read-only", "full"):
        for call in ("ls", "write"):
            name, args = CALLS[call]
            decision = decide(_tool(name), args, mode, ws, rules)
            assert decision.verdict is Verdict.REFUSE, (mode, call)
            assert "A rule forbids this call" in decision.reason
    name, args = CALLS["touch"]
    assert decide(_tool(name), args, "ask", ws, rules).verdict is Verdict.ALLOW


def test_an_allow_rule_skips_the_card_and_says_which_rule_and_scope(ws: Path) -> None:
    rules = RuleSet(Workspace(ws), allow=("write_file(*.txt)",))
    rules.add("exec_shell_command(touch *)", "conversation")
    name, args = CALLS["write"]
    decision = decide(_tool(name), args, "ask", ws, rules)
    assert (decision.verdict, decision.rule) == (Verdict.ALLOW, "write_file(*.txt) (config)")
    name, args = CALLS["touch"]
    decision = decide(_tool(name), args, "ask", ws, rules)
    assert decision.rule == "exec_shell_command(touch *) (conversation)"
    # An allow rule does not lift read-only mode, and a call it does not cover still asks.
    assert decide(_tool(name), args, "read-only", ws, rules).verdict is Verdict.REFUSE
    edit_name, edit_args = CALLS["edit"]
    assert decide(_tool(edit_name), edit_args, "ask", ws, rules).verdict is Verdict.ASK


def test_tools_that_could_only_be_refused_are_not_offered() -> None:
    registry = ToolRegistry([*TOOLS, MCP_TOOL])
    assert offered(registry, "ask").names() == registry.names()
    assert offered(registry, "full").names() == registry.names()
    assert offered(registry, "read-only").names() == [
        "read_file",
        "file_glob_search",
        "grep_search",
        "get_info",
        "update_plan",  # a plan changes nothing
        "exec_shell_command",  # read-only commands still run
        "shell_output",  # reading a background command's output, and ending it, change nothing
        "shell_kill",
    ]


def test_an_unknown_mode_is_a_clear_error() -> None:
    assert check_mode("full") == "full"
    with pytest.raises(ValueError, match="use one of ask, auto, read-only, full"):
        check_mode("yolo")
