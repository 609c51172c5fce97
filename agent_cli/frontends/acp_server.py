"""`agent acp`: our agent served over the Agent Client Protocol on stdio.

An editor (Zed, Toad, ...) is the client. Each ACP session is one of our
Sessions — its id is the conversation's id, so `session/load` finds it after
a restart — and this module is only a subscriber of its events, like every
front end: text and reasoning deltas become message and thought chunks, tool
items become tool calls (`acp_updates`), approval requests become
`session/request_permission`. The command (`commands/acp.py`) builds the
Sessions; this module never sees the wiring.

Choices a client may notice:

- A notice (why something did not happen) is a paragraph of the agent's
  message, in a blockquote: `> Warning: Stopped after 30 rounds, ...`.
- A run that ends in an error answers `session/prompt` with a JSON-RPC error
  whose message is our one sentence; so does any request we refuse.
- File text is read and written through the client's `fs/*` when it offers
  both methods (its unsaved buffers are what the model reads), always after
  our own workspace confinement.
- A sub-agent's work (the `task` tool) shows as thoughts and tool calls:
  only the conversation's own agent speaks in the message.
- MCP servers a client names in `session/new` are not started; ours come
  from `mcp.json`. A workspace's own `.agent/mcp.json` is not trusted here.

stdout carries nothing but the protocol (`acp_stdio`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import functools
import logging
import signal
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

from acp import PROTOCOL_VERSION, RequestError, run_agent
from acp import update_agent_message_text as message_chunk
from acp import update_agent_thought_text as thought_chunk
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    UnstructuredCommandInput,
)
from acp.schema import StopReason as AcpStopReason

from agent_cli.engine.approval import ApprovalRequest, Decision
from agent_cli.engine.backend import StopReason
from agent_cli.engine.events import (
    ApprovalRequested,
    Delta,
    ElicitationRequested,
    Event,
    ItemAdded,
    ItemUpdated,
    NoticeEvent,
    PlanUpdated,
    RunFinished,
)
from agent_cli.engine.items import AssistantItem, ToolItem
from agent_cli.engine.session import Session
from agent_cli.errors import AgentError, ConfigError, ToolError, UsageError
from agent_cli.frontends.acp_stdio import protocol_streams
from agent_cli.frontends.acp_updates import (
    ToolView,
    is_nested,
    notice_text,
    permission_call,
    plan_update,
    replay,
    tool_progress,
    tool_start,
    tool_view,
)
from agent_cli.frontends.prompt_commands import CommandRegistry, expand_text
from agent_cli.media import Image, Prompt, image_from_bytes
from agent_cli.policy.modes import MODES_TEXT
from agent_cli.policy.rules import split_rules
from agent_cli.tools.base import FileAccess
from agent_cli.tools.workspace import Workspace

log = logging.getLogger(__name__)

MODES = (
    ("ask", "Ask", "Reads freely; asks before changing files, running commands or MCP tools."),
    (
        "auto",
        "Auto",
        "Edits in the workspace and sandboxed commands run; MCP calls and leaving the sandbox ask.",
    ),
    ("read-only", "Read-only", "Only reads: every change is refused, and the model is told why."),
    ("full", "Full", "Changes files and runs commands without asking."),
    (
        "plan",
        "Plan",
        "Reads, then ends with a plan to approve; switch to another mode to carry it out.",
    ),
)
STOP_REASONS: dict[StopReason, AcpStopReason] = {
    StopReason.ANSWERED: "end_turn",
    StopReason.STOPPED: "cancelled",
    StopReason.ROUND_LIMIT: "max_turn_requests",
    StopReason.REPEATED_FAILURE: "end_turn",  # a notice says why it stopped
}
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE = "allow-once", "allow-always", "reject-once"
NOT_ASKED = "The editor could not be asked for permission, so nothing was done."
NO_FORMS = "the editor, connected over ACP, has no way to show an MCP server's form"


@dataclass
class Opened:
    """A Session for an ACP session, and how to release everything it holds."""

    session: Session
    close: Callable[[], Awaitable[None]]
    commands: CommandRegistry | None = None  # advertised as the session's available commands


# (workspace, stored conversation id or None for a new one, file access or None) → Opened
OpenSession = Callable[[Path, str | None, FileAccess | None], Awaitable[Opened]]

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def answers(method: F) -> F:
    """Turn our errors into JSON-RPC errors with our one-sentence message, never a traceback."""

    @functools.wraps(method)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return await method(*args, **kwargs)
        except RequestError:
            raise
        except AgentError as e:
            code = INVALID_PARAMS if isinstance(e, UsageError | ConfigError) else INTERNAL_ERROR
            raise RequestError(code, str(e)) from e
        except Exception as e:
            log.exception("%s failed", method.__name__)
            raise RequestError(
                INTERNAL_ERROR,
                f"Unexpected error: {e!r} — run agent acp with --debug and read the log.",
            ) from e

    return wrapper  # type: ignore[return-value]


class AcpServer:
    """The ACP agent: one served Session per ACP session id."""

    def __init__(self, open_session: OpenSession, version: str) -> None:
        self._open = open_session
        self._version = version
        self._client: Any = None  # the AgentSideConnection, given by on_connect
        self._client_files = False
        self._served: dict[str, Served] = {}

    def on_connect(self, client: Any) -> None:
        self._client = client

    @answers
    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, **_: Any
    ) -> InitializeResponse:
        fs = client_capabilities.fs if client_capabilities is not None else None
        self._client_files = bool(fs and fs.read_text_file and fs.write_text_file)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True, image=True),
            ),
            agent_info=Implementation(name="agent", title="agent", version=self._version),
            auth_methods=[],
        )

    @answers
    async def new_session(self, cwd: str, mcp_servers: Any = None, **_: Any) -> NewSessionResponse:
        served = await self._start(_workspace(cwd), None, mcp_servers)
        served.advertise_soon()
        return NewSessionResponse(session_id=served.id, modes=_modes(served.session.mode))

    @answers
    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **_: Any
    ) -> LoadSessionResponse:
        workspace = _workspace(cwd)
        served = self._served.get(session_id)
        if served is None:
            served = await self._start(workspace, session_id, mcp_servers)
        elif served.workspace.root != workspace:
            raise UsageError(
                f"Conversation {session_id} belongs to {served.workspace.root} — load it with "
                "that folder as cwd."
            )
        await served.replay()
        served.advertise_soon()
        return LoadSessionResponse(modes=_modes(served.session.mode))

    @answers
    async def set_session_mode(
        self, mode_id: str, session_id: str, **_: Any
    ) -> SetSessionModeResponse:
        served = self._get(session_id)
        if mode_id not in {mode for mode, _name, _text in MODES}:
            raise UsageError(f"There is no mode {mode_id!r} — use {MODES_TEXT}.")
        served.session.set_mode(mode_id)
        return SetSessionModeResponse()

    @answers
    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        served = self._get(session_id)
        return await served.prompt(prompt_of(prompt, served.workspace.root))

    async def cancel(self, session_id: str, **_: Any) -> None:
        served = self._served.get(session_id)
        if served is not None:
            served.cancel()

    async def aclose(self) -> None:
        """End every session: runs stopped, conversations saved, providers closed."""
        served, self._served = list(self._served.values()), {}
        for one in served:
            try:
                await one.aclose()
            except Exception:
                log.exception("closing session %s failed", one.id)

    def _get(self, session_id: str) -> Served:
        served = self._served.get(session_id)
        if served is None:
            raise UsageError(
                f"There is no session {session_id!r} here — start one with session/new "
                "or session/load."
            )
        return served

    async def _start(self, workspace: Path, stored: str | None, mcp_servers: Any) -> Served:
        if mcp_servers:
            log.warning("the client's MCP servers are not started; agent uses its mcp.json")
        files = ClientFiles(self._client, workspace) if self._client_files else None
        opened = await self._open(workspace, stored, files)
        served = Served(opened, self._client)
        if files is not None:
            files.session_id = served.id
        self._served[served.id] = served
        return served


class Served:
    """One ACP session: our Session, its outbox of updates, and the permissions it asks."""

    def __init__(self, opened: Opened, client: Any) -> None:
        self.session = opened.session
        self.id = opened.session.conversation.id
        self.workspace = Workspace(opened.session.conversation.workspace)
        self._close = opened.close
        self.commands = opened.commands
        self._client = client
        self.outbox = Outbox(self._send)
        self._views: dict[str, ToolView] = {}
        self._nested: set[str] = set()  # sub-agents' answers: shown as thoughts
        self._asking: set[asyncio.Task[None]] = set()
        self._telling: set[asyncio.Task[None]] = set()  # the available commands, being sent
        self._unsubscribe = self.session.events.subscribe(self._on_event)
        # A prompt that comes while one runs waits its turn (asyncio's lock is first come,
        # first served); a cancel ends the running one and every one waiting then.
        self._turn = asyncio.Lock()
        self._cancels = 0

    def advertise_soon(self) -> None:
        """Tell the client the prompt commands, once it has the session's id (the answer
        to session/new or session/load is written before the next loop turn)."""
        if self.commands is not None:
            task = asyncio.ensure_future(self._advertise(self.commands))
            self._telling.add(task)
            task.add_done_callback(self._telling.discard)

    async def _advertise(self, commands: CommandRegistry) -> None:
        await asyncio.to_thread(commands.refresh)
        commands.take_warnings()  # an editor has nowhere to show them
        listed = [
            AvailableCommand(
                name=c.name,
                description=c.description + (" (project)" if c.origin == "project" else ""),
                input=AvailableCommandInput(UnstructuredCommandInput(hint=c.argument_hint))
                if c.argument_hint
                else None,
            )
            for c in commands.commands()
        ]
        update = AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=listed
        )
        self.outbox.put(update)

    async def prompt(self, message: Prompt) -> PromptResponse:
        text = message.text
        if self.commands is not None and text.startswith("/"):
            await asyncio.to_thread(self.commands.refresh)
            expanded = await expand_text(self.commands, text)
            if isinstance(expanded, Prompt):  # its images go with the message, and only
                images = (*expanded.images, *message.images)  # the arguments mention
                message = replace(message, images=images, mentions=expanded.mentions)
                expanded = expanded.text
            text = expanded
        cancels = self._cancels
        async with self._turn:
            if self._cancels != cancels:  # cancelled while it waited: it never runs
                return PromptResponse(stop_reason="cancelled")
            result = await self.session.send(replace(message, text=text))
        await self.outbox.flushed()  # every update of the turn before its answer
        if result.reason is StopReason.ERROR:
            raise RequestError(INTERNAL_ERROR, result.error or "The run failed.")
        return PromptResponse(stop_reason=STOP_REASONS.get(result.reason, "end_turn"))

    async def replay(self) -> None:
        """Send the conversation so far as updates (session/load), before answering."""
        conversation = self.session.conversation
        for item in conversation.items:
            for update in replay(item, self.workspace):
                self.outbox.put(update)
        if conversation.plan is not None:
            self.outbox.put(plan_update(conversation.plan))
        await self.outbox.flushed()

    def cancel(self) -> None:
        """session/cancel: the running prompt stops, the waiting ones end unrun."""
        self._cancels += 1
        self.session.stop()

    async def aclose(self) -> None:
        for task in [*self._asking, *self._telling]:
            task.cancel()
        try:
            await self._close()
        finally:
            self._unsubscribe()
            await self.outbox.aclose()

    async def _send(self, update: Any) -> None:
        await self._client.session_update(session_id=self.id, update=update)

    # ------------------------------------------------------------ events

    def _on_event(self, event: Event) -> None:
        if type(event) is Delta:  # the hot path: once per token
            if event.text:
                own = event.item not in self._nested
                self.outbox.text("message" if own else "thought", event.text)
            if event.reasoning:
                self.outbox.text("thought", event.reasoning)
        elif type(event) is ItemAdded or type(event) is ItemUpdated:
            item = event.item
            if isinstance(item, ToolItem):
                self._tool(item)
            elif isinstance(item, AssistantItem) and is_nested(item):
                self._nested.add(item.id)
        elif type(event) is NoticeEvent:
            self.outbox.text("message", notice_text(event.text, event.level))
        elif type(event) is PlanUpdated:
            self.outbox.put(plan_update(event.plan))
        elif type(event) is ApprovalRequested:
            task = asyncio.ensure_future(self._ask(event.request))
            self._asking.add(task)
            task.add_done_callback(self._asking.discard)
        elif type(event) is ElicitationRequested:  # ACP has no forms (yet): say so
            event.request.decline_unasked(NO_FORMS)
        elif type(event) is RunFinished:
            for task in list(self._asking):  # a stop ends waiting approvals denied
                task.cancel()
            self._views.clear()
            self._nested.clear()

    def _tool(self, item: ToolItem) -> None:
        view = tool_view(item, self.workspace)
        before = self._views.get(item.id)
        self._views[item.id] = view
        if before is None:
            self.outbox.put(tool_start(item, view, self.workspace.root))
            return
        update = tool_progress(item, before, view, self.workspace.root)
        if update is not None:
            self.outbox.put(update)

    async def _ask(self, request: ApprovalRequest) -> None:
        """Ask the client; its answer resolves our request ("cancelled" is a no)."""
        item = request.item
        view = tool_view(item, self.workspace)
        call = permission_call(
            item, view, self.workspace.root, request.command, request.cwd, request.outside
        )
        await self.outbox.flushed()  # the tool call is on the client's screen first
        try:
            response = await self._client.request_permission(
                session_id=self.id, tool_call=call, options=_options(request.suggested_rule)
            )
        except (RequestError, ConnectionError) as e:
            log.warning("session/request_permission failed: %s", e)
            request.resolve(Decision("no", NOT_ASKED))
            return
        request.resolve(_decision(response.outcome, request.suggested_rule))


class Outbox:
    """One session's updates, sent in order by one task.

    Text chunks of the same kind that pile up while a send is in flight are
    joined into one, so a fast model costs fewer messages than tokens.
    """

    def __init__(self, send: Callable[[Any], Awaitable[None]]) -> None:
        self._send = send
        self._queue: deque[Any] = deque()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task = asyncio.ensure_future(self._pump())

    def put(self, update: Any) -> None:
        self._queue.append(update)
        self._kick()

    def text(self, kind: str, text: str) -> None:
        queue = self._queue
        if queue and type(queue[-1]) is _Text and queue[-1].kind == kind:
            queue[-1].parts.append(text)
        else:
            queue.append(_Text(kind, [text]))
        self._kick()

    async def flushed(self) -> None:
        await self._idle.wait()

    async def aclose(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._idle.set()

    def _kick(self) -> None:
        self._idle.clear()
        self._wake.set()

    async def _pump(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                entry = self._queue.popleft()
                try:
                    await self._send(entry.update() if type(entry) is _Text else entry)
                except (ConnectionError, RequestError) as e:
                    log.debug("an update was not sent: %s", e)  # the client is gone
                except Exception:
                    log.exception("an update could not be sent")
            self._idle.set()


@dataclass
class _Text:
    kind: str  # "message" or "thought"
    parts: list[str]

    def update(self) -> Any:
        text = "".join(self.parts)
        return message_chunk(text) if self.kind == "message" else thought_chunk(text)


class ClientFiles:
    """File text through the client's fs/read_text_file and fs/write_text_file."""

    def __init__(self, client: Any, root: Path) -> None:
        self._client = client
        self._root = root
        self.session_id = ""  # known once the session is opened

    async def read_text(self, path: Path) -> str:
        self._inside(path)
        try:
            response = await self._client.read_text_file(session_id=self.session_id, path=str(path))
        except (RequestError, ConnectionError) as e:
            raise ToolError(f"The editor could not read {path} ({e}).") from e
        return response.content

    async def write_text(self, path: Path, text: str) -> None:
        self._inside(path)
        try:
            await self._client.write_text_file(
                session_id=self.session_id, path=str(path), content=text
            )
        except (RequestError, ConnectionError) as e:
            raise ToolError(f"The editor could not write {path} ({e}).") from e

    def _inside(self, path: Path) -> None:
        """The tools confine paths first; this makes sure nothing else slips through."""
        if not path.is_relative_to(self._root):
            raise ToolError(f"{path} is outside the workspace {self._root}; it is left alone.")


# ------------------------------------------------------------------ requests


def prompt_of(blocks: list[Any], root: Path) -> Prompt:
    """A prompt's blocks as our user message: text and links inline, embedded files after,
    images as images."""
    inline: list[str] = []
    context: list[str] = []
    images: list[Image] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "image":
            images.append(_image(block))
        elif kind == "text":
            inline.append(block.text)
        elif kind == "resource_link":
            inline.append(_mention(block.uri, block.name, root))
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is None:
                context.append(f"(The attached {resource.uri} is binary and was left out.)")
            else:
                context.append(f'<context ref="{resource.uri}">\n{text}\n</context>')
        else:
            raise UsageError(
                f"This agent reads text and images, not {kind} — send the prompt as text."
            )
    text = "\n\n".join(part for part in ("".join(inline).strip(), *context) if part)
    if not text and not images:
        raise UsageError("The prompt is empty — send some text.")
    return Prompt(text, tuple(images))


def _image(block: Any) -> Image:
    """An image block's picture; its declared type is checked against the bytes."""
    try:
        data = base64.b64decode(block.data, validate=True)
    except (binascii.Error, ValueError, TypeError):
        raise UsageError("An image block's data is not base64 — send the image again.") from None
    name = Path(unquote(urlparse(block.uri).path)).name if getattr(block, "uri", None) else ""
    return image_from_bytes(data, name or "image")


def _mention(uri: str, name: str, root: Path) -> str:
    """A linked file in the workspace as `@path` (what the model reads with read_file)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return f"[{name}]({uri})"
    path = Path(unquote(parsed.path))
    if path.is_relative_to(root):
        return "@" + path.relative_to(root).as_posix()
    return str(path)


def _workspace(cwd: str) -> Path:
    folder = Path(cwd)
    if not folder.is_absolute():
        raise UsageError(f"cwd {cwd!r} is not an absolute path — send the folder's absolute path.")
    try:
        real = folder.resolve(strict=True)
    except OSError as e:
        raise UsageError(f"The folder {cwd} does not exist — send an existing folder.") from e
    if not real.is_dir():
        raise UsageError(f"{cwd} is not a folder — send the project folder as cwd.")
    return real


def _modes(current: str) -> SessionModeState:
    available = [SessionMode(id=mode, name=name, description=text) for mode, name, text in MODES]
    return SessionModeState(current_mode_id=current, available_modes=available)


def _options(rule: str) -> list[PermissionOption]:
    options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow", kind="allow_once")]
    if rule:  # "always" needs a rule to remember
        rules = " + ".join(split_rules(rule))  # a compound line: one rule per simple command
        name = f"Always allow {rules} in this conversation"
        options.append(PermissionOption(option_id=ALLOW_ALWAYS, name=name, kind="allow_always"))
    options.append(PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"))
    return options


def _decision(outcome: Any, rule: str) -> Decision:
    if isinstance(outcome, AllowedOutcome):
        if outcome.option_id == ALLOW_ONCE:
            return Decision("yes")
        if outcome.option_id == ALLOW_ALWAYS and rule:
            return Decision("always", rule=rule)
    return Decision("no")


# ------------------------------------------------------------------ stdio


async def serve(open_session: OpenSession, version: str) -> int:
    """Serve ACP on stdin/stdout until the client closes stdin (or SIGTERM); 0 when done."""
    reader, writer = await protocol_streams()
    server = AcpServer(open_session, version)
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    if main is not None:
        loop.add_signal_handler(signal.SIGTERM, main.cancel)
    try:
        # The SDK calls only the methods an agent has: AcpServer serves a subset of `Agent`.
        await run_agent(server, writer, reader)  # type: ignore[arg-type]
    except asyncio.CancelledError:
        log.info("stopped by a signal")
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        await server.aclose()
    return 0
