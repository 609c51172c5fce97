"""Session: the one object front ends talk to.

It owns one conversation (its items, mode, the approval queue, persistence)
and does runs through a backend it gets from a factory, so the engine never
imports a backend. Front ends call `send`, `stop`, `set_mode` and resolve
approval requests; they learn everything else from events.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from agent_cli import logs
from agent_cli.engine.approval import ApprovalRequest
from agent_cli.engine.backend import Backend, BackendFactory, Run, RunResult, StopReason
from agent_cli.engine.events import (
    EventBus,
    ItemAdded,
    NoticeEvent,
    PlanUpdated,
    RunFinished,
    RunStarted,
)
from agent_cli.engine.handoff import transcript
from agent_cli.engine.items import (
    AssistantItem,
    Conversation,
    Item,
    NoticeItem,
    NoticeLevel,
    Rewound,
    SummaryItem,
    ToolItem,
    UserItem,
)
from agent_cli.engine.pending import Pending, PendingMessage
from agent_cli.engine.store import Store, running_elsewhere
from agent_cli.errors import AgentError, StoreError, UsageError
from agent_cli.media import Prompt
from agent_cli.tools.plan import Plan

if TYPE_CHECKING:
    from agent_cli.engine.mentions import Attached
    from agent_cli.engine.resources import ResourceSource
    from agent_cli.tools.background import BackgroundShells

log = logging.getLogger(__name__)

STOPPED_RESULT = "The run was stopped before this call finished; it did not complete."
FAILED_RESULT = "The run ended with an error before this call finished; it did not complete."


class Session:
    def __init__(
        self,
        conversation: Conversation,
        backend_factory: BackendFactory,
        store: Store | None,
        shells: BackgroundShells | None = None,
        resources: ResourceSource | None = None,
    ) -> None:
        self.conversation = conversation
        # Where `@server:uri` mentions are read (the front end's MCP servers), if anywhere.
        self.resources = resources
        # The background commands the built-in agent started; they end with the session.
        self.shells = shells
        self.events = EventBus()
        self._backend_factory = backend_factory
        self._backend: Backend | None = None
        self._store = store
        self._task: asyncio.Task[RunResult] | None = None
        self._run: Run | None = None
        self._run_start = 0  # where the run's items begin: no earlier item is half-done
        self._save_failed = False
        # Messages typed while a run goes: steered into it, or queued after it.
        self.pending = Pending(self.events.publish)

    # ------------------------------------------------------------ queries

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def mode(self) -> str:
        return self.conversation.mode

    @property
    def backend(self) -> Backend | None:
        """The backend of the last run (None before the first): for what only it knows."""
        return self._backend

    @property
    def pending_approvals(self) -> list[ApprovalRequest]:
        return list(self._run.pending) if self._run else []

    @property
    def agent_commands(self) -> Sequence[tuple[str, str]]:
        """The working agent's own slash commands, known once its backend has started."""
        return self._backend.commands if self._backend is not None else ()

    # ----------------------------------------------------------- commands

    def set_mode(self, mode: str) -> None:
        """Takes effect at the next call, even while a run waits."""
        self.conversation.mode = mode

    async def switch_agent(self, agent: str) -> None:
        """Hand the conversation to another agent ("builtin" or an ACP agent's id).

        The old backend is closed; the new one starts with the next message and
        gets a transcript of the work so far: an external agent in its first
        prompt (see `handoff`), the built-in loop as a summary it reads instead
        of the items before it.
        """
        if self.running:
            raise UsageError("Wait for the run to finish (or stop it) before switching agents.")
        conversation = self.conversation
        if agent == conversation.agent:
            return
        previous = conversation.agent
        await self.reset_backend()
        conversation.agent, conversation.agent_session = agent, ""
        if not conversation.items:
            return  # chosen before the first message: nothing to hand over
        worked = any(isinstance(item, UserItem) for item in conversation.items)
        text = f"Handed over from {previous} to {agent}."
        if worked:
            text += " It gets a transcript of the work so far with the next message."
        self._add(NoticeItem(text))
        self.events.publish(NoticeEvent(text, "info"))
        if agent == "builtin" and worked:
            carried = transcript(conversation.items)
            self._add(SummaryItem(carried, replaced=len(conversation.items)))
        self.save()

    async def switch_model(self, label: str) -> None:
        """Record the built-in agent's new model route (wiring has switched the provider);
        the next message builds its backend with it."""
        await self.reset_backend()
        self.conversation.model = label
        self.save()

    def notice(self, text: str, level: NoticeLevel = "info", *, for_model: bool = False) -> None:
        """Add a notice between runs (a scheduled run's refusals, say): kept and published;
        `for_model`: the built-in agent's model reads it with the next message too."""
        if self._run is not None:
            raise UsageError("A notice during a run is the run's own: use Run.notice.")
        self._add(NoticeItem(text, level, for_model=for_model))
        self.events.publish(NoticeEvent(text, level))
        self.save()

    def set_plan(self, plan: Plan) -> None:
        """Replace the plan between runs (the person edited it): kept and published."""
        if self._run is not None:
            raise UsageError("A plan during a run is the run's own: use Run.set_plan.")
        self.conversation.plan = plan
        self.events.publish(PlanUpdated(plan))
        self.save()

    async def reset_backend(self) -> None:
        """Close the backend; the next run builds a new one (after a model switch)."""
        if self.running:
            raise UsageError("Wait for the run to finish (or stop it) first.")
        if self._backend is not None:
            backend, self._backend = self._backend, None
            await backend.aclose()

    def rewind_points(self) -> list[UserItem]:
        """The earlier messages a rewind can go back to, oldest first: the person's own
        (not a sub-agent's prompt), after which the conversation can be cut cleanly.

        Raises UsageError when no rewind can be done now (a run goes on, or an external
        agent works the conversation).
        """
        conversation = self.conversation
        if self.running:
            raise UsageError("A run is going on — stop it first (Ctrl+C), then rewind.")
        if conversation.agent != "builtin":
            raise UsageError(
                f"This conversation is worked by {conversation.agent}, whose session is its "
                "own: it cannot be rewound. Hand it back with `/agent builtin`, or start "
                "again with `/new`."
            )
        items = self.conversation.items
        points: list[UserItem] = []
        open_tasks: set[str] = set()  # ids of the `task` items whose sub-agents go on later
        last_seen = {item.parent: index for index, item in enumerate(items) if item.parent}
        for index, item in enumerate(items):
            open_tasks = {task for task in open_tasks if last_seen[task] >= index}
            if isinstance(item, UserItem) and not item.parent and not open_tasks:
                points.append(item)
            if item.id in last_seen:
                open_tasks.add(item.id)
        return points

    def rewind(self, item_id: str) -> Rewound:
        """Take the user message `item_id` and everything after it out of the conversation.

        What is taken out is kept in its history (`conversation.rewound`, stored and
        searchable), never sent again. The files are not touched (the front end offers
        that, through the checkpoints); the message's text is the caller's to put back.
        """
        conversation = self.conversation
        points = self.rewind_points()
        chosen = next((point for point in points if point.id == item_id), None)
        if chosen is None:
            raise UsageError(
                f"There is no message {item_id!r} to rewind to — `/rewind` lists them."
            )
        at = next(index for index, item in enumerate(conversation.items) if item is chosen)
        rewound = Rewound(at, conversation.items[at:])
        conversation.rewound.append(rewound)
        del conversation.items[at:]
        self.save()
        return rewound

    def fork(self) -> Conversation:
        """Save a copy of the conversation under a new id (`/fork`); the copy, to go on in.

        This one stays as it is; the copy is independent of it (see `Store.fork`).
        """
        if self.running:
            raise UsageError("A run is going on — stop it first (Ctrl+C), then fork.")
        if self._store is None:
            raise UsageError(
                "Conversations are not being saved in this session (--no-save), so there "
                "is nothing to fork — start the agent without --no-save."
            )
        self.save()
        return self._store.fork(self.conversation)

    def _add(self, item: Item) -> None:
        self.conversation.items.append(item)
        self.events.publish(ItemAdded(item))

    async def send(self, message: str | Prompt) -> RunResult:
        """Append a user message and run the conversation until it stops; then what was
        steered or queued meanwhile, a run each (see `pending`). The last run's result.

        `@path` in its text attaches what it names (engine/mentions.py); a Prompt may
        bring images and attachments of its own (`--image`, a pasted screenshot)."""
        return await self._then_pending(await self._send([message]))

    def steer(self, text: str | Prompt) -> PendingMessage:
        """While a run goes: the message joins it at its next round boundary (or starts
        the next run, when this one ends first)."""
        if not self.running:
            raise UsageError("Nothing is running to steer: send the message instead.")
        return self.pending.add(text, "steer")

    def queue(self, text: str | Prompt) -> PendingMessage:
        """While a run goes: the message is sent as a new one when the run ends."""
        if not self.running:
            raise UsageError("Nothing is running to queue after: send the message instead.")
        return self.pending.add(text, "queue")

    async def _send(self, messages: Sequence[str | Prompt]) -> RunResult:
        run = self._begin()
        turn = logs.new_turn_id()  # the turn's correlation id: its items and log lines

        async def add_messages() -> None:
            """Within the run, so a stop ends a slow read of what they mention (a server
            to start, a login): then they are kept as written, and the run ends there."""
            from agent_cli.engine.mentions import Attached

            attached: list[Attached] = []
            try:
                for message in messages:
                    attached.append(await self._attach(message))
            finally:
                for message in messages[len(attached) :]:
                    prompt = message if isinstance(message, Prompt) else Prompt(message)
                    attached.append(Attached(prompt, []))
                self.conversation.set_title_from(attached[0].prompt.text)
                for prompt, problems in attached:
                    run.add(UserItem(prompt.text, prompt.images, prompt.attachments, turn=turn))
                    for problem in problems:
                        run.notice(problem, "warn")
                self.save()  # the message is stored before anything else can go wrong

        return await self._go(run, lambda backend: backend.run(run), turn, add_messages)

    async def _attach(self, message: str | Prompt) -> Attached:
        """The message with what its `@path` mentions name, read in a thread, and the MCP
        resources its `@server:uri` mentions name (engine/resources.py)."""
        from agent_cli.engine.mentions import Attached, attach_mentions  # when one is sent
        from agent_cli.tools.workspace import Workspace

        prompt = message if isinstance(message, Prompt) else Prompt(message)
        if prompt.mentions is not None:  # only these words name what to attach
            attached = await self._attach(replace(prompt, text=prompt.mentions, mentions=None))
            return attached._replace(prompt=replace(attached.prompt, text=prompt.text))
        if "@" not in prompt.text:
            return Attached(prompt, [])
        problems: list[str] = []
        taken: set[str] = set()
        unknown: dict[str, str] = {}
        from agent_cli.engine.resources import attach_resources, not_files

        if self.resources is not None:
            prompt, problems, taken, unknown = await attach_resources(prompt, self.resources)
        try:
            workspace = Workspace(self.conversation.workspace)
        except OSError:  # the folder is gone: nothing to attach from
            return Attached(prompt, [*problems, *unknown.values()])
        attached = await asyncio.to_thread(attach_mentions, prompt, workspace, taken)
        missed = not_files(unknown, attached.prompt)
        return Attached(attached.prompt, [*problems, *attached.problems, *missed])

    async def _then_pending(self, result: RunResult) -> RunResult:
        while True:
            if result.reason in (StopReason.STOPPED, StopReason.ERROR):
                self.pending.give_back()
                return result
            texts = self.pending.take_next()
            if not texts:
                return result
            result = await self._send(texts)

    async def compact(self, focus: str = "") -> RunResult:
        """Summarise the older items with the model (`/compact`); they stay stored."""
        run = self._begin()
        return await self._then_pending(
            await self._go(run, lambda backend: backend.compact(run, focus))
        )

    def _begin(self) -> Run:
        if self.running:
            raise UsageError("A run is already going on in this conversation — wait or stop it.")
        conversation = self.conversation
        if (pid := running_elsewhere(conversation)) is not None:
            raise UsageError(
                f"Conversation {conversation.id} is being run by another agent (process {pid}) "
                "— wait for it to finish or stop it, then try again."
            )
        run = Run(conversation, self.events.publish, lambda: conversation.mode, self.save)
        run.take_steered = self.pending.take_steered
        run.attach = self._attach
        self._run, self._run_start = run, len(conversation.items)
        conversation.mark_running()
        # First, before the run's first item (the user's message): a subscriber may
        # start a fresh view of the run on it.
        self.events.publish(RunStarted(conversation.id))
        return run

    async def _go(
        self,
        run: Run,
        work: Callable[[Backend], Awaitable[RunResult]],
        turn: str = "",
        first: Callable[[], Awaitable[None]] | None = None,
    ) -> RunResult:
        """Run `work` (after `first`, in the same task: a stop ends either)."""
        self.save()
        turn = turn or logs.new_turn_id()
        self._task = asyncio.ensure_future(logs.in_turn(turn, self._do_run(run, work, first)))
        try:
            result = await asyncio.shield(self._task)
        except asyncio.CancelledError:
            # Our caller was cancelled (e.g. the whole program is closing): stop the run too.
            self.stop()
            result = await self._task
        return result

    def stop(self) -> None:
        """Stop the run: approvals end denied, commands are killed, the stream is closed."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def aclose(self) -> None:
        self.stop()
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await self._task
        if self._backend is not None:
            await self._backend.aclose()
            self._backend = None
        if self.shells is not None:
            await self.shells.aclose()

    def save(self, *, whole: bool = False) -> None:
        """Persist the conversation; a failure becomes one notice and never loses the run.

        During a run only the items the run changed are encoded again; `whole`
        (at a run's end) adds every item the run added, whatever changed it. Between
        runs every item is looked at.
        """
        if self._store is None:
            return
        run = self._run
        changed = None
        if run is not None:
            added = self.conversation.items[self._run_start :] if whole else ()
            changed = run.changed | {item.id for item in added}
        self.conversation.updated = time.time()  # what "the last conversation" goes by
        try:
            self._store.save(self.conversation, changed)
            if run is not None:
                run.changed = set()
        except StoreError as e:
            if not self._save_failed:
                self._save_failed = True
                self.events.publish(NoticeEvent(str(e), "error"))
        else:
            self._save_failed = False

    # ----------------------------------------------------------- internals

    async def _do_run(
        self,
        run: Run,
        work: Callable[[Backend], Awaitable[RunResult]],
        first: Callable[[], Awaitable[None]] | None = None,
    ) -> RunResult:
        try:
            if first is not None:
                await first()
            if self._backend is None:
                made = self._backend_factory(self.conversation)
                self._backend = await made if inspect.isawaitable(made) else made
            result = await work(self._backend)
        except asyncio.CancelledError:
            result = RunResult(StopReason.STOPPED)
        except AgentError as e:
            run.notice(str(e), "error")
            result = RunResult(StopReason.ERROR, str(e))
        except Exception as e:
            log.exception("the run failed")
            message = f"The run failed unexpectedly: {e!r} — run again with --debug for details."
            run.notice(message, "error")
            result = RunResult(StopReason.ERROR, message)
        result = result._replace(rounds=run.rounds, usage=run.usage)
        self._finish_items(run, result)
        run.flush()  # the run's last deltas come before it is said to have finished
        self.conversation.mark_idle()
        self.save(whole=True)
        self._run = None
        self.events.publish(RunFinished(result.reason.value, result.error))
        return result

    def _finish_items(self, run: Run, result: RunResult) -> None:
        """After a stop or an error, leave no item half-done: every call gets an outcome."""
        for item in self.conversation.items[self._run_start :]:
            if isinstance(item, AssistantItem) and item.streaming:
                item.streaming = False
                run.update(item)
            elif isinstance(item, ToolItem) and item.state in ("composing", "running", "waiting"):
                item.state = "denied" if item.state == "waiting" else "error"
                item.is_error = True
                stopped = result.reason is StopReason.STOPPED
                item.result = item.result or (STOPPED_RESULT if stopped else FAILED_RESULT)
                run.update(item)
        if result.reason is StopReason.STOPPED:
            run.notice("Stopped.")
