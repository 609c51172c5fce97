"""`agent agents`: the external coding agents (over ACP) and whether each is installed.

The catalog is data (`backends/agents.toml`) plus the user's `[agents.ID]`
tables; this only looks the programs up on PATH, it starts none of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agent_cli.commands.common import guarded, start_debug_log, workspace_from

if TYPE_CHECKING:
    from agent_cli.backends.catalog import AgentSpec

_HEADER = ("ID", "NAME", "STATUS")


def register(app: typer.Typer) -> None:
    app.command(
        "agents",
        epilog="Examples: agent agents · agent agents --json | jq -r 'select(.available).id' · "
        'then agent --agent opencode, or agent run --agent codex "..."',
    )(agents)


def agents(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per agent.")] = False,
    debug: Annotated[
        bool, typer.Option("--debug", help="Write a debug log; show tracebacks.")
    ] = False,
    cwd: Annotated[Path | None, typer.Option(help="Work in this folder.")] = None,
) -> None:
    """Other coding agents (over ACP) a conversation can be handed to, and if installed.

    Each agent: its id (for --agent and /agent), its name, and `available`, or
    which programs are missing and how to install them. Add or change agents
    with [agents.ID] tables in the user config file (command, args, needs, env,
    install, gated).
    """

    def action() -> int:
        from agent_cli.backends.catalog import load_catalog
        from agent_cli.settings import load_settings

        if debug:
            start_debug_log()
        settings = load_settings(workspace_from(cwd))
        rows = [_row(spec) for spec in load_catalog(settings.agents).values()]
        if as_json:
            for row in rows:
                print(json.dumps(row))
        else:
            _print_table(rows)
        return 0

    raise typer.Exit(guarded(debug, action))


def _row(spec: AgentSpec) -> dict[str, Any]:
    missing = spec.missing()
    return {
        "id": spec.id,
        "name": spec.name,
        "command": [spec.command, *spec.args],
        "available": not missing,
        "missing": missing,
        "install": spec.install,
        "gated": spec.gated,
    }


def _print_table(rows: list[dict[str, Any]]) -> None:
    width_id = max(len(r["id"]) for r in [{"id": _HEADER[0]}, *rows])
    width_name = max(len(r["name"]) for r in [{"name": _HEADER[1]}, *rows])
    indent = " " * (width_id + width_name + 4)
    print(f"{_HEADER[0]:<{width_id}}  {_HEADER[1]:<{width_name}}  {_HEADER[2]}")
    for row in rows:
        status = "available" if row["available"] else "missing: " + ", ".join(row["missing"])
        print(f"{row['id']:<{width_id}}  {row['name']:<{width_name}}  {status}")
        if row["missing"] and row["install"]:
            print(f"{indent}install: {row['install']}")
        if not row["gated"]:
            print(f"{indent}edits files itself: its changes cannot be gated, only listed")
