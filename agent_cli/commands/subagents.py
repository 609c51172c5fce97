"""`agent subagents`: the sub-agent definitions the model may name in a `task` call.

Only Typer is imported here: `agent --help` registers every command, so the
definitions are read inside the command when it runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent_cli.commands.common import guarded, workspace_from

if TYPE_CHECKING:
    from agent_cli.backends.subagent_definitions import Definition

CWD = Annotated[Path | None, typer.Option(help="Work in this folder (its .agent/agents/ count).")]

FORMAT = """\
A definition is a Markdown file NAME.md in the user config folder's agents/ or in the
workspace's .agent/agents/ (the workspace's wins by name): front matter, then the
instructions that join the sub-agent's system prompt.

\b
  ---
  name: reviewer
  description: Reviews a change for bugs and missing tests.
  tools: [read_file, grep_search, file_glob_search]
  mode: read-only
  model: gpt-4.1-mini
  ---
  You review changes. Report each problem with its file and line.

name is the file's name; description is required; tools (all when absent), mode (read-only,
the default; ask; full — never more than the conversation's mode) and model (the
conversation's when absent) are optional. [subagents] max_depth (default 3; 0 turns sub-agents
off) and max_rounds (default 50, shared by all sub-agents of a message) set the limits."""


def register(app: typer.Typer) -> None:
    subagents = typer.Typer(
        name="subagents",
        help="Sub-agent definitions the model may hand focused work to with the task tool.\n\n"
        + FORMAT,
        epilog="Examples: agent subagents list · agent subagents list --cwd ~/src/app",
        no_args_is_help=True,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    subagents.command(
        "list", epilog="Examples: agent subagents list · agent subagents list --cwd ~/src/app"
    )(list_subagents)
    app.add_typer(subagents, name="subagents")


_HEADER = ("NAME", "MODE", "MODEL", "TOOLS", "FILE", "DESCRIPTION")


def list_subagents(cwd: CWD = None) -> None:
    """List the definitions: name, mode, model, tools, the file it was found in, description.

    Files that could not be used are named on stderr with the reason.
    """

    def action() -> int:
        from agent_cli.backends.subagent_definitions import discover

        workspace = workspace_from(cwd)
        found = discover(workspace)
        for warning in found.warnings:
            print(f"agent: {warning}", file=sys.stderr)
        if not found.all:
            print(
                "No sub-agent definitions found: add NAME.md files to .agent/agents/ "
                "(see `agent subagents --help`). The model can still start general ones."
            )
            return 0
        rows = [_row(d, workspace) for d in found.all]
        widths = [max(len(r[i]) for r in [*rows, _HEADER]) for i in range(5)]
        for row in [_HEADER, *rows]:
            cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
            print("  ".join([*cells, row[5]]).rstrip())
        return 0

    raise typer.Exit(guarded(False, action))


def _row(definition: Definition, workspace: Path) -> tuple[str, ...]:
    tools = ", ".join(definition.tools) if definition.tools is not None else "all"
    path = definition.path
    shown = str(path) if path is not None else ""
    if path is not None and path.is_relative_to(workspace):
        shown = path.relative_to(workspace).as_posix()
    model = definition.model or "(conversation's)"
    return (definition.name, definition.mode, model, tools, shown, definition.description)
