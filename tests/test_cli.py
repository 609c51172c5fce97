"""The CLI registers only what the line needs; the listed summaries must stay true."""

from __future__ import annotations

import importlib

import pytest
import typer
import typer.main

from agent_cli.commands import SUMMARIES


@pytest.mark.parametrize("name", sorted(SUMMARIES))
def test_each_listed_summary_is_the_commands_own(name: str) -> None:
    app = typer.Typer()
    importlib.import_module(f"agent_cli.commands.{name}").register(app)
    group = typer.main.get_command(app)
    command = group.commands[name] if isinstance(group, typer.main.TyperGroup) else group
    assert command.get_short_help_str(limit=300) == SUMMARIES[name], (
        f"update SUMMARIES[{name!r}] in agent_cli/commands/__init__.py to the command's help"
    )
