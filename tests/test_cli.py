"""The CLI registers only what the line needs; the listed summaries must stay true."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import typer
import typer.core
import typer.main

from agent_cli.commands import SUMMARIES
from tests.support.cli import agent, agent_process, err, out


@pytest.mark.parametrize("name", sorted(SUMMARIES))
def test_each_listed_summary_is_the_commands_own(name: str) -> None:
    app = typer.Typer()
    importlib.import_module(f"agent_cli.commands.{name}").register(app)
    group = typer.main.get_command(app)
    command = group.commands[name] if isinstance(group, typer.main.TyperGroup) else group
    assert command.get_short_help_str(limit=300) == SUMMARIES[name], (
        f"update SUMMARIES[{name!r}] in agent_cli/commands/__init__.py to the command's help"
    )


def _commands_of(command: typer.core.TyperGroup | typer.core.TyperCommand) -> list:
    """A command and every subcommand below it."""
    below = getattr(command, "commands", {}).values()
    return [command, *(c for sub in below for c in _commands_of(sub))]


@pytest.mark.parametrize("name", sorted(SUMMARIES))
def test_every_command_and_subcommand_has_examples_in_its_help(name: str) -> None:
    app = typer.Typer()
    importlib.import_module(f"agent_cli.commands.{name}").register(app)
    group = typer.main.get_command(app)
    top = group.commands[name] if isinstance(group, typer.main.TyperGroup) else group
    missing = [
        command.name for command in _commands_of(top) if "Examples:" not in (command.epilog or "")
    ]
    assert not missing, f"agent {name}: give {missing} an epilog starting 'Examples: ...'"


def test_agent_help_has_examples(tmp_path: Path) -> None:
    result = agent_process(tmp_path, "--help")
    assert result.returncode == 0 and "Examples:" in out(result), (
        "`agent --help` shows no examples: give the root app an epilog"
    )


@pytest.mark.parametrize(
    ("typo", "suggestion"),
    [
        (["sesions"], "Did you mean 'sessions'?"),
        (["confgi"], "Did you mean 'config'?"),
        (["config", "shw"], "Did you mean 'show'?"),
        (["sessions", "lst"], "Did you mean 'list'?"),
        (["run", "--mdoe", "ask", "hi"], "(Possible options: --image, --mode, --model)"),
    ],
)
def test_a_typo_gets_a_did_you_mean(tmp_path: Path, typo: list[str], suggestion: str) -> None:
    result = agent(tmp_path, *typo)
    assert result.returncode == 2
    assert suggestion in err(result) and "Traceback" not in err(result)
