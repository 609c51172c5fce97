"""Another coding agent (OpenCode, Codex, Claude Code, Gemini CLI, pi, ...) as a backend.

The agent is a program spoken to over ACP on its stdio, with the official SDK:
one process per `ExternalAgent`, started with the first run, in its own
process group, in the workspace, kept between runs and ended (its whole group)
by `aclose`. Its stderr goes to the debug log, never the screen. What it does
reaches the Session as our items and events (`acp_mapping`); what it asks of
us, permissions and files, is answered by `acp_client`.

A run sends the last user message as one `session/prompt`. The ACP session is
kept with the conversation (`agent_session`) and resumed with `session/load`
where the agent supports it; a fresh session on a conversation that already
has items gets a transcript of them first (a hand-off, or a resume the agent
cannot do). A stop sends `session/cancel` and gives the agent `cancel_grace`
seconds to end its turn before the process group is killed; the next run
starts a new process. The SDK is imported only when the agent first starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli import __version__
from agent_cli.backends.acp_mapping import Turn
from agent_cli.backends.catalog import AgentSpec
from agent_cli.backends.file_changes import Snapshot, changes_listed, snapshot
from agent_cli.engine.approval import DENY
from agent_cli.engine.backend import Run, RunResult, StopReason
from agent_cli.engine.handoff import transcript
from agent_cli.engine.items import NoticeLevel, UserItem
from agent_cli.errors import AgentError, UsageError
from agent_cli.providers.base import Usage
from agent_cli.tools.workspace import Workspace

if TYPE_CHECKING:
    from acp import RequestError
    from acp.client.connection import ClientSideConnection

    from agent_cli.backends.acp_client import AgentClient
    from agent_cli.backends.loop import Checkpoint
    from agent_cli.media import Image

log = logging.getLogger(__name__)

CANCEL_GRACE = 10.0
"""Seconds an agent has to end its turn after `session/cancel` before it is killed."""
EXIT_GRACE = 1.0  # at the end of a session: time to exit (and save its session) after EOF
CRASH_WAIT = 2.0  # time to collect a dead agent's exit status and last words
STDERR_TAIL = 20  # lines of stderr kept for the message when it stops unexpectedly
STDIO_LIMIT = 50 * 1024 * 1024  # one JSON-RPC line (a whole file's text) must fit
AUTH_REQUIRED = -32000


class ExternalAgent:
    """The Backend that hands each message of a conversation to an ACP agent."""

    def __init__(
        self,
        spec: AgentSpec,
        workspace: Path,
        *,
        checkpoint: Checkpoint | None = None,
        cancel_grace: float = CANCEL_GRACE,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.spec = spec
        self.workspace = Path(workspace)
        self.cancel_grace = cancel_grace
        self.commands: list[tuple[str, str]] = []  # the agent's own (name, description)
        self._checkpoint = checkpoint
        self._environ = environ
        self._process: asyncio.subprocess.Process | None = None
        self._conn: ClientSideConnection | None = None
        self._client: AgentClient | None = None
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL)
        self._stderr_task: asyncio.Task[None] | None = None
        self._can_load = False
        self._takes_images = False  # its promptCapabilities.image, once it has started
        self._warned = False

    @property
    def pid(self) -> int | None:
        """The agent process's id (and its process group's) while it runs."""
        process = self._process
        return process.pid if process is not None and process.returncode is None else None

    async def start(self) -> None:
        """Start the agent ahead of the first message (it may take seconds to start)."""
        await self._started()

    # ------------------------------------------------------------ a run

    async def run(self, run: Run) -> RunResult:
        items = run.conversation.items
        last = items[-1] if items and isinstance(items[-1], UserItem) else None
        message = last.text if last is not None else ""
        earlier = items[:-1]  # taken now: starting may add notices after the message
        client = await self._started()
        text, images = self._message(run, last)
        if await self._opened(run, client):
            carried = transcript(earlier)
            if carried:
                text = f"{carried}\n\n{text}"
        run.rounds += 1
        turn = Turn(run, client.workspace)
        if self.spec.gated:
            # Its own settings may still let it edit without asking: look, to say so.
            watched = run.mode != "full"
            before = await asyncio.to_thread(snapshot, self.workspace) if watched else None
        else:
            before = await self._before_ungated(run, turn, client, message)
        client.turn = turn
        try:
            response = await self._prompt(turn, text, images)
        finally:
            client.turn = None
            turn.sync()  # a stop or a crash keeps the text that arrived
            if before is not None:
                await self._after(run, turn, before)
        return self._result(run, turn, response)

    async def compact(self, run: Run, focus: str) -> RunResult:
        run.notice(
            f"/compact is not available for {self.spec.name}: it keeps its own context. "
            "Start a new conversation to begin afresh."
        )
        return RunResult(StopReason.ANSWERED)

    async def aclose(self) -> None:
        """End the agent: its stdin closed (a chance to save its session), then its group."""
        process = self._process
        if process is None:
            return
        if process.returncode is None and process.stdin is not None:
            process.stdin.close()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.wait(), EXIT_GRACE)
        await self._drop()

    def _result(self, run: Run, turn: Turn, response: Any) -> RunResult:
        name = self.spec.name
        if response.stop_reason == "cancelled":  # it gave up on its own
            return RunResult(StopReason.STOPPED)
        turn.finish()
        usage = response.usage
        if usage is not None:
            run.add_usage(
                Usage(usage.input_tokens, usage.output_tokens, usage.cached_read_tokens or 0)
            )
        if response.stop_reason == "max_tokens":
            run.notice(
                f"{name} stopped: its answer reached the model's output limit. "
                "Send another message to let it go on.",
                "warn",
            )
        elif response.stop_reason == "max_turn_requests":
            run.notice(
                f"{name} stopped at its own limit of model requests for one message. "
                "Send another message to let it go on.",
                "warn",
            )
            return RunResult(StopReason.ROUND_LIMIT)
        elif response.stop_reason == "refusal":
            run.notice(f"{name} refused to go on with this request.", "warn")
        return RunResult(StopReason.ANSWERED)

    # ------------------------------------------------------ the process

    async def _started(self) -> AgentClient:
        """The running agent's client side; the agent is started (and initialized) if need be."""
        if self._client is not None and self._process is not None:
            if self._process.returncode is None:
                return self._client
            await self._drop()  # it ended while idle: start it anew
        process = await self._spawn()
        try:
            # The SDK's import (its models: ~1 s on a slow machine) overlaps the agent's start,
            # in a thread, so the screen does not freeze meanwhile.
            await asyncio.to_thread(_import_sdk)
            return await self._initialize(process)
        except BaseException:
            if self._process is process:
                await self._drop()
            raise

    async def _spawn(self) -> asyncio.subprocess.Process:
        spec = self.spec
        env = {**(self._environ if self._environ is not None else os.environ), **spec.env}
        missing = spec.missing(path=env.get("PATH"))
        if missing:
            raise UsageError(spec.missing_message(missing))
        try:
            process = await asyncio.create_subprocess_exec(
                spec.command,
                *spec.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.workspace,
                env=env,
                start_new_session=True,  # a stop kills the agent and whatever it started
                limit=STDIO_LIMIT,
            )
        except OSError as e:
            raise UsageError(
                f"{spec.name} could not be started ({spec.command}: {e.strerror or e}) — "
                f"check the command, or install it: {spec.install or 'see its documentation'}."
            ) from e
        self._process = process
        self._stderr.clear()
        self._stderr_task = asyncio.ensure_future(self._read_stderr(process))
        return process

    async def _initialize(self, process: asyncio.subprocess.Process) -> AgentClient:
        from acp import PROTOCOL_VERSION, RequestError, connect_to_agent
        from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

        from agent_cli.backends.acp_client import AgentClient

        assert process.stdin is not None and process.stdout is not None
        client = AgentClient(Workspace(self.workspace), self.commands, self._checkpoint)
        self._client = client
        # The SDK calls only the methods a client has: AgentClient serves a subset of `Client`.
        self._conn = connect_to_agent(client, process.stdin, process.stdout)  # type: ignore[arg-type]
        capabilities = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
            terminal=False,  # its commands run in its own process, after a permission
        )
        try:
            response = await self._conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=capabilities,
                client_info=Implementation(name="agent", title="agent", version=__version__),
            )
        except RequestError as e:
            raise AgentError(f"{self.spec.name} refused to start: {_error_text(e)}.") from e
        except ConnectionError as e:
            raise await self._stopped(" while starting") from e
        agent = response.agent_capabilities
        self._can_load = bool(agent is not None and agent.load_session)
        prompts = agent.prompt_capabilities if agent is not None else None
        self._takes_images = bool(prompts is not None and prompts.image)
        return client

    async def _opened(self, run: Run, client: AgentClient) -> bool:
        """Make sure a session is open; True when it is a new one, knowing nothing yet."""
        if client.session_id:
            return False
        from acp import RequestError

        assert self._conn is not None
        conversation = run.conversation
        stored, cwd, name = conversation.agent_session, str(self.workspace), self.spec.name
        try:
            if stored and self._can_load:
                try:
                    # Its replayed history is not added again: no turn takes updates yet.
                    await self._conn.load_session(cwd=cwd, session_id=stored, mcp_servers=[])
                except RequestError as e:
                    run.notice(
                        f"{name} could not resume its earlier session ({_error_text(e)}); a new "
                        "session starts, with a transcript of this conversation.",
                        "warn",
                    )
                else:
                    client.session_id = stored
                    return False
            elif stored:
                run.notice(
                    f"{name} cannot resume its earlier session (it does not support "
                    "session/load); a new session starts, with a transcript of this conversation.",
                    "warn",
                )
            response = await self._conn.new_session(cwd=cwd, mcp_servers=[])
        except RequestError as e:
            raise AgentError(self._session_refused(e)) from e
        except ConnectionError as e:
            raise await self._stopped() from e
        except BaseException:
            await self._drop()  # stopped mid-way: its state is unknown
            raise
        client.session_id = conversation.agent_session = response.session_id
        run.save()
        return True

    def _session_refused(self, error: RequestError) -> str:
        name = self.spec.name
        if error.code == AUTH_REQUIRED:
            return (
                f"{name} needs you to log in first ({_error_text(error)}) — run "
                f"{self.spec.command} once in a terminal to log in, then send the message again."
            )
        return f"{name} could not open a session: {_error_text(error)}."

    def _message(self, run: Run, item: UserItem | None) -> tuple[str, tuple[Image, ...]]:
        """The person's message for the agent: its text with what they attached, and its
        images when the agent takes them (else a line for each, said once)."""
        if item is None:
            return "", ()
        parts = [item.text, *(a.for_model() for a in item.attachments)]
        images = tuple(image for image in item.images if image.data)
        if images and not self._takes_images:
            run.notice(f"{self.spec.name} does not take images; they were not sent.", "warn")
            parts += [f"{i.label}: not shown — this agent does not take images." for i in images]
            images = ()
        return "\n\n".join(part for part in parts if part), images

    async def _prompt(self, turn: Turn, text: str, images: tuple[Image, ...] = ()) -> Any:
        from acp import RequestError, image_block, text_block

        assert self._conn is not None and self._client is not None
        blocks: list[Any] = [text_block(text)]
        blocks += (image_block(image.base64(), image.media_type) for image in images)
        prompt = self._conn.prompt(session_id=self._client.session_id, prompt=blocks)
        # Its own task: a stop must not cancel the request, the agent answers it after a cancel.
        task = asyncio.ensure_future(prompt)
        task.add_done_callback(_retrieve)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            await self._cancel(turn, task)
            raise
        except RequestError as e:
            raise AgentError(f"{self.spec.name} failed: {_error_text(e)}.") from e
        except ConnectionError as e:
            raise await self._stopped() from e

    async def _cancel(self, turn: Turn, task: asyncio.Future[Any]) -> None:
        """Ask the agent to end its turn; kill it if it has not within the grace period."""
        turn.cancelled = True
        for request in list(turn.run.pending):
            request.resolve(DENY)  # the agent then hears "cancelled" for its permissions
        try:
            assert self._conn is not None and self._client is not None
            await self._conn.cancel(session_id=self._client.session_id)
            await asyncio.wait_for(asyncio.shield(task), self.cancel_grace)
        except (Exception, asyncio.CancelledError):
            log.debug("%s did not end its turn after a cancel; killing it", self.spec.id)
            await self._drop()

    async def _stopped(self, when: str = "") -> AgentError:
        """The agent ended unexpectedly: the error that says so, with its last words."""
        process = self._process
        code = None
        if process is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                code = await asyncio.wait_for(process.wait(), CRASH_WAIT)
        if code is None and process is not None and _still_talking(process):
            # Running, its output open, yet the connection broke: what it wrote was not ACP.
            await self._drop()
            return AgentError(
                f"{self.spec.name} wrote something that is not ACP on its output{when}, so it "
                "was ended — send a message to start it again; run with --debug for details."
            )
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), CRASH_WAIT)
        last = f": {self._stderr[-1]}" if self._stderr else ""
        await self._drop()
        return AgentError(
            f"{self.spec.name} stopped unexpectedly{when} ({_status(code)}){last} — send a "
            "message to start it again; run with --debug to log all it wrote."
        )

    async def _drop(self) -> None:
        """Kill the agent's process group and forget it: the next run starts a new one."""
        client, conn, process = self._client, self._conn, self._process
        self._client, self._conn, self._process = None, None, None
        if client is not None and client.turn is not None:
            client.turn.cancelled = True
            for request in list(client.turn.run.pending):
                request.resolve(DENY)
        if process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
        if process is not None:
            await process.wait()
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), CRASH_WAIT)
            self._stderr_task = None

    async def _read_stderr(self, process: asyncio.subprocess.Process) -> None:
        """The agent's stderr, line by line, to the debug log (and the last lines kept)."""
        assert process.stderr is not None
        try:
            while line := await process.stderr.readline():
                text = line.decode("utf-8", "replace").rstrip()
                if text:
                    self._stderr.append(text)
                    log.debug("%s: %s", self.spec.id, text)
        except (OSError, ValueError):  # a line past the limit, or the pipe broke
            log.debug("%s: its stderr could not be read further", self.spec.id, exc_info=True)

    # -------------------------------------------------- ungated agents

    async def _before_ungated(
        self, run: Run, turn: Turn, client: AgentClient, message: str
    ) -> Snapshot | None:
        """Warn once that its changes cannot be gated; checkpoint; note the files as they are."""
        mode = run.mode
        if mode != "full" and not self._warned:
            self._warned = True
            run.notice(
                f"{self.spec.name} changes files itself and never asks first, so in {mode} mode "
                "its changes cannot be gated. A checkpoint is recorded before each message "
                "(agent undo restores it), and what changed is listed after.",
                "warn",
            )
        label = f"{self.spec.name}: {' '.join(message.split())[:200]}"
        await client.checkpoint(turn, label)
        return await asyncio.to_thread(snapshot, self.workspace)

    async def _after(self, run: Run, turn: Turn, before: Snapshot) -> None:
        """Name what changed in the workspace other than through us."""
        after = await asyncio.to_thread(snapshot, self.workspace)
        listed = changes_listed(before, after, turn.written) if after is not None else ""
        if not listed:
            return
        if not self.spec.gated:
            level: NoticeLevel = "info" if run.mode == "full" else "warn"
            run.notice(f"{self.spec.name} changed {listed} (agent undo restores them).", level)
            return
        run.notice(
            f"{self.spec.name} changed {listed} itself, without asking, although the mode is "
            f"{run.mode}: its own permission settings allowed it. Set them to ask (see the "
            "README's Other agents), and check these files.",
            "warn",
        )


def _import_sdk() -> None:
    import agent_cli.backends.acp_client  # noqa: F401  (imports the SDK)


def _still_talking(process: asyncio.subprocess.Process) -> bool:
    return process.stdout is not None and not process.stdout.at_eof()


def _status(code: int | None) -> str:
    if code is None:
        return "it closed its connection"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit status {code}"


def _error_text(error: RequestError) -> str:
    """An agent's JSON-RPC error as words: its message and, if any, its details."""
    data = error.data
    details = data.get("details") or data.get("message") if isinstance(data, dict) else data
    text = str(error)
    return f"{text} ({details})" if details and str(details) != text else text


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Mark a prompt's failure as seen when no one awaits it any more (after a kill)."""
    if not task.cancelled():
        task.exception()
