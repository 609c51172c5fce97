"""The CLI's commands, one module per command (group), registered by `register`.

They live apart from `cli.py` so that `agent --version` never imports Typer,
and only the invoked command's module is imported and built: each costs
start-up time. With no command on the line (`agent`, `agent --help`, a typo),
the commands are registered by name and summary alone, which is all the
top-level help and "did you mean" need; a test keeps the summaries true.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a bare `agent` imports this package but never Typer (~50 ms)
    import typer

SUMMARIES = {
    "run": "Run one request to its end and print the answer (for scripts and CI).",
    "undo": "Restore the files as they were before the agent's last change.",
    "mcp": "MCP servers: list them, add or remove one, list or call one's tools, log in.",
    "skills": "List, show, and switch on or off the skills the model may use.",
    "providers": "Model services: list them (presets included), add one with its key, remove one.",
    "models": "List the models the provider's server offers, with each one's context window.",
    "agents": "Other coding agents (over ACP) a conversation can be handed to, and if installed.",
    "acp": "Serve this agent over ACP on stdio, for editors such as Zed or Toad.",
    "sessions": "Stored conversations: list, show, export, fork or remove them.",
    "config": "The settings: show the merged values and where each comes from, the file, edit it.",
    "subagents": "Sub-agent definitions the model may hand focused work to with the task tool.",
    "tasks": "Scheduled prompts: add, list, run, and the timer that runs what is due.",
    "sandbox": "Which sandbox commands run in and what it allows, proven by a self-test.",
    "lsp": "Language servers: which are configured, found on PATH, and running for this folder.",
}


def register(app: typer.Typer, argv: Sequence[str]) -> None:
    """Register the root callback, and the command named in `argv` (else every summary)."""
    from agent_cli.commands import root

    root.register(app)
    invoked = next((word for word in argv if word in SUMMARIES), None)
    if invoked is not None:
        importlib.import_module(f"agent_cli.commands.{invoked}").register(app)
        return
    for name, summary in SUMMARIES.items():
        app.command(name, help=summary, add_help_option=False)(_named_only)


def _named_only() -> None:
    """Never runs: a command named on the line is registered for real."""
