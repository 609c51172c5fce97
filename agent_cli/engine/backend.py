"""The Backend protocol a run is done through, and the `Run` lent to it.

A backend (the built-in loop, or an external agent over ACP) does one run of a
conversation and reports only through the `Run`: it appends and grows items,
asks for approvals, and says why it stopped. A front end cannot tell which
backend is running.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from enum import StrEnum
from typing import NamedTuple, Protocol

from agent_cli.engine.approval import ApprovalRequest, Decision
from agent_cli.engine.elicitation import ElicitationRequest
from agent_cli.engine.events import (
    ApprovalRequested,
    ApprovalResolved,
    Delta,
    ElicitationRequested,
    ElicitationResolved,
    Event,
    ItemAdded,
    ItemUpdated,
    NoticeEvent,
    PlanUpdated,
    UsageEvent,
)
from agent_cli.engine.items import Conversation, Item, NoticeItem, NoticeLevel
from agent_cli.media import Prompt
from agent_cli.providers.base import Usage
from agent_cli.tools.mcp_forms import CANCEL, ElicitAnswer, Elicitation
from agent_cli.tools.plan import Plan

NO_USAGE = Usage()


class StopReason(StrEnum):
    """Why a run ended; `run_finished.reason` and `--output json`'s `stopped_reason`."""

    ANSWERED = "answered"
    ROUND_LIMIT = "round_limit"
    REPEATED_FAILURE = "repeated_failure"
    STOPPED = "stopped"
    ERROR = "error"


class RunResult(NamedTuple):
    reason: StopReason
    error: str = ""
    rounds: int = 0  # filled in by the Session
    usage: Usage = NO_USAGE


class Run:
    """What a backend may do during one run; every change becomes an event.

    Deltas are the exception to "at once": a token is a few characters and one
    network read brings hundreds, so the deltas of one item that arrive in one
    turn of the event loop are published as one, at the end of that turn (before
    any other event of the run, so the order holds). Nothing waits longer.
    """

    def __init__(
        self,
        conversation: Conversation,
        publish: Callable[[Event], None],
        mode: Callable[[], str],
        checkpoint: Callable[[], None],
    ) -> None:
        self.conversation = conversation
        self._emit = publish
        self._mode = mode
        self._checkpoint = checkpoint
        self.rounds = 0
        self.usage = Usage()
        self.pending: list[ApprovalRequest] = []
        self.changed: set[str] = set()  # ids of items added or updated since the last save
        self._batch: tuple[str, bool] | None = None  # (item id, reasoning?) of pending deltas
        # Messages the person steered in since the last request, in order (the Session's).
        self.take_steered: Callable[[], list[str | Prompt]] = list
        # What a steered message's `@` mentions attach (the Session's: files, MCP resources).
        self.attach: Callable[[Prompt], Awaitable[tuple[Prompt, list[str]]]] | None = None
        self._pieces: list[str] = []

    @property
    def mode(self) -> str:
        """Read on every call: the person may switch it while a run waits."""
        return self._mode()

    @property
    def mode_owner(self) -> str:
        """Whose mode `mode` is, for a refusal the model reads."""
        return "the conversation"

    def add(self, item: Item) -> None:
        self.conversation.items.append(item)
        self.changed.add(item.id)
        self._publish(ItemAdded(item))

    def insert(self, index: int, item: Item) -> None:
        """Put an item before others (a compaction summary stands where it starts)."""
        self.conversation.items.insert(index, item)
        self.changed.add(item.id)
        self._publish(ItemAdded(item))

    def update(self, item: Item, *, save: bool = False) -> None:
        self.changed.add(item.id)
        self._publish(ItemUpdated(item))
        if save:
            self._checkpoint()

    def delta(self, item: Item, text: str = "", reasoning: str = "") -> None:
        """`item` grew by `text` (or `reasoning`): the hot path, once per token."""
        if text and reasoning:  # both: the reasoning first, as a model thinks before it says
            self.delta(item, "", reasoning)
            reasoning = ""
        batch = (item.id, not text)
        if self._batch != batch:
            if self._batch is None:
                asyncio.get_running_loop().call_soon(self.flush)
            else:  # another item (or reasoning after text): the batch so far goes first
                self.flush()  # (the flush already scheduled publishes the new one)
            self._batch = batch
        self._pieces.append(text or reasoning)

    def flush(self) -> None:
        """Publish the pending deltas now (every other event does this first)."""
        if self._batch is None:
            return
        (item, reasoning), self._batch = self._batch, None
        joined = "".join(self._pieces)
        self._pieces = []
        self._emit(Delta(item, "", joined) if reasoning else Delta(item, joined))

    def _publish(self, event: Event) -> None:
        if self._batch is not None:
            self.flush()
        self._emit(event)

    def notice(self, text: str, level: NoticeLevel = "info") -> NoticeItem:
        """Add a notice; the item is returned, to be replaced by an outcome (a retry's)."""
        item = NoticeItem(text, level)
        self.add(item)
        self._publish(NoticeEvent(text, level))
        return item

    def renotice(self, item: NoticeItem, text: str, *, heard: bool = True) -> None:
        """Change a notice the run gave (a retry's, said again or with its outcome): the
        item is updated; `heard`: the text is published as a notice too, for the front
        ends that print notices as they come."""
        item.text = text
        self.update(item, save=not heard)
        if heard:
            self._publish(NoticeEvent(text, item.level))

    def set_plan(self, plan: Plan) -> None:
        """The agent's plan, whole: kept with the conversation and shown by every front end."""
        if plan == self.conversation.plan:
            return  # sent again unchanged (agents repeat it): nothing new to show
        self.conversation.plan = plan
        self._publish(PlanUpdated(plan))
        self._checkpoint()

    def add_usage(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        self.conversation.usage = self.conversation.usage + usage
        self._publish(UsageEvent(usage, self.conversation.usage))

    def save(self) -> None:
        """Persist the conversation now (at item boundaries, never per delta)."""
        self._checkpoint()

    async def elicit(self, form: Elicitation) -> ElicitAnswer:
        """Publish an MCP server's form and wait for a front end to answer it.

        A stop cancels the wait (and so the call); the front ends still hear it ended.
        """
        request = ElicitationRequest(form)
        self._publish(ElicitationRequested(request))
        answer = CANCEL
        try:
            answer = await request.wait()
        finally:
            self._publish(ElicitationResolved(request, answer.action))
        if request.unasked:
            self.notice(
                f"The MCP server {form.server!r} asked for information ({form.message.strip()}); "
                f"it was declined: {request.unasked}.",
                "warn",
            )
        return answer

    async def ask(self, request: ApprovalRequest) -> Decision:
        """Publish an approval request and wait for a front end to resolve it."""
        request.item.state = "waiting"
        self.pending.append(request)
        self.update(request.item)
        self._publish(ApprovalRequested(request))
        try:
            decision = await request.wait()
        finally:
            self.pending.remove(request)
        self._publish(ApprovalResolved(request.item.id, decision.answer, decision.reason))
        return decision


class Backend(Protocol):
    """Does runs of one conversation. `run` may be cancelled at any await (a stop).

    `commands` are the agent's own slash commands, (name, description), sent to it as
    a message: an external agent announces them; the built-in one has none.
    """

    @property
    def commands(self) -> Sequence[tuple[str, str]]: ...

    async def run(self, run: Run) -> RunResult: ...

    async def compact(self, run: Run, focus: str) -> RunResult: ...

    async def aclose(self) -> None: ...


# May be async: a backend may need a round trip first (the model list, an agent's start).
BackendFactory = Callable[[Conversation], Backend | Awaitable[Backend]]
