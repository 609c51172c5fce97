"""Modes and the one decision the loop asks before every call (SPEC §8).

`decide` answers allow, ask or refuse for a call from the tool's declared side
effect, the mode, the rules and — for commands — the read-only rule. Tools
never decide approval themselves.

`auto` lets the sandbox carry the risk (SPEC §14): a command runs without a
card when it runs sandboxed, an edit when it stays in the workspace and off
the paths that run later outside any control (`.git`, `.agent`). MCP calls
still ask: the sandbox does not hold them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple, Protocol

# The modes' names live in a module of their own (see there); importers here still find them.
from agent_cli.policy.mode_names import IMPLEMENT_MODES as IMPLEMENT_MODES
from agent_cli.policy.mode_names import MODES as MODES
from agent_cli.policy.mode_names import MODES_TEXT as MODES_TEXT
from agent_cli.policy.mode_names import READ_ONLY_MODES as READ_ONLY_MODES
from agent_cli.policy.mode_names import STRICTNESS as STRICTNESS
from agent_cli.tools.base import Effect, Tool, ToolRegistry

PROTECTED_NAMES = (".git", ".agent")
SHELL_TOOL = "exec_shell_command"


class Verdict(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    REFUSE = "refuse"


class PolicyDecision(NamedTuple):
    verdict: Verdict
    reason: str = ""  # for REFUSE: what the model reads
    rule: str = ""  # for ALLOW by a rule: which rule, and from which scope
    changes: bool = True  # False for reads and read-only commands: no checkpoint needed
    unsandboxed: bool = False  # a rule lets this command run outside the sandbox


class Rules(Protocol):
    """Allow/deny rules; `match` returns ("allow"|"deny"|"unsandboxed", "rule (scope)") or
    None ("unsandboxed": an allow kept from the card that let a command leave the sandbox)."""

    def match(self, tool: str, args: Mapping[str, Any]) -> tuple[str, str] | None: ...


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    return mode


def reads_only(mode: str) -> bool:
    """Whether `mode` allows no change at all (read-only, plan)."""
    return mode in READ_ONLY_MODES


def switched_to(mode: str) -> str:
    """What the model reads of a call the person declined by switching to a mode without
    changes (on an approval card)."""
    return f"The person switched to {mode} mode."


def capped(mode: str, cap: str) -> str:
    """The stricter of two modes."""
    return min(mode, cap, key=STRICTNESS.index)


def offered(tools: ToolRegistry, mode: str) -> ToolRegistry:
    """Only the tools that could be allowed: a tool that could only be refused is not offered,
    nor one not available now (the LSP tools while no language server runs)."""
    if any(t.available is not None for t in tools):
        tools = tools.filtered(lambda t: t.available is None or t.available())
    if not reads_only(mode):
        return tools
    # Commands stay: a read-only command may run in read-only mode.
    return tools.filtered(lambda t: t.effect in (Effect.READ, Effect.EXEC))


def decide(
    tool: Tool,
    args: Mapping[str, Any],
    mode: str,
    workspace: Path,
    rules: Rules | None = None,
    sandboxed: bool = False,
    owner: str = "the conversation",
) -> PolicyDecision:
    """`sandboxed`: commands run in an OS sandbox (what `auto` relies on); `owner`: whose
    mode `mode` is (a sub-agent's own may be stricter than the conversation's)."""
    if tool.effect is Effect.READ:
        return PolicyDecision(Verdict.ALLOW, changes=False)
    matched = rules.match(tool.name, args) if rules is not None else None
    if matched is not None and matched[0] == "deny":
        return PolicyDecision(Verdict.REFUSE, f"A rule forbids this call: {matched[1]}.")
    if tool.effect is Effect.EXEC and _reads_only(tool, args, workspace):
        return PolicyDecision(Verdict.ALLOW, changes=False)
    if mode == "plan":
        return PolicyDecision(
            Verdict.REFUSE,
            f"Not done: {owner} is in plan mode, which allows no changes and only read-only "
            "commands until the person approves a plan. Go on reading, then end with the plan "
            "(update_plan); the change is for when they carry it out.",
        )
    if mode == "read-only":
        return PolicyDecision(
            Verdict.REFUSE,
            f"Not done: {owner} is in read-only mode, which allows no changes and only "
            "read-only commands. Continue with reading, or ask the person to switch mode.",
        )
    if matched is not None and matched[0] == "unsandboxed":
        return PolicyDecision(Verdict.ALLOW, rule=matched[1], unsandboxed=True)
    if mode == "full":
        return PolicyDecision(Verdict.ALLOW)
    if matched is not None:
        return PolicyDecision(Verdict.ALLOW, rule=matched[1])
    if mode == "auto" and _auto_allows(tool, args, workspace, sandboxed):
        return PolicyDecision(Verdict.ALLOW)
    return PolicyDecision(Verdict.ASK)


def _auto_allows(tool: Tool, args: Mapping[str, Any], workspace: Path, sandboxed: bool) -> bool:
    if tool.effect is Effect.EXEC:
        return sandboxed and tool.name == SHELL_TOOL
    if tool.effect is not Effect.WRITE or tool.mcp:
        return False
    path = args.get("path")
    return isinstance(path, str) and not _protected(workspace, path)


def _protected(workspace: Path, path: str) -> bool:
    """Whether a write to `path` lands in `.git` or `.agent` (through links too), or
    leaves the workspace: those ask in `auto`."""
    root = os.path.realpath(workspace)
    real = os.path.realpath(os.path.join(root, os.path.expanduser(path)))
    if os.path.commonpath([root, real]) != root:
        return True
    parts = Path(os.path.relpath(real, root)).parts
    return bool(parts) and parts[0] in PROTECTED_NAMES


def _reads_only(tool: Tool, args: Mapping[str, Any], workspace: Path) -> bool:
    if tool.name != SHELL_TOOL:
        return False
    from agent_cli.policy.commands import is_read_only

    command = args.get("command")
    return isinstance(command, str) and is_read_only(command, workspace)
