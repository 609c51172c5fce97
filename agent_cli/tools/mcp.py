"""MCP servers through the official `mcp` SDK, adapted to our `Tool`s (SPEC §9).

One `McpServers` per session: its servers start together the first time their
tools are wanted, each bounded by `MCP_START_TIMEOUT`; one that fails is left
out with a notice. A server whose tools are remembered from an earlier start
(`mcp_listings`) is offered from there and starts when one of them is first
called. Each connection lives in a task of its own (the SDK's
transports are anyio task groups, entered and left by one task); calls are made
from the run's task, so a stop cancels the call itself.

The SDK takes about a second to import, so it is imported only when servers
start, in a worker thread: `agent --help` and read-only runs never load it.

stdio servers run in their own session (the SDK's `start_new_session`), but the
SDK signals the group only when the leader outlives its grace period, and a
leader that exits cleanly can leave children; so each spawn is recorded
(`_record_spawns`) and what is left of its group is ended after the SDK is done.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import fnmatch
import logging
import os
import re
import signal
import tempfile
import time
import uuid
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from agent_cli.errors import ToolError
from agent_cli.providers.breaker import Clock
from agent_cli.tools.base import (
    ArgumentError,
    Effect,
    Tool,
    ToolContext,
    ToolResult,
    lent_call,
    progress_shower,
)
from agent_cli.tools.environment import EnvironmentPolicy
from agent_cli.tools.mcp_breakers import breaker_for, cooling, refusal
from agent_cli.tools.mcp_client import ClientAnswers, callbacks
from agent_cli.tools.mcp_clock import PersonClock
from agent_cli.tools.mcp_content import to_result
from agent_cli.tools.mcp_forms import Elicit
from agent_cli.tools.mcp_listings import (
    Listed,
    forget,
    from_sdk,
    listing_key,
    recall,
    recall_offers,
    remember,
)

if TYPE_CHECKING:
    from agent_cli.sandbox.launch import Sandbox

log = logging.getLogger(__name__)
T = TypeVar("T")

MCP_START_TIMEOUT = 10.0
"""Seconds a server has to start, shake hands and list its tools."""
DEFAULT_CALL_TIMEOUT_MS = 30_000
MCP_KILL_GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL for what is left of a server's process group."""
CLOSE_TIMEOUT = 10.0
"""Seconds a server's shutdown may take before its connection is cancelled outright."""
PROBE_TIMEOUT = 2.0
"""Seconds a server whose call timed out has to answer a listing before it counts as hung."""
EXIT_WAIT = 1.0
"""Seconds to collect the exit code of a server that stopped during a call."""
MAX_TOOL_NAME = 64
IDEMPOTENCY_KEY = "io.agent/idempotency-key"
"""The `_meta` entry of a call that changes something: a server may drop a duplicate by it."""
TITLE_MAX = 80
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class OAuthSettings:
    """An entry's `"oauth"`: how the client is known to the server's authorization server.

    Nothing here is needed: without it the client registers itself (dynamic client
    registration) or, where the server supports it, names itself by `client_metadata_url`.
    A secret is never written in the file: `client_secret_env` names the variable holding it.
    """

    client_id: str = ""
    client_secret_env: str = ""
    client_metadata_url: str = ""  # an https URL of this client's metadata document (CIMD)
    callback_port: int = 0  # the loopback redirect's port (0: any free one)
    # How a pre-registered client's secret goes to the token endpoint: "client_secret_basic",
    # "client_secret_post" or "none" ("": as the authorization server's metadata says).
    token_endpoint_auth_method: str = ""


@dataclass(frozen=True)
class ServerConfig:
    """One `mcpServers` entry: `command` (stdio) or `url` (Streamable HTTP, or legacy SSE)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str = ""
    timeout_ms: int = DEFAULT_CALL_TIMEOUT_MS
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    disabled: bool = False
    sandbox: bool = False  # a stdio server started in the commands' sandbox
    network: bool = False  # with `sandbox`: the network open to it
    source: str = "user"  # "user" or "workspace"
    file: Path | None = None
    sse: bool = False  # a `url` server on the legacy HTTP+SSE transport (`"type": "sse"`)
    oauth: OAuthSettings | None = None

    @property
    def kind(self) -> str:
        return ("sse" if self.sse else "http") if self.url else "stdio"

    def identity(self, workspace: Path) -> list[Any]:
        """Everything that decides what starts (and so what it lists), as written."""
        started = [self.command, list(self.args), dict(self.env), self.cwd]
        return [self.kind, *started, self.url, dict(self.headers), str(workspace)]

    def permits(self, tool: str) -> bool:
        """Per-server allow/deny of the server's tool names (globs); deny wins."""
        if any(fnmatch.fnmatchcase(tool, p) for p in self.deny):
            return False
        return not self.allow or any(fnmatch.fnmatchcase(tool, p) for p in self.allow)


@dataclass(frozen=True)
class ClientHooks:
    """What a session's MCP client answers its servers with, per server.

    `options(config)`: more keyword arguments for the SDK's `Client` of that server (its
    callbacks: elicitation, roots, messages); `auth(config)`: the `httpx2.Auth` of an HTTP
    server (its OAuth login), or None. Both are asked each time the server starts.
    """

    options: Callable[[ServerConfig], Mapping[str, Any]] | None = None
    auth: Callable[[ServerConfig], Any] | None = None


@dataclass(frozen=True)
class _Setup:
    """What every server of a session starts with, besides its entry and environment."""

    start_timeout: float
    sandbox: Sandbox | None
    clock: Clock
    hooks: ClientHooks


class Caller(NamedTuple):
    """Who makes a call: told of a breaker that opened (`warn`), of the server's progress
    (`progress`, a line of text), and asked the forms the server sends meanwhile (`ask`)."""

    warn: Callable[[str], None] | None = None
    progress: Callable[[str], None] | None = None
    ask: Elicit | None = None


NO_CALLER = Caller()


class ServerStatus(NamedTuple):
    """What `agent mcp list` shows of one server."""

    config: ServerConfig
    state: str  # "ok", "failed", "cooling" (its breaker is open), "disabled"
    reason: str
    tools: list[tuple[str, str]]  # (the name the model sees, first line of its description)


@dataclass(frozen=True)
class McpTool(Tool):
    """An MCP server's tool. Its schema is the server's, so the server validates it.

    `Tool.check` understands the schemas our own tools are derived from; an MCP
    schema may use anything JSON Schema has, and checking it with a subset
    would drop or refuse valid arguments. Only the shape is checked here.
    """

    server_tool: str = ""  # the tool's name on its server
    read_only_hint: bool | None = None  # the server's claim: shown, never trusted

    def check(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(arguments, Mapping):
            raise ArgumentError("arguments must be a JSON object")
        missing = [k for k in self.parameters.get("required", ()) if k not in arguments]
        if missing:
            names = ", ".join(repr(m) for m in missing)
            raise ArgumentError(f"arguments lack the required parameter(s) {names}")
        return dict(arguments)


def tool_name(server: str, tool: str) -> str:
    """`SERVER_TOOL` as the model sees it: `[A-Za-z0-9_-]`, at most 64 characters."""
    return _UNSAFE.sub("_", f"{server}_{tool}")[:MAX_TOOL_NAME]


def expand(text: str, env: Mapping[str, str], missing: set[str]) -> str:
    """`${VAR}` and `${VAR:-default}` from the user's environment: how an entry names a secret."""

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is None:
            missing.add(name)
        return default or ""

    return _VARIABLE.sub(value, text)


# ------------------------------------------------------------------ results


def _titler(server: str, tool: str) -> Callable[[Mapping[str, Any]], str]:
    """The card's title: "SERVER: tool" and the arguments as far as they go."""

    def title(args: Mapping[str, Any]) -> str:
        shown = [f"{k}={(v if isinstance(v, str) else repr(v))[:40]}" for k, v in args.items()]
        text = f"{server}: {tool} {', '.join(shown)}".rstrip()
        return text if len(text) <= TITLE_MAX else text[: TITLE_MAX - 1] + "…"

    return title


# ---------------------------------------------------------- the SDK, lazily

# The processes `stdio_client` spawned in this task (see `_record_spawns`).
_SPAWNED: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "agent_mcp_spawned", default=None
)


_SDK: asyncio.Future[None] | None = None  # the import, once per process


def preload_sdk() -> asyncio.Future[None]:
    """Import the SDK in a worker thread, once; a front end may call it when a session opens.

    Starts no program: only the import (a second or so) is done ahead of need.
    """
    global _SDK
    done = _SDK is not None and _SDK.done()
    if (
        _SDK is None
        or _SDK.get_loop() is not asyncio.get_running_loop()
        or (done and (_SDK.cancelled() or _SDK.exception() is not None))
    ):
        _SDK = asyncio.ensure_future(asyncio.to_thread(_import_sdk))
    return _SDK


def _import_sdk() -> None:
    import httpx2  # noqa: F401
    import mcp.client.stdio
    import mcp.client.streamable_http
    from mcp.client import Client  # noqa: F401

    # The SDK logs a server's garbage output as errors; with no handler of ours, logging's
    # last resort would print them over the TUI. A debug log (--debug) still gets them.
    sdk_log = logging.getLogger("mcp")
    if not any(isinstance(h, logging.NullHandler) for h in sdk_log.handlers):
        sdk_log.addHandler(logging.NullHandler())
    _record_spawns(mcp.client.stdio)


def _record_spawns(stdio: Any) -> None:
    """Let a connection learn its server's pid, so the whole group can be ended.

    `stdio_client` keeps its process to itself; wrapping its (private) spawn
    function is the one seam. Without it, only the SDK's own kill is left.
    """
    spawn = getattr(stdio, "_create_platform_compatible_process", None)
    if spawn is None or getattr(spawn, "agent_records", False):
        if spawn is None:
            log.warning("the mcp SDK changed: server process groups are left to the SDK")
        return

    async def recorded(*args: Any, **kwargs: Any) -> Any:
        process = await spawn(*args, **kwargs)
        sink = _SPAWNED.get()
        if sink is not None:
            sink.append(process)
        return process

    recorded.agent_records = True  # type: ignore[attr-defined]
    stdio._create_platform_compatible_process = recorded


async def _end_group(pid: int) -> None:
    """SIGTERM what is left of the group, then SIGKILL after a grace period."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + MCP_KILL_GRACE
    while loop.time() < deadline:
        await asyncio.sleep(0.05)
        try:
            os.killpg(pid, 0)
        except (ProcessLookupError, PermissionError):
            return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _reason(error: BaseException) -> str:
    """The first real error inside (possibly nested) exception groups, as words."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, FileNotFoundError):
        return f"the program {error.filename or ''} was not found".replace("  ", " ")
    if type(error).__name__ == "ConnectError":  # httpx's: a Streamable HTTP server's address
        return "nothing answers at its address (is the server running?)"
    text = getattr(getattr(error, "error", None), "message", "") or str(error)
    if text == "Connection closed":
        return "it closed the connection before the handshake ended"
    return text or type(error).__name__


# --------------------------------------------------------------- one server


class _Server:
    """One server's connection: started, restarted after it died, and closed."""

    def __init__(
        self,
        config: ServerConfig,
        workspace: Path,
        env: Mapping[str, str],
        env_policy: EnvironmentPolicy,
        setup: _Setup,
    ) -> None:
        self.config = config
        self.sandbox = setup.sandbox
        self.hooks = setup.hooks
        self.workspace = workspace
        self.env = env  # the user's whole environment: what an entry's ${VAR} names
        self.env_policy = env_policy  # what of it a stdio server inherits
        self.start_timeout = setup.start_timeout
        self.key = listing_key(config.identity(workspace))
        self.breaker = breaker_for(self.key, config.name, setup.clock)
        self.listing: list[Listed] = []  # as the server listed its tools when it last started
        self.listed_anew = False  # a start listed other tools than were offered
        # What the server said changed (notifications/*/list_changed) since it was listed.
        self.changed: set[str] = set()
        self.offers: frozenset[str] = frozenset()  # of "resources", "prompts": what it serves
        # Roots and forms (tools/mcp_client.py): McpServers shares one among its servers.
        self.answers = ClientAnswers(roots=(workspace,))
        # Its requests' deadlines: they stand still while a login or a form waits on the person.
        self.clock = PersonClock()
        self.started_once = False
        self.error = ""
        self.notices: list[str] = []
        self._client: Any = None  # mcp.client.Client, while connected
        self._auth: Any = None  # an HTTP server's httpx2.Auth (its OAuth login), once started
        self._spawned: list[Any] = []  # the stdio server's process (anyio), once spawned
        self._runner: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._scope: Any = None  # the runner's anyio.CancelScope
        self._broken = False
        self._lock = asyncio.Lock()
        self.ended = False  # the session closed it: never started again

    @property
    def client(self) -> Any:
        """The SDK's `Client` while connected (None otherwise)."""
        return self._client

    @property
    def alive(self) -> bool:
        if self._client is None or self._broken or self._runner is None or self._runner.done():
            return False
        return all(p.returncode is None for p in self._spawned)

    async def start(self) -> bool:
        """Connect and list the tools within the start timeout; False, with `error`, if not.

        What it lists is remembered for the next session; a server that fails
        is forgotten, so the next session starts it up front and says why.
        """
        started = await self._start()
        if started:
            self.started_once = True
            remember(self.key, self.listing, self.offers)
        else:
            forget(self.key)
        return started

    async def start_guarded(self) -> bool:
        """`start`, behind the breaker: refused while it cools down, a failure counted."""
        if not self.breaker.allow():
            self.error = refusal(self.config.name, self.breaker).split(". Do without")[0]
            return False
        started = await self.start()
        if started:
            self.breaker.abandon()  # a start is no call: only a call's answer closes it
        else:
            self.breaker.failure(self.error)
        return started

    async def _start(self) -> bool:
        if self.ended:
            self.error = "the session was closed"
            return False
        try:
            await asyncio.shield(preload_sdk())
        except ImportError as e:  # an install without the SDK: say so, do not fail the run
            self.error = f"the mcp package could not be loaded ({e}); reinstall agent"
            return False
        if self.ended:
            self.error = "the session was closed"
            return False
        ready: asyncio.Future[list[Listed]] = asyncio.get_running_loop().create_future()
        self._closing, self._broken, self._spawned = asyncio.Event(), False, []
        self._runner = asyncio.create_task(self._run(ready, self._closing, self._spawned))
        try:
            self.listing = await self._ready(ready)
        except TimeoutError:
            ready.add_done_callback(_retrieve)  # its error, set once closed, is said here
            await self.close()
            self.error = f"it did not start within {self.start_timeout:g} s"
            return False
        except Exception as e:
            self.error = _reason(e)
            return False
        self.error = ""
        return True

    async def _ready(self, ready: asyncio.Future[list[Listed]]) -> list[Listed]:
        """The start's listing, within the start timeout — which does not run out while the
        person is logging in (the login has a time limit of its own)."""
        while True:
            try:
                return await asyncio.wait_for(asyncio.shield(ready), self.start_timeout)
            except TimeoutError:
                if not getattr(self._auth, "awaiting_person", False):
                    raise

    async def _run(
        self, ready: asyncio.Future[list[Listed]], closing: asyncio.Event, spawned: list[Any]
    ) -> None:
        """Own the connection from start to end (the SDK's task groups are per task)."""
        import anyio

        _SPAWNED.set(spawned)
        # The server's stderr: kept off the terminal; its last line explains a failure.
        errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        try:
            with anyio.CancelScope() as self._scope:
                if not closing.is_set():
                    async with self._connect(errlog) as client:
                        listing = [from_sdk(tool) for tool in await _list_tools(client)]
                        self.offers = await _offers(client)
                        self._client = client
                        ready.set_result(listing)
                        await closing.wait()
        except Exception as e:
            if not ready.done():
                ready.set_exception(RuntimeError(_with_output(_reason(e), errlog)))
            log.debug("MCP server %s ended", self.config.name, exc_info=True)
        finally:
            self._client = self._scope = None
            if not ready.done():
                ready.set_exception(RuntimeError(_with_output("it ended", errlog)))
            errlog.close()
            await asyncio.gather(*(_end_group(p.pid) for p in spawned))

    @contextlib.asynccontextmanager
    async def _connect(self, errlog: Any) -> AsyncIterator[Any]:
        from mcp.client import Client
        from mcp_types import Implementation

        from agent_cli import __version__

        config, missing = self.config, set[str]()

        def value(text: str) -> str:
            return expand(text, self.env, missing)

        async with contextlib.AsyncExitStack() as stack:
            hooks = self.hooks
            auth = hooks.auth(config) if hooks.auth is not None and config.url else None
            self._auth = auth
            # Our login (mcp_auth): its time in the browser is the person's, not the server's.
            if auth is not None and hasattr(auth, "person"):
                auth.person = self.clock.person
            if config.url and config.sse:
                from mcp.client.sse import sse_client

                headers = {k: value(v) for k, v in config.headers.items()}
                transport: Any = sse_client(value(config.url), headers=headers, auth=auth)
            elif config.url:
                import httpx2
                from mcp.client.streamable_http import streamable_http_client

                headers = {k: value(v) for k, v in config.headers.items()}
                timeout = httpx2.Timeout(30, read=300)
                http = httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth)
                await stack.enter_async_context(http)
                transport = streamable_http_client(value(config.url), http_client=http)
            else:
                from mcp.client.stdio import StdioServerParameters, stdio_client

                inherited = self.env_policy.apply(self.env)
                env = inherited | {k: value(v) for k, v in config.env.items()}
                cwd = self.workspace / Path(value(config.cwd)).expanduser()  # "" is the workspace
                argv = [value(config.command), *(value(a) for a in config.args)]
                if config.sandbox:
                    if self.sandbox is None or not self.sandbox.active:
                        why = self.sandbox.mechanism.reason if self.sandbox else "none is set up"
                        raise ToolError(f"it asks for the sandbox, and there is none: {why}")
                    argv = self.sandbox.wrap(argv, self.workspace, config.network)
                command = StdioServerParameters(
                    command=argv[0],
                    args=argv[1:],
                    env=env,
                    cwd=str(cwd),
                    # Bytes that are not UTF-8 would end the SDK's reader and hang every call.
                    encoding_error_handler="replace",
                )
                transport = stdio_client(command, errlog=errlog)
            if missing:
                names = ", ".join(sorted(missing))
                self.notices.append(f"MCP server {config.name!r}: {names} not set; used empty.")
            info = Implementation(name="agent", version=__version__)
            options = callbacks(config.name, self.answers, self.changed.add, self.clock.person)
            if hooks.options is not None:  # the caller's own (`--accept-defaults`) go first
                options.update(hooks.options(config))
            yield await stack.enter_async_context(
                Client(transport, mode="auto", cache=None, client_info=info, **options)
            )

    async def relist(self) -> None:
        """List the tools again: the server said they changed. Kept as they were if it fails."""
        self.changed.discard("tools")
        client = self._client
        if client is None:
            return
        try:
            self.listing = [from_sdk(tool) for tool in await _list_tools(client)]
        except Exception:
            log.debug("listing MCP server %s's tools again failed", self.config.name, exc_info=True)
            return
        remember(self.key, self.listing, self.offers)

    async def request(self, what: str, send: Callable[[Any], Awaitable[T]]) -> T:
        """`send(client)` to the server (started first if it is not running), within its
        call timeout; ToolError saying it could not do `what` if not."""
        name = self.config.name
        async with self._lock:
            if self.ended:
                raise ToolError(f"The MCP server {name!r} was closed.")
            if not self.alive:
                await self.close()
                if not await self.start():
                    raise ToolError(f"The MCP server {name!r} could not be started: {self.error}.")
            client = self._client
        seconds = self.config.timeout_ms / 1000
        try:
            with self.clock.deadline(seconds):
                return await send(client)
        except TimeoutError:
            late = f"The MCP server {name!r} did not {what} within {seconds:g} s."
            raise ToolError(late) from None
        except Exception as e:
            raise ToolError(f"The MCP server {name!r} could not {what}: {_reason(e)}.") from e
        except BaseException:  # stopped
            if getattr(self._auth, "awaiting_person", False):
                self._drop()  # during a login: the login ends here, and the request with it
            raise

    async def roots_changed(self) -> None:
        """Tell a running server its roots changed (it asks for them again)."""
        client = self._client
        if client is None or not self.alive:
            return
        try:
            with warnings.catch_warnings():  # deprecated by 2026-07-28; 2025 servers use it
                warnings.simplefilter("ignore")
                await client.session.send_roots_list_changed()
        except Exception:
            log.debug("telling MCP server %s of new roots failed", self.config.name, exc_info=True)

    async def call(
        self, tool: str, arguments: dict[str, Any], key: str = "", caller: Caller = NO_CALLER
    ) -> ToolResult:
        """Call `tool`, behind the server's breaker; `key`: the call's idempotency key.

        A call whose connection was lost is sent once more with the same key (a server
        that knows the key drops the duplicate). `caller.warn` tells the person, once, that
        the server's breaker opened.
        """
        name, breaker, warn = self.config.name, self.breaker, caller.warn
        if not breaker.allow():
            return ToolResult(refusal(name, breaker), is_error=True)
        try:
            result, verdict = await self._attempt(tool, arguments, key, caller)
            if verdict == "lost" and key:
                if self._failed(result, warn):
                    return ToolResult(f"{result.text} {refusal(name, breaker)}", is_error=True)
                log.debug("MCP call %s.%s sent again with the same key %s", name, tool, key)
                again, verdict = await self._attempt(tool, arguments, key, caller)
                if again.is_error:
                    same = again.text == result.text
                    text = f"{result.text} Sent once more with the same idempotency key, it "
                    text += "failed the same way." if same else f"failed again: {again.text}"
                    again = ToolResult(text, is_error=True)
                result = again
        except BaseException:  # stopped: no verdict on the server
            breaker.abandon()
            raise
        if verdict == "ok":
            breaker.success()
        elif verdict != "none" and self._failed(result, warn):
            return ToolResult(f"{result.text} {refusal(name, breaker)}", is_error=True)
        return result

    def _failed(self, result: ToolResult, warn: Callable[[str], None] | None) -> bool:
        """Count a failure; True (and the person told, the first time) if it opened the breaker."""
        breaker = self.breaker
        if not breaker.failure(result.text):
            return False
        if warn is not None and breaker.openings == 1:
            warn(
                f"The MCP server {self.config.name!r} failed {breaker.failures} times in a row; "
                f"its tools are not called until {breaker.until_text()}. "
                f"`/mcp restart {self.config.name}` or `agent mcp list` resets it."
            )
        return True

    async def _attempt(
        self, tool: str, arguments: dict[str, Any], key: str, caller: Caller
    ) -> tuple[ToolResult, str]:
        """One delivery of the call, and its verdict on the server: "ok" (it answered),
        "failed" (no start, no answer in time), "lost" (the connection broke: sent again),
        "none" (closed by the session)."""
        name = self.config.name
        async with self._lock:
            if self.ended:
                return ToolResult(f"The MCP server {name!r} was closed.", is_error=True), "none"
            if not self.alive:
                again = " again" if self.started_once else ""
                offered = self.listing
                await self.close()
                if not await self.start():
                    text = f"The MCP server {name!r} could not be started{again}: {self.error}."
                    return ToolResult(text, is_error=True), "failed"
                if self.listing != offered:
                    self.listed_anew = True  # its tools changed since they were offered
            if tool not in {t.name for t in self.listing}:
                text = (
                    f"The MCP server {name!r} no longer offers the tool {tool!r}; its tools "
                    "changed since they were last listed. Its current tools are offered "
                    "from the next message."
                )
                return ToolResult(text, is_error=True), "ok"
            client = self._client
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        seconds = self.config.timeout_ms / 1000
        meta: Any = {IDEMPOTENCY_KEY: key} if key else None
        log.debug("MCP call %s.%s (idempotency key %s)", name, tool, key or "none")
        progress = _progress(caller.progress)
        try:
            with self.clock.deadline(seconds), self.answers.asking(caller.ask):
                answer = await client.call_tool(
                    tool, arguments, progress_callback=progress, meta=meta
                )
                return to_result(answer), "ok"
        except TimeoutError:
            text = f"The MCP server {name!r} did not answer within {seconds:g} s; the call ended."
            if not await _answers(client):
                self._broken = True
                text += " It does not answer at all now, so the next call starts it again."
            return ToolResult(text, is_error=True), "failed"
        except MCPError as e:
            if e.code != CONNECTION_CLOSED:
                text = f"The MCP server {name!r} refused the call: {e}"
                return ToolResult(text, is_error=True), "ok"
            self._broken = True
            if failure := getattr(self._auth, "failure", ""):  # a login during the call failed
                return ToolResult(
                    f"The MCP server {name!r} needs a login: {failure}", True
                ), "failed"
            codes = await _exit_codes(self._spawned)
            how = f" (exit code {codes[0]})" if codes else ""
            text = (
                f"The MCP server {name!r} stopped during the call{how}; the call did not finish. "
                "It will be started again for the next call."
            )
        except Exception as e:  # a broken pipe or connection, a malformed answer
            log.debug("MCP call %s.%s failed", name, tool, exc_info=True)
            self._broken = True
            text = f"The call to the MCP server {name!r} failed: {_reason(e)}."
        except BaseException:  # stopped
            if getattr(self._auth, "awaiting_person", False):
                self._drop()  # during a login: the login ends here, and its call with it
            raise
        return ToolResult(text, is_error=True), "lost"

    def _drop(self) -> None:
        """End the connection now, whatever it was doing (a login waiting on the browser, the
        requests queued behind it): nothing sent meanwhile reaches the server. The next call
        starts it again."""
        self._broken = True
        if self._scope is not None:
            self._scope.cancel()

    async def close(self) -> None:
        """End the connection and the server's process group; one still starting is killed."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._closing.set()
        if self._client is None or self._broken:  # still starting, or hung: no goodbye
            for process in self._spawned:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
        if self._client is None and self._scope is not None:
            self._scope.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(runner), CLOSE_TIMEOUT)
        except TimeoutError:
            if self._scope is not None:
                self._scope.cancel()
            with contextlib.suppress(BaseException):
                await runner
        except Exception:
            log.debug("closing MCP server %s", self.config.name, exc_info=True)


async def _offers(client: Any) -> frozenset[str]:
    """What a connected server serves besides tools: resources, prompts — declared in its
    capabilities and some listed (SDK servers declare both whether they have any or not)."""
    capabilities = client.server_capabilities
    offers = set()
    try:
        if capabilities.resources is not None:
            listed = await client.list_resources()
            if listed.resources or (await client.list_resource_templates()).resource_templates:
                offers.add("resources")
        if capabilities.prompts is not None and (await client.list_prompts()).prompts:
            offers.add("prompts")
    except Exception:  # a server that refuses the listing it declared: it offers no more
        log.debug("MCP server listing its resources or prompts failed", exc_info=True)
    return frozenset(offers)


def _progress(show: Callable[[str], None] | None) -> Any:
    """The SDK's progress callback, as a line: "3/10 · copying files"."""
    if show is None:
        return None

    async def progress(done: float, total: float | None, message: str | None) -> None:
        amount = f"{done:g}/{total:g}" if total else f"{done:g}"
        show(f"{amount} · {message}" if message else amount)

    return progress


def _with_output(reason: str, errlog: Any) -> str:
    with contextlib.suppress(OSError, ValueError):
        errlog.seek(0)
        lines = [line.strip() for line in errlog.read()[-4000:].splitlines() if line.strip()]
        if lines:
            return f"{reason} (its last output: {lines[-1][:300]})"
    return reason


async def _answers(client: Any) -> bool:
    """Whether a server whose call timed out still answers (a listing) at all."""
    import anyio

    with anyio.move_on_after(PROBE_TIMEOUT):
        try:
            await client.list_tools()
        except Exception:
            log.debug("MCP probe failed", exc_info=True)
            return False
        return True
    return False


async def _exit_codes(processes: Sequence[Any]) -> list[int]:
    """The exit codes of a server's processes that just stopped (given a moment to be reaped)."""
    import anyio

    with anyio.move_on_after(EXIT_WAIT):
        for process in processes:
            await process.wait()
    return [p.returncode for p in processes if p.returncode is not None]


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a future's error as seen (asyncio would log it as never retrieved)."""
    if not future.cancelled():
        future.exception()


async def _list_tools(client: Any) -> list[Any]:
    tools, cursor = [], None
    for _ in range(100):  # a server that pages forever cannot hang the start
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


# --------------------------------------------------------------- the session's


class McpServers:
    """A session's MCP servers: started together on first use, ended with the session."""

    def __init__(
        self,
        configs: Sequence[ServerConfig],
        workspace: Path,
        env: Mapping[str, str],
        *,
        env_policy: EnvironmentPolicy | None = None,
        start_timeout: float = MCP_START_TIMEOUT,
        sandbox: Sandbox | None = None,
        clock: Clock = time.time,
        hooks: ClientHooks | None = None,
    ) -> None:
        """`env`: the user's whole environment; `env_policy` says what of it a stdio server
        inherits (the default: all but secret-looking names), before its entry's own `env`.
        `sandbox`: where an entry with `"sandbox": true` starts; `clock`: the servers'
        breakers' (wall-clock seconds); `hooks`: the client's callbacks and HTTP auth."""
        self.configs = list(configs)
        policy = env_policy or EnvironmentPolicy()
        setup = _Setup(start_timeout, sandbox, clock, hooks or ClientHooks())
        self._servers = [
            _Server(c, workspace, env, policy, setup) for c in self.configs if not c.disabled
        ]
        # Roots, forms: one answer for every server (`answers.elicit` may be set by a caller).
        self.answers = ClientAnswers(roots=(workspace,))
        for server in self._servers:
            server.answers = self.answers
        self._loading: asyncio.Future[tuple[list[Tool], list[str]]] | None = None
        # Counts the offers: each consumer of `tools()` (a loop, the prompt commands) compares
        # it with the one it took, as a new offer clears `listed_anew` for them all.
        self.offering = 0
        self.hints: dict[str, bool | None] = {}  # readOnlyHint by the name the model sees
        self._status: dict[str, ServerStatus] = {}

    def start(self) -> None:
        """Begin offering the servers' tools in the background (idempotent); `tools()` waits.

        Offered again once a server listed other tools than it was offered with.
        """
        if self._loading is None or (self._loading.done() and self.listed_anew):
            self._loading = asyncio.ensure_future(self._offer(remembered=True))
            self.offering += 1

    async def tools(self) -> tuple[list[Tool], list[str]]:
        """Every server's tools, and notices for what was left out and why.

        Servers whose tools are remembered are offered from there without
        starting; the others start (together) and are waited for.
        """
        if not self._servers:
            return [], []
        self.start()
        assert self._loading is not None
        tools, notices = await asyncio.shield(self._loading)
        return list(tools), list(notices)

    @property
    def listed_anew(self) -> bool:
        """A server started during the session listed other tools than it was offered with,
        or said its tools changed (notifications/tools/list_changed)."""
        return any(s.listed_anew or "tools" in s.changed for s in self._servers)

    async def set_roots(self, roots: Sequence[Path]) -> None:
        """Other roots from now on; the running servers are told (roots/list_changed)."""
        self.answers.roots = tuple(roots)
        await asyncio.gather(*(server.roots_changed() for server in self._servers))

    async def status(self) -> list[ServerStatus]:
        """Start every server and say how each one is, for `agent mcp list`."""
        await self._offer(remembered=False)
        off = "disabled in its file"
        return [
            self._status.get(c.name) or ServerStatus(c, "disabled", off, []) for c in self.configs
        ]

    async def _offer(self, remembered: bool) -> tuple[list[Tool], list[str]]:
        """The servers' tools; with `remembered`, a server's remembered tools stand in for
        starting it."""
        waiting = []
        for server in self._servers:
            server.listed_anew = False  # what it lists now is what is offered
            if server.alive:
                if "tools" in server.changed:
                    await server.relist()
                continue  # its listing is current
            kept = recall(server.key) if remembered else None
            if kept is None:
                waiting.append(server)
            else:
                server.listing, server.offers = kept, recall_offers(server.key)
        if any(s.ended for s in self._servers):
            return [], []  # closed already: start nothing
        answers = await asyncio.gather(*(server.start_guarded() for server in waiting))
        started = dict(zip(waiting, answers, strict=True))
        tools: list[Tool] = []
        notices: list[str] = []
        owners: dict[str, str] = {}
        for server in self._servers:
            config = server.config
            notices += server.notices
            if not started.get(server, True):
                notices.append(
                    f"The MCP server {config.name!r} was left out: {server.error}. "
                    "Check it with `agent mcp list`."
                )
                cooled = cooling(server.key)
                state = ("cooling", cooled) if cooled else ("failed", server.error)
                self._status[config.name] = ServerStatus(config, *state, [])
                continue
            shown: list[tuple[str, str]] = []
            for listed in server.listing:
                if not config.permits(listed.name):
                    continue
                name = tool_name(config.name, listed.name)
                if name in owners:
                    notices.append(
                        f"The MCP tool {listed.name!r} of {config.name!r} was left out: its name "
                        f"{name!r} is taken by {owners[name]}."
                    )
                    continue
                owners[name] = f"{listed.name!r} of {config.name!r}"
                tool = _adapt(server, listed, name)
                self.hints[name] = tool.read_only_hint
                tools.append(tool)
                shown.append((name, (tool.description.strip().splitlines() or [""])[0]))
            self._status[config.name] = ServerStatus(config, "ok", "", shown)
        if any("resources" in s.offers and started.get(s, True) for s in self._servers):
            from agent_cli.tools.mcp_resources import resource_tools

            tools += [t for t in resource_tools(self) if t.name not in owners]
        return tools, notices

    def take_changed(self, offer: str) -> bool:
        """Whether a server said its `offer` ("prompts", "resources") changed since this was
        last asked (notifications/*/list_changed): each notification counts once."""
        said = [s for s in self._servers if offer in s.changed]
        for server in said:
            server.changed.discard(offer)
        return bool(said)

    def serving(self, offer: str) -> dict[str, _Server]:
        """The servers (by name) that serve `offer` ("resources", "prompts")."""
        return {s.config.name: s for s in self._servers if offer in s.offers}

    async def connect(self, name: str) -> tuple[list[Listed], Any]:
        """Start the server `name` now, for `agent mcp tools/call`: its tools as it lists them,
        and its SDK client (ended by `aclose`). A `ToolError` says why it did not start."""
        server = next((s for s in self._servers if s.config.name == name), None)
        if server is None:
            raise ToolError(f"There is no MCP server {name!r} here (or it is disabled).")
        if not server.alive and not await server.start():
            raise ToolError(f"The MCP server {name!r} could not be started: {server.error}.")
        return list(server.listing), server.client

    def clock(self, name: str) -> PersonClock:
        """The deadlines of server `name`'s requests, for a call made on its client directly
        (`agent mcp call`): they stand still while its login or a form waits on the person."""
        server = next((s for s in self._servers if s.config.name == name), None)
        return server.clock if server is not None else PersonClock()

    async def aclose(self) -> None:
        """End every server and whatever its process group left running."""
        for server in self._servers:
            server.ended = True
        await asyncio.gather(*(s.close() for s in self._servers))
        if self._loading is not None and not self._loading.done():
            with contextlib.suppress(BaseException):
                await self._loading
            await asyncio.gather(*(s.close() for s in self._servers))


def _caller(item: Any, run: Any) -> Caller:
    """A call's run as its `Caller`: warnings are its notices, progress shows on the item,
    forms are asked through it (`Run.elicit`)."""
    if run is None:
        return Caller()
    warn = lambda text: run.notice(text, "warn")  # noqa: E731
    return Caller(warn, progress_shower(item, run), getattr(run, "elicit", None))


def _adapt(server: _Server, listed: Listed, name: str) -> McpTool:
    """One of a server's tools as a `Tool`: an external effect, the server's schema."""
    schema = dict(listed.input_schema)
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    remote = listed.name
    keyed = listed.read_only_hint is not True  # a change, as far as the server says

    async def call(ctx: ToolContext, /, **arguments: Any) -> ToolResult:
        item, run = lent_call(ctx)
        key = ""
        if keyed:  # one key per call, kept on its item: a re-run of the call sends it again
            key = getattr(item, "idempotency_key", "") or uuid.uuid4().hex
            if item is not None:
                item.idempotency_key = key
        return await server.call(remote, arguments, key, _caller(item, run))

    return McpTool(
        name=name,
        description=listed.description or listed.title or f"{remote} (MCP: {server.config.name})",
        effect=Effect.EXTERNAL,
        function=call,
        parameters=schema,
        title=_titler(server.config.name, remote),
        mcp=server.config.name,
        server_tool=remote,
        read_only_hint=listed.read_only_hint,
    )
