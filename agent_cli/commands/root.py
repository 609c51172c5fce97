"""`agent` with no command: the interactive front ends."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent_cli import __version__


def register(app: typer.Typer) -> None:
    app.callback(invoke_without_command=True)(root)


def root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", "-V", help="Print the version.")] = False,
    cwd: Annotated[Path | None, typer.Option(help="Work in this folder.")] = None,
) -> None:
    """A terminal coding agent.

    Examples:

      agent run "why does the test fail?"

      cat log.txt | agent run "explain this error"
    """
    if version:
        typer.echo(f"agent {__version__}")
        raise typer.Exit(0)
    if ctx.invoked_subcommand is None:
        typer.echo(
            "agent: the interactive TUI is not in this version yet — "
            'use `agent run "your request"` (see `agent run --help`).',
            err=True,
        )
        raise typer.Exit(2)
