"""One language server process, spoken to with `pygls`'s language client.

The only module that imports `pygls` and `lsprotocol` (about 0.7 s together),
and only when a server starts: `agent --help` and `agent run` never load them.
It spawns the process itself (its own session, so its whole group can be
ended; stderr kept, its last lines explain a failure), hands pygls the pipes,
and turns what the server sends into plain tuples, so `servers.py` never sees
a protocol type. Requests the server sends are answered here: its
configuration from `settings`, capability registrations accepted, and edits it
proposes refused (only the tools change files).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import os
import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import unquote, urlparse

__all__ = ["Connection", "Hovered", "Location", "Reported", "Symbol", "path_of"]

log = logging.getLogger(__name__)

STDERR_LINES = 20  # of a server's stderr, kept to explain why it ended
SHUTDOWN_WAIT = 1.0  # seconds for the shutdown answer, then for the exit, before a kill


class Reported(NamedTuple):
    """A diagnostic as the server sent it (0-based position; severity 1–4 or None)."""

    line: int
    character: int
    severity: int | None
    code: str
    message: str
    source: str


class Location(NamedTuple):
    path: str  # a file system path, as the server gave it
    line: int  # 0-based
    character: int


class Symbol(NamedTuple):
    name: str
    kind: str
    location: Location
    container: str = ""


class Hovered(NamedTuple):
    text: str


PublishHandler = Callable[[str, int | None, list[Reported]], None]


def path_of(uri: str) -> str:
    """The file system path of a `file:` URI ("" for another scheme)."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else ""


def uri_of(path: Path) -> str:
    return path.as_uri()


@functools.cache
def _client_class() -> type:
    """pygls's client, with its logs kept off the terminal (a debug log still gets them)."""
    from pygls.lsp.client import LanguageClient

    pygls_log = logging.getLogger("pygls")
    pygls_log.setLevel(logging.WARNING)  # its INFO lines carry whole files
    if not any(isinstance(h, logging.NullHandler) for h in pygls_log.handlers):
        pygls_log.addHandler(logging.NullHandler())

    class Client(LanguageClient):
        def report_server_error(self, error: Exception, source: Any) -> None:
            log.debug("language server sent something unexpected: %s", error)

    return Client


def load() -> None:
    """Import pygls and lsprotocol (blocking: call it in a thread)."""
    _client_class()
    import lsprotocol.types  # noqa: F401


class Connection:
    """A started server: its process, the pygls client on its pipes, and what it said."""

    def __init__(
        self,
        on_publish: PublishHandler,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.on_publish = on_publish
        self.settings = settings or {}
        self.exited = asyncio.Event()
        self.returncode: int | None = None
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self.save_wanted = False
        self.capabilities: Any = None
        self._process: asyncio.subprocess.Process | None = None
        self._client: Any = None
        self._stop = threading.Event()
        self._tasks: list[asyncio.Task[Any]] = []
        self._root: Path | None = None

    # ------------------------------------------------------------ start and end

    async def start(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> None:
        """Spawn the server; OSError when its program cannot be started."""
        from pygls.io_ import run_async

        client = _client_class()("agent", _version())
        self._client = client
        self._register(client)
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(cwd),
            env=dict(env),
            start_new_session=True,  # its own group: ending it ends all it started
        )
        self._process = process
        assert process.stdin is not None and process.stdout is not None
        client.protocol.set_writer(process.stdin)
        reading = run_async(
            stop_event=self._stop,
            reader=process.stdout,
            protocol=client.protocol,
            logger=log,
            error_handler=client.report_server_error,
        )
        self._tasks = [
            asyncio.create_task(_quietly(reading)),
            asyncio.create_task(self._keep_stderr(process.stderr)),
            asyncio.create_task(self._wait_exit(process)),
        ]

    async def initialize(self, root: Path, init_options: Mapping[str, Any] | None) -> None:
        """The handshake; raises what went wrong (the caller bounds it in time)."""
        from lsprotocol import types as t

        self._root = root
        uri = uri_of(root)
        params = t.InitializeParams(
            # No process id: in the sandbox's pid namespace ours does not exist, and a
            # server watching it would end at once.
            process_id=None,
            client_info=t.ClientInfo(name="agent", version=_version()),
            root_uri=uri,
            root_path=str(root),
            workspace_folders=[t.WorkspaceFolder(uri=uri, name=root.name or str(root))],
            initialization_options=dict(init_options) if init_options else None,
            capabilities=_capabilities(),
        )
        result = await self._answer(self._client.initialize_async(params))
        self.capabilities = result.capabilities
        self.save_wanted = _wants_save(result.capabilities)
        self._client.initialized(t.InitializedParams())

    @property
    def pid(self) -> int:
        return self._process.pid if self._process is not None else 0

    @property
    def alive(self) -> bool:
        return self._process is not None and not self.exited.is_set()

    async def close(self) -> None:
        """Ask the server to shut down, then end its process group, whatever it does."""
        process = self._process
        if process is None:
            return
        if self.alive and self.capabilities is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    self._answer(self._client.shutdown_async(None)), SHUTDOWN_WAIT
                )
                self._client.exit(None)
                await asyncio.wait_for(self.exited.wait(), SHUTDOWN_WAIT)
        self._stop.set()
        await _end_group(process)
        for task in self._tasks:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(task, SHUTDOWN_WAIT)
            task.cancel()
        transport = getattr(process, "_transport", None)  # no public way to close the pipes
        if transport is not None:
            transport.close()

    # ------------------------------------------------------------ documents

    def open(self, path: Path, language: str, version: int, text: str) -> None:
        from lsprotocol import types as t

        item = t.TextDocumentItem(
            uri=uri_of(path), language_id=language, version=version, text=text
        )
        self._client.text_document_did_open(t.DidOpenTextDocumentParams(text_document=item))

    def change(self, path: Path, version: int, text: str) -> None:
        """The whole new text (valid for servers that sync incrementally too)."""
        from lsprotocol import types as t

        document = t.VersionedTextDocumentIdentifier(version=version, uri=uri_of(path))
        whole = t.TextDocumentContentChangeWholeDocument(text=text)
        params = t.DidChangeTextDocumentParams(text_document=document, content_changes=[whole])
        self._client.text_document_did_change(params)

    def save(self, path: Path, text: str) -> None:
        from lsprotocol import types as t

        if self.save_wanted:
            document = t.TextDocumentIdentifier(uri=uri_of(path))
            self._client.text_document_did_save(t.DidSaveTextDocumentParams(document, text=text))

    # ------------------------------------------------------------ requests

    async def definition(self, path: Path, line: int, character: int) -> list[Location]:
        from lsprotocol import types as t

        params = t.DefinitionParams(
            t.TextDocumentIdentifier(uri_of(path)), t.Position(line, character)
        )
        return _locations(await self._answer(self._client.text_document_definition_async(params)))

    async def references(self, path: Path, line: int, character: int) -> list[Location]:
        from lsprotocol import types as t

        params = t.ReferenceParams(
            context=t.ReferenceContext(include_declaration=True),
            text_document=t.TextDocumentIdentifier(uri_of(path)),
            position=t.Position(line, character),
        )
        return _locations(await self._answer(self._client.text_document_references_async(params)))

    async def hover(self, path: Path, line: int, character: int) -> Hovered:
        from lsprotocol import types as t

        params = t.HoverParams(t.TextDocumentIdentifier(uri_of(path)), t.Position(line, character))
        found = await self._answer(self._client.text_document_hover_async(params))
        return Hovered(_hover_text(found.contents) if found is not None else "")

    async def workspace_symbols(self, query: str) -> list[Symbol]:
        from lsprotocol import types as t

        params = t.WorkspaceSymbolParams(query=query)
        found = await self._answer(self._client.workspace_symbol_async(params))
        symbols = (_symbol(entry) for entry in found or ())
        return [symbol for symbol in symbols if symbol is not None]

    async def document_symbols(self, path: Path) -> list[Symbol]:
        from lsprotocol import types as t

        params = t.DocumentSymbolParams(t.TextDocumentIdentifier(uri_of(path)))
        found = await self._answer(self._client.text_document_document_symbol_async(params))
        symbols: list[Symbol] = []
        _flatten(found or (), str(path), "", symbols)
        return symbols

    def supports(self, capability: str) -> bool:
        """Whether the server offers a request (`definition_provider`, ...)."""
        return bool(getattr(self.capabilities, capability, None))

    async def _answer(self, request: Any) -> Any:
        """A request's answer; RuntimeError when the server ends before it answers."""
        asking = asyncio.ensure_future(request)
        ended = asyncio.ensure_future(self.exited.wait())
        try:
            await asyncio.wait({asking, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
        if not asking.done():
            asking.cancel()
            raise RuntimeError(f"it ended{self.exit_words()}")
        return asking.result()

    def exit_words(self) -> str:
        """` (exit code 3: last stderr line)`, or "" while it runs."""
        if self.returncode is None:
            return ""
        said = next((line for line in reversed(self.stderr) if line.strip()), "")
        return f" (exit code {self.returncode}{': ' + said[:200] if said else ''})"

    # ------------------------------------------------------------ what the server sends

    def _register(self, client: Any) -> None:
        from lsprotocol import types as t

        @client.feature(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: t.PublishDiagnosticsParams) -> None:
            reported = [_reported(d) for d in params.diagnostics]
            self.on_publish(path_of(params.uri), params.version, reported)

        @client.feature(t.WORKSPACE_CONFIGURATION)
        def configuration(params: t.ConfigurationParams) -> list[Any]:
            return [_section(self.settings, item.section) for item in params.items]

        @client.feature(t.WORKSPACE_WORKSPACE_FOLDERS)
        def folders(_params: None) -> list[t.WorkspaceFolder]:
            root = self._root or Path.cwd()
            return [t.WorkspaceFolder(uri=uri_of(root), name=root.name or str(root))]

        @client.feature(t.WORKSPACE_APPLY_EDIT)
        def apply_edit(_params: t.ApplyWorkspaceEditParams) -> t.ApplyWorkspaceEditResult:
            return t.ApplyWorkspaceEditResult(
                applied=False, failure_reason="edits go through tools"
            )

        for method in (
            t.CLIENT_REGISTER_CAPABILITY,
            t.CLIENT_UNREGISTER_CAPABILITY,
            t.WINDOW_WORK_DONE_PROGRESS_CREATE,
            t.WINDOW_SHOW_MESSAGE_REQUEST,
            t.WORKSPACE_DIAGNOSTIC_REFRESH,
            t.WORKSPACE_SEMANTIC_TOKENS_REFRESH,
            t.WORKSPACE_INLAY_HINT_REFRESH,
            t.WORKSPACE_CODE_LENS_REFRESH,
        ):
            client.feature(method)(_nothing)
        for method in (t.WINDOW_LOG_MESSAGE, t.WINDOW_SHOW_MESSAGE, t.PROGRESS, t.TELEMETRY_EVENT):
            client.feature(method)(_ignore)

    async def _keep_stderr(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        with contextlib.suppress(Exception):
            while line := await stream.readline():
                self.stderr.append(line.decode("utf-8", "replace").rstrip())

    async def _wait_exit(self, process: asyncio.subprocess.Process) -> None:
        self.returncode = await process.wait()
        self.exited.set()


def _nothing(_params: Any) -> None:
    return None


def _ignore(_params: Any) -> None:
    return None


async def _quietly(reading: Any) -> None:
    """pygls's reader; a server ending mid-message ends it with an error, said here."""
    try:
        await reading
    except Exception as e:
        log.debug("language server output ended: %r", e)


async def _end_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM the server's group, SIGKILL what is left shortly after, and reap it."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, signum)
        except (ProcessLookupError, PermissionError):
            break
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), SHUTDOWN_WAIT)
            break
    with contextlib.suppress(asyncio.TimeoutError, ProcessLookupError):
        await asyncio.wait_for(process.wait(), SHUTDOWN_WAIT)


def _version() -> str:
    from agent_cli import __version__

    return __version__


def _capabilities() -> Any:
    from lsprotocol import types as t

    return t.ClientCapabilities(
        general=t.GeneralClientCapabilities(position_encodings=[t.PositionEncodingKind.Utf16]),
        text_document=t.TextDocumentClientCapabilities(
            synchronization=t.TextDocumentSyncClientCapabilities(did_save=True),
            publish_diagnostics=t.PublishDiagnosticsClientCapabilities(version_support=True),
            definition=t.DefinitionClientCapabilities(link_support=False),
            references=t.ReferenceClientCapabilities(),
            hover=t.HoverClientCapabilities(
                content_format=[t.MarkupKind.PlainText, t.MarkupKind.Markdown]
            ),
            document_symbol=t.DocumentSymbolClientCapabilities(
                hierarchical_document_symbol_support=True
            ),
        ),
        workspace=t.WorkspaceClientCapabilities(
            configuration=True,
            workspace_folders=True,
            apply_edit=False,
            symbol=t.WorkspaceSymbolClientCapabilities(),
        ),
    )


def _wants_save(capabilities: Any) -> bool:
    sync = getattr(capabilities, "text_document_sync", None)
    save = getattr(sync, "save", None)
    return bool(save)


def _section(settings: Mapping[str, Any], section: str | None) -> Any:
    """The configuration a server asks for (`python.analysis`), from `settings`."""
    if not section:
        return dict(settings) or None
    value: Any = settings
    for part in section.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _reported(d: Any) -> Reported:
    code = d.code if d.code is not None else ""
    severity = int(d.severity) if d.severity is not None else None
    start = d.range.start
    return Reported(start.line, start.character, severity, str(code), d.message, d.source or "")


def _locations(found: Any) -> list[Location]:
    if found is None:
        return []
    if not isinstance(found, (list, tuple)):
        found = [found]
    out = []
    for entry in found:
        uri = getattr(entry, "uri", None) or getattr(entry, "target_uri", "")
        where = getattr(entry, "range", None) or getattr(entry, "target_selection_range", None)
        if uri and where is not None:
            out.append(Location(path_of(uri), where.start.line, where.start.character))
    return out


def _symbol(found: Any) -> Symbol | None:
    location = getattr(found, "location", None)
    uri = getattr(location, "uri", "")
    where = getattr(location, "range", None)
    line, character = (where.start.line, where.start.character) if where is not None else (0, 0)
    if not uri:
        return None
    kind = getattr(found.kind, "name", str(found.kind)).lower()
    return Symbol(
        found.name, kind, Location(path_of(uri), line, character), found.container_name or ""
    )


def _flatten(found: Sequence[Any], path: str, container: str, out: list[Symbol]) -> None:
    for entry in found:
        if hasattr(entry, "selection_range"):  # a DocumentSymbol, with its children
            start = entry.selection_range.start
            kind = getattr(entry.kind, "name", str(entry.kind)).lower()
            out.append(
                Symbol(entry.name, kind, Location(path, start.line, start.character), container)
            )
            _flatten(entry.children or (), path, entry.name, out)
        else:
            symbol = _symbol(entry)
            if symbol is not None:
                out.append(symbol)


def _hover_text(contents: Any) -> str:
    if isinstance(contents, str):
        return contents
    if isinstance(contents, (list, tuple)):
        return "\n\n".join(_hover_text(c) for c in contents)
    value = getattr(contents, "value", "")
    return value if isinstance(value, str) else str(value)
