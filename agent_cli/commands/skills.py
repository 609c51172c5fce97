"""`agent skills`: list, show and switch the skills the model may use (SPEC §10).

Only Typer is imported here: `agent --help` registers every command, so the
skills machinery is imported inside each command when it runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent_cli.commands.common import guarded, workspace_from

if TYPE_CHECKING:
    from agent_cli.tools.skills import Skill, Skills

NAME = Annotated[str, typer.Argument(help="The skill's name (see `agent skills list`).")]
CWD = Annotated[Path | None, typer.Option(help="Work in this folder (its .agent/skills/ count).")]


def register(app: typer.Typer) -> None:
    skills = typer.Typer(
        name="skills",
        help="List, show, and switch on or off the skills the model may use.\n\n"
        "A skill is a folder with a SKILL.md: bundled with agent, in the user config "
        "folder's skills/, or in the workspace's .agent/skills/ (later wins by name).",
        epilog="Examples: agent skills · agent skills show review-change · "
        "agent skills disable write-tests",
        invoke_without_command=True,
        no_args_is_help=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    skills.callback()(_default)
    skills.command(
        "list", epilog="Examples: agent skills list · agent skills list --cwd ~/src/app"
    )(list_skills)
    skills.command(
        "show",
        epilog="Examples: agent skills show review-change · agent skills show write-tests | less",
    )(show)
    skills.command("enable", epilog="Examples: agent skills enable write-tests")(enable)
    skills.command(
        "disable",
        epilog="Examples: agent skills disable summarize-document · "
        "then `agent skills list` shows it off",
    )(disable)
    app.add_typer(skills, name="skills")


def _default(context: typer.Context) -> None:
    """Skills: with no subcommand, list them."""
    if context.invoked_subcommand is None:
        list_skills()


def list_skills(cwd: CWD = None) -> None:
    """List the skills: name, on/off, where each comes from, and its description.

    Files that could not be used are named on stderr with the reason.
    """

    def action() -> int:
        found = _discover(cwd)
        for warning in found.warnings:
            print(f"agent: {warning}", file=sys.stderr)
        if not found.all:
            print("No skills found.")
            return 0
        rows = [
            (s.name, "on" if found.is_enabled(s.name) else "off", s.source, s.description)
            for s in found.all
        ]
        widths = [max(len(r[i]) for r in [*rows, _HEADER]) for i in range(3)]
        for row in [_HEADER, *rows]:
            cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
            print("  ".join([*cells, row[3]]).rstrip())
        return 0

    raise typer.Exit(guarded(False, action))


_HEADER = ("NAME", "STATE", "SOURCE", "DESCRIPTION")


def show(name: NAME, cwd: CWD = None) -> None:
    """Print a skill: its front matter, where it comes from, and its instructions."""

    def action() -> int:
        found = _discover(cwd)
        skill = _require(found, name)
        state = "on" if found.is_enabled(name) else "off"
        print("---")
        print(f"name: {skill.name}")
        print(f"title: {skill.title}")
        print(f"description: {skill.description}")
        print("---")
        print(f"# {skill.source} skill, {state}: {skill.path}")
        print()
        print(skill.instructions)
        return 0

    raise typer.Exit(guarded(False, action))


def enable(name: NAME, cwd: CWD = None) -> None:
    """Switch a skill on (the default): the model sees it again, in every workspace."""
    raise typer.Exit(guarded(False, lambda: _switch(name, True, cwd)))


def disable(name: NAME, cwd: CWD = None) -> None:
    """Switch a skill off, in every workspace: the model no longer sees or uses it."""
    raise typer.Exit(guarded(False, lambda: _switch(name, False, cwd)))


def _switch(name: str, on: bool, cwd: Path | None) -> int:
    found = _discover(cwd)
    _require(found, name)
    found.set_enabled(name, on)
    if on:
        print(f"Skill {name} is on: the model sees it in every workspace.")
    else:
        print(f"Skill {name} is off in every workspace (`agent skills enable {name}` undoes it).")
    return 0


def _discover(cwd: Path | None) -> Skills:
    from agent_cli.tools.skills import Skills

    return Skills.discover(workspace_from(cwd))


def _require(found: Skills, name: str) -> Skill:
    from agent_cli.errors import UsageError

    skill = found.get(name)
    if skill is None:
        names = ", ".join(s.name for s in found.all) or "none"
        raise UsageError(
            f"No skill is named {name!r} (there are: {names}) — "
            "`agent skills list` shows them and any files it skipped."
        )
    return skill
