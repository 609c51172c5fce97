"""`agent sandbox`: which sandbox commands run in, what it allows, and a self-test (SPEC §14)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from agent_cli.commands.common import (
    SANDBOX_HELP,
    SandboxMode,
    guarded,
    start_debug_log,
    workspace_from,
)


def register(app: typer.Typer) -> None:
    app.command(
        "sandbox",
        epilog="Examples: agent sandbox · agent sandbox --sandbox landlock · "
        "agent sandbox --no-test",
    )(sandbox)


def sandbox(
    mechanism: Annotated[SandboxMode | None, typer.Option("--sandbox", help=SANDBOX_HELP)] = None,
    test: Annotated[
        bool, typer.Option("--test/--no-test", help="Run the one-second self-test.")
    ] = True,
    debug: Annotated[
        bool, typer.Option("--debug", help="Write a debug log; show tracebacks.")
    ] = False,
    cwd: Annotated[Path | None, typer.Option(help="Work in this folder.")] = None,
) -> None:
    """Which sandbox commands run in and what it allows, proven by a self-test."""

    def action() -> int:
        if debug:
            start_debug_log()
        return _show(mechanism.value if mechanism else None, test, cwd)

    raise typer.Exit(guarded(debug, action))


def _show(mechanism: str | None, test: bool, cwd: Path | None) -> int:
    from agent_cli.settings import Flags, load_settings
    from agent_cli.wiring import sandbox_of

    settings = load_settings(workspace_from(cwd), Flags(sandbox=mechanism))
    for warning in settings.warnings:
        typer.echo(f"agent: {warning}", err=True)
    confined = sandbox_of(settings)
    typer.echo(confined.summary())
    if not confined.active:
        typer.echo(
            "Without a sandbox every command that is not read-only asks first, in every mode "
            "but full; `auto` mode asks as `ask` does."
        )
        return 0
    if not test:
        return 0
    from agent_cli.sandbox.selftest import self_test

    env = settings.shell_environment.apply(os.environ)
    checks = self_test(confined, env)
    for check in checks:
        mark = "ok  " if check.passed else "FAIL"
        detail = f" ({check.detail})" if check.detail and not check.passed else ""
        typer.echo(f"{mark} {check.what}{detail}")
    if all(check.passed for check in checks):
        return 0
    typer.echo(
        "agent: the sandbox does not hold here — report this, or use --sandbox off.", err=True
    )
    return 1
