"""`agent acp`: this agent served over ACP on stdio, for editors (SPEC §1).

The command checks the configuration before it serves (a config file it cannot
read is exit 2 with one sentence), then hands the server a way to open
Sessions. A missing provider is not such an error: an editor shows a server
that ends before the handshake only as "connection closed", and the ACP SDK
starts agents with a trimmed environment (no OPENAI_BASE_URL from the shell).
So the server answers `initialize` and `session/new` all the same, and each
prompt ends with a message saying how to configure one (the sentence also on
stderr, the editor's log of the agent). Only Typer is imported here: the ACP
SDK and the session machinery load when the command runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent_cli.commands.common import Mode, guarded, start_debug_log, workspace_from

if TYPE_CHECKING:
    from agent_cli.engine.backend import Run, RunResult
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
        typer.Option(help="ask, auto, read-only or full for new sessions (default: ask)."),
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
    opener.settings(workspace)  # a config file that cannot be read fails now, with exit 2
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
        from agent_cli.errors import ConfigError
        from agent_cli.frontends.acp_server import Opened

        settings = self.settings(workspace)
        store = wiring.make_store()
        conversation = _conversation(store, workspace, stored, settings.mode)
        try:
            settings.require_provider()
        except ConfigError as e:
            return _unconfigured(str(e), conversation, store)
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

        import asyncio

        commands = await asyncio.to_thread(wiring.prompt_commands, workspace)
        return Opened(session, close, commands)


def _unconfigured(sentence: str, conversation: Conversation, store: Store) -> Opened:
    """A session with no provider to run: each prompt is answered with what to configure."""
    from agent_cli.engine.session import Session
    from agent_cli.frontends.acp_server import Opened

    session = Session(conversation, lambda _conversation: NoProvider(sentence), store)
    return Opened(session, session.aclose)


class NoProvider:
    """The backend of a session opened with no model provider: every run ends at once
    with a notice saying how to configure one (shown by the editor as the agent's
    message, ending the turn), and the same sentence on stderr."""

    commands: tuple[tuple[str, str], ...] = ()

    def __init__(self, sentence: str) -> None:
        self.sentence = sentence

    async def run(self, run: Run) -> RunResult:
        from agent_cli.engine.backend import RunResult, StopReason

        print(f"agent: {self.sentence}", file=sys.stderr, flush=True)
        run.notice(self.sentence, "error")
        return RunResult(StopReason.ANSWERED)

    async def compact(self, run: Run, focus: str) -> RunResult:
        return await self.run(run)

    async def aclose(self) -> None:
        return None


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
