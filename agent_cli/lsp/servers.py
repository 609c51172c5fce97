"""A session's language servers: started on first use, files kept in sync, answers awaited.

A server starts the first time a file it is for is read or about to be
changed, once per project root (the nearest folder holding one of its root
markers, else the workspace), in the sandbox with the network off, and is
kept until the session ends. One that dies is started again once; after a
second death it stays off for the session, and the result says so once.

After a change the server is told the file's new text (`didChange`, then
`didSave` where it wants one) and what it publishes for that version is
awaited until a deadline (the settle time, counted from the write): a server
that is slow, starting or silent never holds an edit's result longer. What it
said of the text before the change is the baseline the new diagnostics are
compared with (`diagnostics.compare`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from agent_cli import paths
from agent_cli.lsp.config import Found, language_of
from agent_cli.lsp.diagnostics import REPORTED, SEVERITIES, Diagnostic, compare
from agent_cli.lsp.options import DEFAULT_SETTLE_TIME, DEFAULT_START_TIMEOUT

if TYPE_CHECKING:
    from agent_cli.lsp.client import Connection, Reported
    from agent_cli.sandbox.launch import Sandbox

__all__ = ["Checked", "Findings", "LanguageServers", "Server", "running_elsewhere"]

log = logging.getLogger(__name__)

MAX_RESTARTS = 1
"""A server that dies is started again this many times in a session."""
REQUEST_TIMEOUT = 10.0
"""Seconds a definition, references, hover or symbols request may take."""
T = TypeVar("T")


class Published(NamedTuple):
    version: int | None
    seq: int  # the order it arrived in
    diagnostics: tuple[Diagnostic, ...]


@dataclass
class _Document:
    version: int
    text: str
    sent: int  # the publish count when this version was sent (for servers without versions)


class Checked(NamedTuple):
    """What one server said about a change: `after` None when it said nothing in time;
    `before` None when what was there before is not known."""

    server: str
    before: tuple[Diagnostic, ...] | None
    after: tuple[Diagnostic, ...] | None
    note: str = ""
    before_text: str | None = None  # the text `before` is about


class Findings(NamedTuple):
    """What the servers of a file said after a change of it."""

    diagnostics: list[Diagnostic]  # errors and warnings; the ones there before marked
    fixed: int  # diagnostics there before the change and gone after it
    servers: list[str]  # the servers that answered in time
    notes: list[str]  # why one said nothing, that one started again, ...
    compared: bool = True  # what was there before is known (else nothing is new or not)


class Server:
    """One server for one project root: its process, documents and what it published."""

    def __init__(self, found: Found, root: Path, owner: LanguageServers) -> None:
        self.config = found.config
        self.program = found.program
        self.root = root
        self.owner = owner
        self.name = found.config.name
        self.state = "idle"  # starting, running, ended (died: may start again), failed, off
        self.error = ""
        self.restarts = 0
        self.connection: Connection | None = None
        self._starting: asyncio.Task[None] | None = None
        self._documents: dict[Path, _Document] = {}
        self._published: dict[str, Published] = {}
        self._seq = 0
        self._signal = asyncio.Event()
        self._notes: list[str] = []  # said once, with the next result
        self._ended_with = ""  # how it ended the last time it died
        self._watcher: asyncio.Task[None] | None = None

    # ------------------------------------------------------------ starting

    @property
    def running(self) -> bool:
        return self.state == "running" and self.connection is not None and self.connection.alive

    async def ready(self, deadline: float) -> bool:
        """Started (now, or already), or still starting at `deadline`: False."""
        task = self._start_if_needed()
        if self.running:
            return True
        if task is None:
            return False
        remaining = deadline - _now()
        if remaining > 0:
            await asyncio.wait({task}, timeout=remaining)  # a start outlives a short wait
        return self.running

    def _start_if_needed(self) -> asyncio.Task[None] | None:
        if self.state == "running" and not self.running:
            self._ended()
        if self.state in ("running", "failed", "off") or self.owner.closed:
            return None
        if self.state == "ended":
            if self.restarts >= MAX_RESTARTS:
                self.state = "off"
                self._notes.append(f"{self.name} ended again{self.error}; it stays off now")
                return None
            self.restarts += 1
        if self._starting is None or self._starting.done():
            self.state = "starting"
            self._starting = asyncio.create_task(self._start())
        return self._starting

    async def _start(self) -> None:
        from agent_cli.lsp.client import Connection

        try:
            await self.owner.load()
        except ImportError as e:
            return self._failed(f"the pygls package could not be loaded ({e}); reinstall agent")
        argv, env = self.owner.command(self)
        connection = Connection(self._on_publish, self.config.settings)
        self.connection = connection
        try:
            await connection.start(argv, self.root, env)
        except OSError as e:
            return self._failed(f"{argv[0]} could not be started ({e.strerror or e})")
        timeout = self.owner.start_timeout
        try:
            await asyncio.wait_for(
                connection.initialize(self.root, self.config.init_options), timeout
            )
        except TimeoutError:
            await connection.close()
            return self._failed(f"it did not answer within {timeout:g} s of starting")
        except Exception as e:
            await connection.close()
            return self._failed(f"it failed to start{connection.exit_words()}: {e}")
        self._documents.clear()
        self._published.clear()
        self.state, self.error = "running", ""
        self._watcher = asyncio.create_task(self._watch(connection))
        if self.restarts:
            self._notes.append(f"{self.name} was started again (it had ended{self._ended_with})")
        self.owner.record()

    def _failed(self, why: str) -> None:
        self.state, self.error = "failed", why
        self._notes.append(f"{self.name} could not be started: {why}; it is left out")
        self.owner.record()

    async def _watch(self, connection: Connection) -> None:
        await connection.exited.wait()
        if self.connection is connection and self.state == "running":
            self._ended()

    def _ended(self) -> None:
        connection = self.connection
        self.error = connection.exit_words() if connection is not None else ""
        self._ended_with = self.error
        self.state = "ended"
        self._wake()
        self.owner.record()

    # ------------------------------------------------------------ documents

    def opened(self, path: Path) -> bool:
        return path in self._documents

    def open_from_disk(self, path: Path) -> None:
        """Tell a running server of a file it has not seen, as it is on disk."""
        if not self.running or path in self._documents:
            return
        text = _read(path)
        if text is not None:
            self._send(path, text)

    def _send(self, path: Path, text: str) -> int:
        """Open the file, or send its whole new text; the version sent."""
        assert self.connection is not None
        document = self._documents.get(path)
        if document is None:
            document = _Document(1, text, self._seq)
            self.connection.open(path, language_of(self.config, path), 1, text)
        else:
            document = _Document(document.version + 1, text, self._seq)
            self.connection.change(path, document.version, text)
        self._documents[path] = document
        return document.version

    async def check(
        self, path: Path, before: str | None, after: str, deadline: float, known: bool = True
    ) -> Checked:
        """Sync `path` from `before` to `after` and wait (until `deadline`) for what the
        server publishes about both. `known` False (a command changed the file): the
        text the server has is the one before, and if it has none, what was there before
        is not known."""
        if not await self.ready(deadline):
            return Checked(self.name, None, None, self._silence())
        document = self._documents.get(path)
        if not known:
            before = document.text if document is not None else None
        baseline: tuple[Diagnostic, ...] | None = () if known else None
        if before is not None and (document is None or document.text != before):
            self._send(path, before)  # the text the change was made to
        if before is not None:
            baseline = await self._diagnostics(path, deadline)
        self._send(path, after)
        assert self.connection is not None
        self.connection.save(path, after)
        found = await self._diagnostics(path, deadline)
        note = "" if found is not None else self._silence()
        return Checked(self.name, baseline, found, note, before)

    async def _diagnostics(self, path: Path, deadline: float) -> tuple[Diagnostic, ...] | None:
        """What the server published for the version of `path` it has; None if nothing
        came by `deadline` (or it ended)."""
        key = str(path)
        while True:
            document = self._documents.get(path)
            published = self._published.get(key)
            if document is None or not self.running:
                return None
            if published is not None and (
                published.version == document.version
                if published.version is not None
                else published.seq > document.sent
            ):
                return published.diagnostics
            remaining = deadline - _now()
            if remaining <= 0:
                return None
            signal = self._signal
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(signal.wait(), remaining)

    def _silence(self) -> str:
        """Why a server said nothing about a change."""
        if self.state == "ended":
            during = f"{self.name} ended{self.error} while checking this change"
            if self.restarts >= MAX_RESTARTS:
                self.state = "off"
                return f"{during}, again; it stays off for this session"
            return f"{during}; it is started again for the next one"
        if self.state == "starting":
            return f"{self.name} is still starting; its diagnostics are not in this result"
        if self.state in ("failed", "off"):
            return ""  # said once, in its own note
        return f"{self.name} said nothing within {self.owner.settle_time:g} s"

    def notes(self) -> list[str]:
        notes, self._notes = self._notes, []
        return notes

    def _on_publish(self, path: str, version: int | None, reported: list[Reported]) -> None:
        self._seq += 1
        relative = self.owner.relative(path)
        diagnostics = tuple(_diagnostic(relative, self.name, r) for r in reported)
        self._published[path] = Published(version, self._seq, diagnostics)
        self._wake()

    def _wake(self) -> None:
        signal, self._signal = self._signal, asyncio.Event()
        signal.set()

    # ------------------------------------------------------------ requests and end

    async def ask(self, path: Path | None, question: Callable[[Connection], Awaitable[T]]) -> T:
        """A request about `path` (opened first, as it is on disk; None: the workspace);
        RuntimeError with why when the server cannot answer."""
        if not await self.ready(_now() + self.owner.start_timeout):
            raise RuntimeError(self.error or f"{self.name} is not running")
        text = _read(path) if path is not None else None
        document = self._documents.get(path) if path is not None else None
        if path is not None and text is not None and (document is None or document.text != text):
            self._send(path, text)
        assert self.connection is not None
        try:
            return await asyncio.wait_for(question(self.connection), REQUEST_TIMEOUT)
        except TimeoutError:
            raise RuntimeError(f"{self.name} did not answer within {REQUEST_TIMEOUT:g} s") from None

    async def close(self) -> None:
        starting, self._starting = self._starting, None
        if starting is not None and not starting.done():
            starting.cancel()
            with contextlib.suppress(BaseException):
                await starting
        connection, self.connection = self.connection, None
        self.state = "off"
        if connection is not None:
            await connection.close()


class LanguageServers:
    """The language servers of one session's workspace, by file and project root."""

    def __init__(
        self,
        found: Sequence[Found],
        workspace: Path,
        sandbox: Sandbox | None = None,
        env: Mapping[str, str] | None = None,
        settle_time: float = DEFAULT_SETTLE_TIME,
        start_timeout: float = DEFAULT_START_TIMEOUT,
    ) -> None:
        self.found = [entry for entry in found if entry.program]
        self.workspace = workspace.resolve()
        self.sandbox = sandbox
        self.env = dict(os.environ if env is None else env)
        self.settle_time = settle_time
        self.start_timeout = start_timeout
        self.closed = False
        self._servers: dict[tuple[str, Path], Server] = {}
        self._loading: asyncio.Future[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._unconfined_said = False

    # ------------------------------------------------------------ which servers

    def wants(self, name: str) -> bool:
        """Whether some server is for files named `name` (cheap: no server starts)."""
        return any(entry.config.matches(name) for entry in self.found)

    def servers_for(self, path: Path) -> list[Server]:
        servers = []
        for entry in self.found:
            if entry.config.matches(path.name):
                root = self._root(entry, path)
                server = self._servers.get((entry.config.name, root))
                if server is None:
                    server = self._servers[entry.config.name, root] = Server(entry, root, self)
                servers.append(server)
        return servers

    def _root(self, entry: Found, path: Path) -> Path:
        """The nearest folder up from `path` (within the workspace) with a root marker."""
        folder = path.parent
        while folder != self.workspace and self.workspace in folder.parents:
            if any((folder / marker).exists() for marker in entry.config.root_markers):
                return folder
            folder = folder.parent
        return self.workspace

    def knows(self, path: Path) -> bool:
        """Whether a server was told of `path` (so what it had before a change is known)."""
        return any(server.opened(path) for server in self._servers.values())

    def running(self) -> list[Server]:
        return [server for server in self._servers.values() if server.running]

    @property
    def any_running(self) -> bool:
        return any(server.running for server in self._servers.values())

    # ------------------------------------------------------------ events

    def touch(self, path: Path) -> None:
        """A file was read or is about to change: start its servers and open it, in the
        background, so they know the text before a change comes."""
        if self.closed:
            return
        for server in self.servers_for(path):
            if not server.opened(path):
                self._background(self._open(server, path))

    async def _open(self, server: Server, path: Path) -> None:
        if await server.ready(_now() + self.start_timeout):
            server.open_from_disk(path)

    async def check(
        self,
        path: Path,
        before: str | None,
        after: str,
        deadline: float | None = None,
        known: bool = True,
    ) -> Findings:
        """What the servers of `path` say after it changed from `before` to `after` (with
        `known` False: from whatever they had of it, see `Server.check`)."""
        deadline = _now() + self.settle_time if deadline is None else deadline
        servers = self.servers_for(path)
        if not servers:
            return Findings([], 0, [], [])
        checked = await asyncio.gather(
            *(server.check(path, before, after, deadline, known) for server in servers)
        )
        found: list[Diagnostic] = []
        fixed, compared = 0, True
        for result in checked:
            if result.after is None:
                continue
            compared = compared and result.before is not None
            now = [d for d in result.after if d.severity in REPORTED]
            marked, gone = compare(result.before, result.before_text, now, after)
            found += marked
            fixed += gone
        answered = [result.server for result in checked if result.after is not None]
        notes = self._unconfined_note() + [r.note for r in checked if r.note]
        notes += [note for server in servers for note in server.notes()]
        return Findings(found, fixed, answered, notes, compared)

    def _unconfined_note(self) -> list[str]:
        if self._unconfined_said or self.sandbox is None or self.sandbox.active:
            return []
        self._unconfined_said = True
        return [f"language servers run without a sandbox: {self.sandbox.mechanism.reason}"]

    async def ask(
        self, path: Path, capability: str, question: Callable[[Connection], Awaitable[T]]
    ) -> list[tuple[str, T]]:
        """`question` to each server of `path` that offers `capability`, as (server, answer);
        RuntimeError saying why when none can answer."""
        servers = self.servers_for(path)
        if not servers:
            raise RuntimeError(f"no language server is set up for {path.name} files")
        answers: list[tuple[str, T]] = []
        problems: list[str] = []
        for server in servers:
            try:
                if not await server.ready(_now() + self.start_timeout):
                    problems.append(f"{server.name}: {server.error or 'not running'}")
                    continue
                assert server.connection is not None
                if server.connection.supports(capability):
                    answers.append((server.name, await server.ask(path, question)))
            except RuntimeError as e:
                problems.append(f"{server.name}: {e}")
        if not answers and problems:
            raise RuntimeError("; ".join(problems))
        return answers

    def relative(self, path: str) -> str:
        """A path as the model reads it: workspace-relative, else as it is."""
        try:
            return Path(path).resolve().relative_to(self.workspace).as_posix()
        except (ValueError, OSError):
            return path

    # ------------------------------------------------------------ running them

    async def load(self) -> None:
        """Import pygls and lsprotocol in a worker thread, once."""
        if self._loading is None or (self._loading.done() and self._loading.exception()):
            from agent_cli.lsp.client import load

            self._loading = asyncio.ensure_future(asyncio.to_thread(load))
        await asyncio.shield(self._loading)

    def command(self, server: Server) -> tuple[list[str], dict[str, str]]:
        """How to start `server`: in the sandbox with the network off, where there is one."""
        argv = [server.program, *server.config.command[1:]]
        if self.sandbox is not None and self.sandbox.active:
            argv = self.sandbox.wrap(argv, self.workspace, network=False)
        return argv, self.env

    def _background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def status(self) -> list[dict[str, Any]]:
        """Each server started in this session: name, root, state, pid, why it stopped."""
        return [
            {
                "name": server.name,
                "root": str(server.root),
                "state": "running" if server.running else server.state,
                "pid": server.connection.pid if server.running and server.connection else 0,
                "error": server.error,
            }
            for server in self._servers.values()
        ]

    def record(self) -> None:
        """Write which servers run for `agent lsp` (one small file per process)."""
        running = [entry for entry in self.status() if entry["state"] == "running"]
        file = _registry() / f"{os.getpid()}.json"
        try:
            if not running or self.closed:
                file.unlink(missing_ok=True)
                return
            file.parent.mkdir(parents=True, exist_ok=True)
            data = {"pid": os.getpid(), "workspace": str(self.workspace), "servers": running}
            temp = file.with_suffix(".tmp")
            temp.write_text(json.dumps(data), encoding="utf-8")
            temp.replace(file)
        except OSError as e:  # only `agent lsp` reads it: never fail a session for it
            log.debug("could not record the running language servers: %s", e)

    async def aclose(self) -> None:
        """End every server (and their starts); nothing is started after this."""
        self.closed = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.gather(
            *(server.close() for server in self._servers.values()), return_exceptions=True
        )
        self.record()


def running_elsewhere(workspace: Path) -> list[dict[str, Any]]:
    """The servers other live agent processes run for `workspace` (stale records removed)."""
    found: list[dict[str, Any]] = []
    folder = _registry()
    if not folder.is_dir():
        return found
    wanted = str(workspace.resolve())
    for file in folder.glob("*.json"):
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            pid = int(data["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not _alive(pid):
            file.unlink(missing_ok=True)
            continue
        if data.get("workspace") == wanted:
            found += [{**entry, "agent": pid} for entry in data.get("servers", [])]
    return found


def _registry() -> Path:
    return paths.data_dir() / "lsp"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _now() -> float:
    return asyncio.get_running_loop().time()


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _diagnostic(path: str, source: str, reported: Reported) -> Diagnostic:
    severity = reported.severity if reported.severity in (1, 2, 3, 4) else 1
    return Diagnostic(
        path=path,
        line=reported.line + 1,
        column=reported.character + 1,
        severity=SEVERITIES[(severity or 1) - 1],
        message=reported.message,
        code=reported.code,
        source=source,
    )
