"""Opening the interactive front ends (the TUI, or the line REPL): what `agent` does with
no command, through Typer's root callback or, for a bare `agent`, straight from `cli.run`
(Typer costs ~50 ms of a start whose goal is the time of a bare Textual app)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_cli.engine.opening import Opening
    from agent_cli.frontends.interactive import Interactive
    from agent_cli.settings import Flags


def start_bare() -> int:
    """`agent` with nothing after it: the same as Typer's root callback with its defaults."""
    from agent_cli.commands.common import guarded
    from agent_cli.engine.opening import Opening
    from agent_cli.settings import Flags

    return guarded(False, lambda: open_front_end(Flags(), Opening(), not can_host_tui()))


def can_host_tui() -> bool:
    """Textual needs a real, capable terminal on both ends."""
    term = os.environ.get("TERM", "")
    return sys.stdin.isatty() and sys.stdout.isatty() and term not in ("", "dumb")


def open_front_end(
    flags: Flags,
    opening: Opening,
    plain: bool,
    cwd: str | None = None,
    agent: str | None = None,
) -> int:
    import gc

    if plain:
        return _open(flags, opening, plain, cwd, agent)
    # No collector until the TUI's first frame, where the app freezes what is alive and turns
    # it back on: the start makes ~50,000 objects that live as long as the process (and ~2,000
    # of garbage), and the collector's ~120 passes over them cost ~35 ms before that frame.
    gc.disable()
    try:
        return _open(flags, opening, plain, cwd, agent)
    finally:
        gc.enable()


def _open(flags: Flags, opening: Opening, plain: bool, cwd: str | None, agent: str | None) -> int:
    import asyncio

    from agent_cli.commands.common import workspace_from
    from agent_cli.settings import load_settings

    workspace = workspace_from(Path(cwd) if cwd else None)
    settings = load_settings(workspace, flags)
    for warning in settings.warnings:
        print(f"agent: {warning}", file=sys.stderr)
    mode = settings.mode or "ask"

    async def build() -> Interactive:
        from agent_cli import wiring
        from agent_cli.frontends.interactive import Questions

        questions = Questions()  # the TUI answers them with a modal once it shows the session

        ask_trust: wiring.AskTrust | None = None
        if plain and sys.stdin.isatty():
            from agent_cli.commands.trust import ask_trust_inline_async as ask_trust
        elif not plain:
            from agent_cli.commands.trust import ask_trust_through

            ask_trust = ask_trust_through(questions)
        return await wiring.open_interactive(  # the TUI connects after its first frame
            settings, opening, mode, ask_trust, agent, questions, connect=plain
        )

    async def go() -> int:
        if not plain and agent is None and not (opening.resume or opening.continue_last):
            # A new conversation: the screen first, the session built after its first frame
            # (~80 ms of engine, tools and settings the first frame does not need).
            from agent_cli.frontends.tui import run_tui

            return await run_tui(None, settings, opening=build)
        # A conversation to open (its visible page is the first frame), or the line REPL.
        interactive = await build()
        try:
            if plain:
                from agent_cli.frontends.line import run_line

                return await run_line(interactive)
            from agent_cli.frontends.tui import run_tui

            return await run_tui(interactive, settings)
        finally:
            await interactive.aclose()

    return asyncio.run(go())
