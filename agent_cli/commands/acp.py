"""`agent acp`: this agent served over ACP on stdio, for editors (SPEC §1).

The command checks the configuration before it serves (a missing provider is
exit 2 with one sentence, not a failed handshake), then hands the server a
way to open Sessions. Only Typer is imported here: the ACP SDK and the
session machinery load when the command runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent_cli.commands.common import Mode, guarded, start_debug_log, workspace_from

if TYPE_CHECKING:
    from agent_cli.engine.items import Conversation
    from agent_cli.engine.store import Store
    from agent_cli.frontends.acp_server import Opened
    from agent_cli.settings import Flags, Settings
    from agent_cli.tools.base import FileAccess


def register(app: typer.Typer) -> None:
    app.command(
        "acp",
        epilog="Examples: agent acp · agent acp --model qwen3-coder --mode full · in Zed's "
        'settings.json: "agent_servers": {"agent": {"command": "agent", "args": ["acp"]}}',
    )(acp)


def acp(
    cwd: Annotated[
        Path | None,
        typer.Option(
            help="The folder whose config is checked at start (each session sends its own)."
        ),
    ] = None,
    model: Annotated[str | None, typer.Option(help="The model to use.")] = None,
    provider: Annotated[str | None, typer.Option(help="The provider (a config entry).")] = None,
    mode: Annotated[
        Mode | None,
        typer.Option(help="ask, read-only or full for new sessions (default: ask)."),
    ] = None,
    debug: Annotated[
        bool, typer.Option("--debug", help="Write a debug log; show tracebacks.")
    ] = False,
) -> None:
    """Serve this agent over ACP on stdio, for editors such as Zed or Toad.

    stdin and stdout carry the protocol; messages go to stderr. Each session
    is a stored conversation in the folder the editor sends, resumable with
    session/load (or `agent run --resume ID`).
    """

    def action() -> int:
        from agent_cli.settings import Flags

        _log_to_stderr()
        if debug:
            start_debug_log()
        flags = Flags(
            model=model, provider=provider, mode=mode.value if mode else None, debug=debug
        )
        return _serve(workspace_from(cwd), flags)

    raise typer.Exit(guarded(debug, action))


def _log_to_stderr() -> None:
    """Warnings (ours, the SDK's) as one line each on stderr, which editors keep as the
    agent's log; tracebacks only in the --debug log file."""
    import logging

    class OneLine(logging.Formatter):
        def formatException(self, ei: object) -> str:
            return ""

        def formatStack(self, stack_info: str) -> str:
            return ""

    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(OneLine("agent acp: %(message)s"))
    logging.getLogger().addHandler(handler)


def _serve(workspace: Path, flags: Flags) -> int:
    import asyncio

    from agent_cli import __version__

    opener = SessionOpener(flags)
    opener.settings(workspace).require_provider()  # a bad setup fails now, with exit 2
    from agent_cli.frontends.acp_server import serve  # the SDK: only once there is work

    return asyncio.run(serve(opener.open, __version__))


class SessionOpener:
    """Opens a Session for an ACP session: settings of its folder, its own provider."""

    def __init__(self, flags: Flags) -> None:
        self.flags = flags
        self._warned: set[str] = set()

    def settings(self, workspace: Path) -> Settings:
        from agent_cli.settings import load_settings

        settings = load_settings(workspace, self.flags)
        for warning in settings.warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                print(f"agent: {warning}", file=sys.stderr)
        return settings

    async def open(self, workspace: Path, stored: str | None, files: FileAccess | None) -> Opened:
        from agent_cli import wiring
        from agent_cli.frontends.acp_server import Opened

        settings = self.settings(workspace)
        settings.require_provider()
        store = wiring.make_store()
        conversation = _conversation(store, workspace, stored, settings.mode)
        route = wiring.Route(settings)
        try:
            await route.get()
        except BaseException:
            await route.aclose()
            raise
        session = wiring.routed_session(settings, conversation, store, route, files=files)

        async def close() -> None:
            try:
                await session.aclose()
            finally:
                await route.aclose()

        return Opened(session, close)


def _conversation(
    store: Store, workspace: Path, stored: str | None, mode: str | None
) -> Conversation:
    """A new conversation in `workspace`, or the stored one (its mode kept unless --mode)."""
    from agent_cli.engine.items import Conversation
    from agent_cli.errors import UsageError

    if stored is None:
        return Conversation(workspace=str(workspace), mode=mode or "ask")
    conversation = store.load(stored)
    if conversation.id != stored:  # a unique prefix: the client must get the id it sent
        raise UsageError(
            f"No conversation is called {stored!r} — session/load needs a whole id "
            "(see `agent sessions`)."
        )
    if conversation.workspace != str(workspace):
        raise UsageError(
            f"Conversation {conversation.id} belongs to {conversation.workspace} — load it "
            "with that folder as cwd."
        )
    if conversation.agent != "builtin":
        raise UsageError(
            f"Conversation {conversation.id} is worked by {conversation.agent}, and agent acp "
            f"serves the built-in agent — open it with `agent --resume {conversation.id}`."
        )
    conversation.mode = mode or conversation.mode
    return conversation
