"""Modes and the one decision the loop asks before every call (SPEC §8).

`decide` answers allow, ask or refuse for a call from the tool's declared side
effect, the mode, the rules and — for commands — the read-only rule. Tools
never decide approval themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from agent_cli.tools.base import Effect, Tool, ToolRegistry

MODES = ("ask", "read-only", "full")
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


class Rules(Protocol):
    """Allow/deny rules; `match` returns ("allow"|"deny", "rule (scope)") or None."""

    def match(self, tool: str, args: Mapping[str, Any]) -> tuple[str, str] | None: ...


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    return mode


def offered(tools: ToolRegistry, mode: str) -> ToolRegistry:
    """Only the tools that could be allowed: a tool that could only be refused is not offered."""
    if mode != "read-only":
        return tools
    # Commands stay: a read-only command may run in read-only mode.
    return tools.filtered(lambda t: t.effect in (Effect.READ, Effect.EXEC))


def decide(
    tool: Tool,
    args: Mapping[str, Any],
    mode: str,
    workspace: Path,
    rules: Rules | None = None,
) -> PolicyDecision:
    if tool.effect is Effect.READ:
        return PolicyDecision(Verdict.ALLOW, changes=False)
    matched = rules.match(tool.name, args) if rules is not None else None
    if matched is not None and matched[0] == "deny":
        return PolicyDecision(Verdict.REFUSE, f"A rule forbids this call: {matched[1]}.")
    if tool.effect is Effect.EXEC and _reads_only(tool, args, workspace):
        return PolicyDecision(Verdict.ALLOW, changes=False)
    if mode == "read-only":
        return PolicyDecision(
            Verdict.REFUSE,
            "Not done: the conversation is in read-only mode, which allows no changes and "
            "only read-only commands. Continue with reading, or ask the person to switch mode.",
        )
    if mode == "full":
        return PolicyDecision(Verdict.ALLOW)
    if matched is not None:
        return PolicyDecision(Verdict.ALLOW, rule=matched[1])
    return PolicyDecision(Verdict.ASK)


def _reads_only(tool: Tool, args: Mapping[str, Any], workspace: Path) -> bool:
    if tool.name != SHELL_TOOL:
        return False
    from agent_cli.policy.commands import is_read_only

    command = args.get("command")
    return isinstance(command, str) and is_read_only(command, workspace)
