"""`agent` with no command: the interactive front ends (the TUI, or the line REPL)."""

from __future__ import annotations

from typing import Annotated

import typer

from agent_cli import __version__
from agent_cli.commands.common import (
    SANDBOX_HELP,
    SandboxMode,
    guarded,
    start_debug_log,
)
from agent_cli.policy.modes import MODES, MODES_TEXT


def register(app: typer.Typer) -> None:
    app.callback(invoke_without_command=True)(root)


def root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", "-V", help="Print the version.")] = False,
    plain: Annotated[
        bool, typer.Option("--plain", help="A line REPL instead of the full-screen TUI.")
    ] = False,
    continue_last: Annotated[
        bool, typer.Option("--continue", "-c", help="Go on with the last conversation here.")
    ] = False,
    resume: Annotated[str | None, typer.Option(help="Go on with conversation ID.")] = None,
    model: Annotated[str | None, typer.Option(help="The model to use.")] = None,
    provider: Annotated[str | None, typer.Option(help="The provider (a config entry).")] = None,
    mode: Annotated[
        str | None, typer.Option(help="ask (default), auto, read-only or full.")
    ] = None,
    sandbox: Annotated[SandboxMode | None, typer.Option(help=SANDBOX_HELP)] = None,
    no_save: Annotated[
        bool, typer.Option("--no-save", help="Do not store the conversation.")
    ] = False,
    agent: Annotated[
        str | None,
        typer.Option(help="Another coding agent (see `agent agents`), or builtin."),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Write a debug log.")] = False,
    cwd: Annotated[str | None, typer.Option(help="Work in this folder.")] = None,
) -> None:
    """A terminal coding agent: in a project folder, `agent` opens a conversation.

    Examples:

      agent                                  the TUI in this folder

      agent --plain                          a line REPL (also on TERM=dumb)

      agent --agent opencode                 OpenCode works the conversation (over ACP)

      agent run "why does the test fail?"    one answer, for scripts

      cat log.txt | agent run "explain this error"
    """
    if version:
        typer.echo(f"agent {__version__}")
        raise typer.Exit(0)
    if ctx.invoked_subcommand is not None:
        if debug:  # `agent --debug run ...` logs as `agent run --debug ...` does
            start_debug_log()
        return

    def action() -> int:
        from agent_cli.commands.opening import can_host_tui, open_front_end
        from agent_cli.settings import Flags
        from agent_cli.wiring import Opening

        if debug:
            start_debug_log()
        if mode is not None and mode not in MODES:
            from agent_cli.errors import UsageError

            raise UsageError(f"Unknown mode {mode!r} — use {MODES_TEXT}.")
        chosen = sandbox.value if sandbox else None
        flags = Flags(model=model, provider=provider, mode=mode, debug=debug, sandbox=chosen)
        opening = Opening(resume=resume, continue_last=continue_last, save=not no_save)
        return open_front_end(flags, opening, plain or not can_host_tui(), cwd, agent)

    raise typer.Exit(guarded(debug, action))
