"""`agent lsp`: the language servers: configured, found on PATH, and running here.

It starts none of them: programs are looked up on PATH, and what runs is read
from the small records each agent process keeps of the servers it started
(for this folder). The workspace's own `[lsp.NAME]` tables are shown with
whether the person trusted that file yet (they are used only after a yes).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agent_cli.commands.common import guarded, start_debug_log, workspace_from

if TYPE_CHECKING:
    from agent_cli.settings import Settings


def register(app: typer.Typer) -> None:
    app.command(
        "lsp",
        epilog="Examples: agent lsp · agent lsp --json | jq -r 'select(.state == \"running\")'",
    )(lsp)


def lsp(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per server.")] = False,
    debug: Annotated[
        bool, typer.Option("--debug", help="Write a debug log; show tracebacks.")
    ] = False,
    cwd: Annotated[Path | None, typer.Option(help="Work in this folder.")] = None,
) -> None:
    """Language servers: which are configured, found on PATH, and running for this folder.

    Each server: its name, its state (`running`, `found`, `not found`, `off`, or
    `not trusted` for the workspace's own tables), its command and the files it
    is for. Known servers (ruff, basedpyright or pyright, typescript-language-server,
    gopls, rust-analyzer, clangd) need no config; [lsp.NAME] tables change or add
    them, `lsp = false` turns them off.
    """

    def action() -> int:
        from agent_cli.settings import load_settings

        if debug:
            start_debug_log()
        workspace = workspace_from(cwd)
        settings = load_settings(workspace)
        for warning in settings.warnings:
            typer.echo(f"agent: {warning}", err=True)
        rows = _rows(settings, workspace)
        if as_json:
            for row in rows:
                print(json.dumps(row))
            return 0
        if not settings.lsp.enabled:
            print("Language servers are off (lsp = false, or enabled = false in [lsp]).")
            return 0
        _print_table(rows)
        lsp = settings.lsp
        print(
            f"\nAn edit waits at most {lsp.settle_time:g} s for their diagnostics; a server "
            f"may take {lsp.start_timeout:g} s to start. Servers start on the first read or "
            "edit of one of their files, in the sandbox, with the network off."
        )
        return 0

    raise typer.Exit(guarded(debug, action))


def _rows(settings: Settings, workspace: Path) -> list[dict[str, Any]]:
    from agent_cli import mcp_config, paths
    from agent_cli.lsp.config import find_servers
    from agent_cli.lsp.servers import running_elsewhere

    project_file = paths.project_config_file(workspace)
    trusted = bool(settings.lsp.project) and mcp_config.is_trusted(workspace, project_file)
    configs = settings.lsp.configs(project_trusted=True)
    found = {entry.config.name: entry.program for entry in find_servers(configs)}
    running: dict[str, list[dict[str, Any]]] = {}
    for entry in running_elsewhere(workspace):
        running.setdefault(entry["name"], []).append(entry)
    rows = []
    for config in configs:
        if config.name in settings.lsp.project and not trusted:
            state = "not trusted"
        elif not config.enabled:
            state = "off"
        elif config.name not in found:
            state = f"left out ({config.unless} is used)"
        elif config.name in running:
            state = "running"
        else:
            state = "found" if found[config.name] else "not found"
        rows.append(
            {
                "name": config.name,
                "state": state,
                "command": list(config.command),
                "program": found.get(config.name, ""),
                "files": list(config.files),
                "source": config.source,
                "running": [
                    {"pid": r["pid"], "root": r["root"], "agent": r["agent"]}
                    for r in running.get(config.name, [])
                ],
            }
        )
    return rows


def _print_table(rows: list[dict[str, Any]]) -> None:
    header = {"name": "NAME", "state": "STATE", "command": "COMMAND", "files": "FILES"}
    shown = [
        {
            "name": row["name"],
            "state": row["state"],
            "command": shlex.join(row["command"]),
            "files": " ".join(row["files"]),
        }
        for row in rows
    ]
    widths = {key: max(len(r[key]) for r in [header, *shown]) for key in ("name", "state")}
    width_command = max(len(r["command"]) for r in [header, *shown])
    for row, data in zip([header, *shown], [None, *rows], strict=True):
        line = (
            f"{row['name']:<{widths['name']}}  {row['state']:<{widths['state']}}  "
            f"{row['command']:<{width_command}}  {row['files']}"
        )
        print(line.rstrip())
        if data is None:
            continue
        if data["source"] not in ("known", ""):
            print(f"{'':<{widths['name']}}  from {data['source']}")
        for run in data["running"]:
            print(
                f"{'':<{widths['name']}}  pid {run['pid']} for {run['root']} "
                f"(agent process {run['agent']})"
            )
