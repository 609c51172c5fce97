"""The built-in agent: rounds, dispatch, limits (SPEC §4).

run → round (ask the model, stream its answer into items) → dispatch the
calls under the policy → append the results → the next round, until an
answer calls no tool or a limit stops it. The loop knows the provider only
through the `Provider` protocol and tools only through the registry.

A sub-agent (the `task` tool, backends/subagents.py) is another BuiltinLoop
working inside its parent's run: its items join the same conversation with
`parent` set to the `task` item's id (`scope`), and each loop sends its model
only the items of its own scope. Hooks (backends/hooks.py) run around the
run and each call when configured.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from agent_cli.backends.context import (
    DEFAULT_CONTEXT_WINDOW,
    can_shorten,
    compaction_cut,
    fits,
    sent_items,
    to_messages,
)
from agent_cli.backends.instructions import FolderInstructions
from agent_cli.backends.model_view import ModelView
from agent_cli.backends.round_stream import RoundStream
from agent_cli.engine.approval import ApprovalKind, ApprovalRequest, Decision
from agent_cli.engine.backend import Run, RunResult, StopReason
from agent_cli.engine.items import Item, NoticeItem, SummaryItem, ToolItem, UserItem
from agent_cli.engine.mentions import attach_mentions
from agent_cli.errors import (
    AgentError,
    ContextFull,
    ContextTooLong,
    ProviderHTTPError,
    ToolError,
)
from agent_cli.media import Prompt
from agent_cli.policy.modes import Verdict, decide, offered, reads_only
from agent_cli.policy.rules import RuleSet, split_rules, suggest_rule
from agent_cli.providers.base import Message, Provider, Request, TextDelta
from agent_cli.providers.images import (
    REFUSED_NOTICE,
    has_images,
    images_refused,
    without_images,
)
from agent_cli.providers.local_hints import tools_unsupported, tools_unsupported_notice
from agent_cli.tools.base import (
    STORED_RESULT_CAP,
    ArgumentError,
    Effect,
    FileChange,
    Tool,
    ToolContext,
    ToolRegistry,
    ToolResult,
)
from agent_cli.tools.plan import PLAN_BOARD

if TYPE_CHECKING:
    from agent_cli.backends.hooks import Hooks
    from agent_cli.backends.subagents import Subagents

# Records the workspace before a change: (conversation id, label) → notices.
Checkpoint = Callable[[str, str], Awaitable[list[str]]]


class ToolSource(Protocol):
    """More tools (MCP servers'), loaded the first time a run may offer them."""

    async def tools(self) -> tuple[list[Tool], list[str]]:
        """The tools, and notices about what was left out."""
        ...

    @property
    def listed_anew(self) -> bool:
        """The tools changed since they were offered: load them again for the next message."""
        ...

    @property
    def offering(self) -> int:
        """Moves on with each new offer of the tools (made for this loop or another user of
        the same servers): one other than the loop loaded means load them again."""
        ...

    async def aclose(self) -> None: ...


DEFAULT_MAX_ROUNDS = 30
KEEP_TURNS = 2  # /compact keeps the last turns as they are
COMPACT_SYSTEM = "You summarise a coding agent's conversation so that the work can go on."
COMPACT_INSTRUCTION = (
    "Summarise the conversation so far for yourself, to continue the work from it alone: "
    "the person's requests and decisions, what was done (files changed, commands run, "
    "their outcomes), what was found, and what is still open. Keep file paths, names and "
    "exact errors. Write it as a compact Markdown list; do not call tools."
)


SAME_FAILURE_LIMIT = 3


class Call(NamedTuple):
    """One call being run, lent to its tool as `ToolContext.extra[CALL]` (the `task` tool
    starts its sub-agent inside the loop and run that called it)."""

    loop: BuiltinLoop
    run: Run
    item: ToolItem


CALL = "call"


class LoopSettings(NamedTuple):
    model: str
    workspace: Path
    max_rounds: int = DEFAULT_MAX_ROUNDS
    context_window: int = DEFAULT_CONTEXT_WINDOW
    # The share of the window past which older items are summarised before a round (the
    # `auto_compact` setting); None: never on its own, only by /compact.
    auto_compact: float | None = None
    # Whether the model takes images (settings and what the server says of the model);
    # False: each is a line saying it was not shown.
    images: bool = True


@dataclass(frozen=True)
class LoopParts:
    """What a loop uses when it is given it: the rules for "always", checkpoints for
    undo, MCP servers' tools, hooks, sub-agents, and a way to ask a local server the
    window it runs the model with. A test or a sub-agent leaves out what it does not use."""

    rules: RuleSet | None = None
    checkpoint: Checkpoint | None = None
    extra_tools: ToolSource | None = None
    hooks: Hooks | None = None
    subagents: Subagents | None = None
    served_window: Callable[[], Awaitable[int | None]] | None = None


class BuiltinLoop:
    """The Backend that runs the conversation with a model and the built-in tools."""

    commands: tuple[tuple[str, str], ...] = ()  # slash commands are the front end's

    def __init__(
        self,
        provider: Provider,
        tools: ToolRegistry,
        context: ToolContext,
        settings: LoopSettings,
        system_prompt: Callable[[str], str],
        parts: LoopParts = LoopParts(),
    ) -> None:
        rules, checkpoint, extra_tools = parts.rules, parts.checkpoint, parts.extra_tools
        hooks, subagents, served_window = parts.hooks, parts.subagents, parts.served_window
        self.provider = provider
        self.tools = tools
        self.context = context
        self.settings = settings
        self.system_prompt = system_prompt
        self.rules = rules
        self.checkpoint = checkpoint
        self._checkpoint_notices: set[str] = set()
        self._sandbox_notice = False
        self._extra_source = extra_tools
        self._extra_loaded = False
        self._offering = 0  # the source's `offering` the extra tools were loaded at
        self._own_tools = tools  # without the source's
        self._shortened_notice = False
        # Asks the server the context window it runs the model with (see _window).
        self.served_window = served_window
        self._no_tools = False  # the server refused tools: rounds go without them
        self._no_images = not settings.images  # or the server refused them once
        self.hooks = hooks
        self.subagents = subagents
        self.instructions = FolderInstructions(settings.workspace)
        # The id of the `task` item this loop works for ("" for the conversation's own loop);
        # its items carry it as `parent`, and its model reads only those.
        self.scope = ""

    async def aclose(self) -> None:
        """End the MCP servers; the provider is shared and closed by whoever made it."""
        if self.hooks is not None:
            await self.hooks.aclose()
        if self._extra_source is not None:
            await self._extra_source.aclose()
        if self.context.feedback is not None and not self.scope:  # its language servers
            await self.context.feedback.aclose()

    async def run(self, run: Run) -> RunResult:
        hooks = None if self.scope else self.hooks  # a sub-agent's run is part of its parent's
        if not self.scope and self.subagents is not None:
            self.subagents.start_tree()
        if hooks is None:
            return await self._rounds(run)
        await hooks.prepare(run)
        last = run.conversation.items[-1] if run.conversation.items else None
        if isinstance(last, UserItem):
            await hooks.user_prompt_submit(run, last.text)
        try:
            result = await self._rounds(run)
        except asyncio.CancelledError:
            await hooks.aclose()  # a stop: no stop hook, notification hooks are ended
            raise
        except AgentError as e:
            await hooks.drain()  # the stop hook is the run's last event
            await hooks.stop(run, StopReason.ERROR.value, str(e))
            raise
        await hooks.drain()
        await hooks.stop(run, result.reason.value)
        return result

    async def _take_steered(self, run: Run) -> bool:
        """Add what the person steered in since the last request (its `@path` and
        `@server:uri` mentions attached, as for a message sent); a sub-agent's rounds leave
        it to the conversation's own."""
        steered = [] if self.scope else run.take_steered()
        for message in steered:
            prompt = message if isinstance(message, Prompt) else Prompt(message)
            problems: list[str] = []
            text = prompt.text
            if "@" in text and run.attach is not None:
                prompt, problems = await run.attach(prompt)
            elif "@" in text and prompt.mentions is None:
                workspace = self.context.workspace
                prompt, problems = await asyncio.to_thread(attach_mentions, prompt, workspace)
            run.add(UserItem(text, prompt.images, prompt.attachments))
            for problem in problems:
                run.notice(problem, "warn")
        return bool(steered)

    async def _rounds(self, run: Run) -> RunResult:
        await self._load_extra_tools(run)
        system = self.system_prompt(run.mode)  # once per message: byte-identical rounds
        failures = _FailureTracker()
        for _ in range(self.settings.max_rounds):
            if self.subagents is not None and not self.subagents.take_round():
                self._warn(run, self.subagents.budget_notice())
                return RunResult(StopReason.ROUND_LIMIT)
            await self._take_steered(run)
            run.rounds += 1
            calls = await self._round(run, system)
            if not calls:
                if await self._take_steered(run):
                    continue  # steered in while it answered: the model reads it now
                return RunResult(StopReason.ANSWERED)
            await self._dispatch(run, calls)
            if failures.repeated(calls):
                self._warn(
                    run,
                    f"Stopped: the same call failed the same way {SAME_FAILURE_LIMIT} times in a "
                    "row. Say how to go on, or change the request.",
                )
                return RunResult(StopReason.REPEATED_FAILURE)
        self._warn(
            run,
            f"Stopped after {self.settings.max_rounds} rounds, the limit for one message. "
            "Send another message to let it go on.",
        )
        return RunResult(StopReason.ROUND_LIMIT)

    def _warn(self, run: Run, text: str) -> NoticeItem:
        """A warning notice, which the notification hooks hear of."""
        item = run.notice(text, "warn")
        if self.hooks is not None:
            self.hooks.notify(run, {"kind": "notice", "level": "warn", "text": text})
        return item

    _model_view: ModelView | None = None

    def _view(self, run: Run) -> ModelView:
        """The items of this loop's scope, as its model reads them: kept between rounds."""
        view = self._model_view
        if view is None or view.scope != self.scope:
            view = self._model_view = ModelView(self.scope)
        view.sync(run.conversation.items)
        return view

    async def _load_extra_tools(self, run: Run) -> None:
        """Add MCP servers' tools the first time a run may offer them (never in read-only),
        and again at a message after a server listed other tools than it was offered with."""
        source = self._extra_source
        if source is None or reads_only(run.mode):
            return
        if self._extra_loaded and not source.listed_anew and source.offering == self._offering:
            return
        self._extra_loaded = True
        tools = list(self._own_tools)
        taken = {t.name for t in tools}
        while True:
            before = source.offering
            more, notices = await source.tools()  # makes at most one new offer itself
            if source.offering <= before + 1:  # no other user made a newer one meanwhile
                break
        self._offering = source.offering
        for text in notices:
            self._warn(run, text)
        for tool in more:
            if tool.name in taken:
                self._warn(run, f"The tool {tool.name!r} is left out: a tool of that name exists.")
                continue
            taken.add(tool.name)
            tools.append(tool)
        self.tools = ToolRegistry(tools)

    # ------------------------------------------------------------ a round

    async def _round(self, run: Run, system: str) -> list[ToolItem]:
        """Ask the model once; stream its answer into items; return the calls it made.

        A request that does not fit the context window (by the estimate, or by
        the service's refusal) is asked again with the oldest long tool result
        shortened, one at a time, until it fits or nothing is left to shorten.
        """
        specs = () if self._no_tools else tuple(t.spec for t in offered(self.tools, run.mode))
        view = self._view(run)
        size = view.estimate(system, _size(specs))
        window = await self._window(size, view.items)
        share = self.settings.auto_compact
        if share is not None and not self.scope and size > share * window:
            view = await self._make_room(run, view, lambda v: v.estimate(system, _size(specs)),
                                         share * window)  # fmt: skip
            size = view.estimate(system, _size(specs))
        while not fits(size, window):
            self._shorten(run, view)
            size = view.estimate(system, _size(specs))
        while True:
            messages = view.messages()
            request = Request(self.settings.model, system, self._images(messages), specs)
            stream = RoundStream(run, self.tools, lambda text: self._warn(run, text))
            try:
                async for event in self.provider.stream(request):
                    stream.on(event)
            except ContextTooLong:
                if stream.assistant is not None:
                    raise
                self._shorten(run, view)
                continue
            except ProviderHTTPError as e:
                if self._images_refused(run, request, stream.assistant is None, e):
                    continue
                if (
                    not specs
                    or stream.assistant is not None
                    or not tools_unsupported(e.status, str(e))
                ):
                    raise
                # llama.cpp without --jinja (and the like): go on without tools, and say so.
                self._no_tools, specs = True, ()
                self._warn(run, tools_unsupported_notice(getattr(self.provider, "base_url", "")))
                continue
            finally:
                stream.sync()  # a stop or a broken stream keeps the text that arrived
            return stream.finish()

    def _images(self, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        return without_images(messages) if self._no_images else messages

    def _images_refused(
        self, run: Run, request: Request, before_output: bool, e: ProviderHTTPError
    ) -> bool:
        """A refusal of the request's images: from now on each is a line, said once."""
        if not before_output or self._no_images or not has_images(request.messages):
            return False
        if not images_refused(e.status, str(e)):
            return False
        self._no_images = True
        self._warn(run, REFUSED_NOTICE.format(reason=f"HTTP {e.status}"))
        return True

    async def _window(self, size: int, items: list[Item]) -> int:
        """The context window to fit a request in.

        A local server may run the model with a window of its own; asking it is
        a round trip, so it is asked only when the answer could change what is
        sent: something could be shortened, or the request does not fit the
        window assumed until then.
        """
        ask, window = self.served_window, self.settings.context_window
        if ask is None or (fits(size, window) and not can_shorten(items)):
            return window
        self.served_window = None
        served = await ask()
        if served:
            self.settings = self.settings._replace(context_window=served)
        return self.settings.context_window

    async def _make_room(
        self, run: Run, view: ModelView, size: Callable[[ModelView], int], limit: float
    ) -> ModelView:
        """The request passed the `auto_compact` share of the window: shorten the oldest
        long tool results while that helps, then summarise the older items as /compact
        does. A summary that fails leaves the conversation as it was, with a notice; the
        round then goes on as it would have (shortening, or "no longer fits")."""
        while size(view) > limit and self._shorten_one(run, view):
            pass
        cut = compaction_cut(view.items, KEEP_TURNS)
        if size(view) <= limit or cut == 0:
            return view
        try:
            summary = await self._summary(run, view, cut, "")
        except AgentError as e:
            self._warn(run, f"Automatic compaction failed ({e}); the conversation is unchanged.")
            return view
        if not summary:
            self._warn(run, "Automatic compaction failed (the summary came back empty); the "
                       "conversation is unchanged.")  # fmt: skip
            return view
        replaced = self._insert_summary(run, view.items, cut, summary)
        run.notice(
            f"The conversation neared the model's context window: {replaced} earlier items "
            "were summarised automatically; they are kept but no longer sent."
        )
        return self._view(run)

    def _shorten_one(self, run: Run, view: ModelView) -> bool:
        """Shorten the oldest long tool result; False when none is left."""
        shortened = view.shorten_oldest()
        if shortened is None:
            return False
        run.update(shortened)
        if not self._shortened_notice:
            self._shortened_notice = True
            run.notice(
                "Older tool results are being shortened so the conversation fits the model's "
                "context window; you can still read them in full."
            )
        return True

    def _shorten(self, run: Run, view: ModelView) -> None:
        if not self._shorten_one(run, view):
            if compaction_cut(view.items, KEEP_TURNS) == 0:  # /compact would find nothing to do
                raise ContextFull(
                    "This message's own work no longer fits the model's context window, and "
                    "there is nothing older to summarise — start a new conversation with a "
                    "narrower request, or use a model with a larger window."
                )
            raise ContextFull(
                "The conversation no longer fits the model's context window — run /compact "
                "(or agent run --continue --compact) to summarise it, or start a new one."
            )

    async def compact(self, run: Run, focus: str) -> RunResult:
        """Summarise the older items into one; they stay stored but are no longer sent."""
        view = self._view(run)
        items = view.items
        cut = compaction_cut(items, KEEP_TURNS)
        if cut == 0:
            run.notice("Nothing to compact yet: the conversation is still short.")
            return RunResult(StopReason.ANSWERED)
        summary = await self._summary(run, view, cut, focus)
        replaced = self._insert_summary(run, items, cut, summary)
        run.notice(
            f"Compacted {replaced} earlier items into a summary; they are kept but no longer sent."
        )
        return RunResult(StopReason.ANSWERED)

    async def _summary(self, run: Run, view: ModelView, cut: int, focus: str) -> str:
        """The model's summary of the items before `cut` (a request of its own)."""
        instruction = COMPACT_INSTRUCTION + (f"\nFocus on: {focus}" if focus else "")
        while True:
            items = view.items
            # The summary is text: it is made of the images' labels, not the images.
            messages = (*without_images(to_messages(items[:cut])), Message("user", instruction))
            request = Request(self.settings.model, COMPACT_SYSTEM, messages, ())
            parts: list[str] = []
            try:
                async for event in self.provider.stream(request):
                    if type(event) is TextDelta:
                        parts.append(event.text)
            except ContextTooLong:
                self._shorten(run, view)
                continue
            return "".join(parts).strip()

    def _insert_summary(self, run: Run, items: list[Item], cut: int, summary: str) -> int:
        """Put the summary before the first kept item; how many items it replaces."""
        replaced = len(sent_items(items[:cut]))
        # Sub-agents' items may sit between this level's: stand before the same item in the list.
        at = next(i for i, item in enumerate(run.conversation.items) if item is items[cut])
        run.insert(at, SummaryItem(summary, replaced))
        return replaced

    # ---------------------------------------------------------- dispatch

    async def _dispatch(self, run: Run, items: list[ToolItem]) -> None:
        """Reads run together; a change runs alone, in the model's order."""
        reads: list[ToolItem] = []
        for item in items:
            tool = self.tools.get(item.tool)
            if tool is None or tool.effect is Effect.READ:
                reads.append(item)
                continue
            await self._call_all(run, reads)
            reads = []
            await self._call(run, item)
        await self._call_all(run, reads)
        await _round_checks(run, self.context, self.tools, items)

    async def _call_all(self, run: Run, items: list[ToolItem]) -> None:
        if len(items) == 1:
            await self._call(run, items[0])
        elif items:
            await asyncio.gather(*(self._call(run, item) for item in items))

    async def _call(self, run: Run, item: ToolItem) -> None:
        tool = self.tools.get(item.tool)
        if tool is None:
            names = ", ".join(t.name for t in offered(self.tools, run.mode))
            return _fail(run, item, f"There is no tool {item.tool!r}. The tools are: {names}.")
        try:
            args = tool.check(_parse_arguments(item.args))
        except ArgumentError as e:
            return _fail(
                run,
                item,
                f"Not done: the {tool.name} call's {e}. Call it again with complete, valid "
                "JSON arguments.",
            )
        if self.hooks is not None:
            blocked = await self.hooks.pre_tool_use(run, item, args)
            if blocked is not None:
                return _finish(run, item, ToolResult(blocked, is_error=True), "denied")
        sandboxed = tool.effect is Effect.EXEC and self._sandboxed(run)
        verdict = decide(
            tool, args, run.mode, self.settings.workspace, self.rules, sandboxed, run.mode_owner
        )
        if verdict.verdict is Verdict.REFUSE:
            return _finish(run, item, ToolResult(verdict.reason, is_error=True), "denied")
        change = None
        if tool.plan is not None:
            try:
                change = await self._preview(run, tool, item, args)
            except (ArgumentError, OSError, ValueError, ToolError) as e:
                return _fail(run, item, str(e))
        decision = None
        if verdict.verdict is Verdict.ASK:
            asked = await self._ask(run, tool, item, args, change)
            if asked is None:
                return None
            decision, change = asked
        elif verdict.rule:
            item.rule = verdict.rule
        outcome = Outcome(verdict.changes, change, decision, verdict.unsandboxed)
        await self._execute(run, tool, item, args, outcome)
        return None

    def _sandboxed(self, run: Run) -> bool:
        """Whether commands run in a sandbox; said once when they cannot."""
        sandbox = self.context.sandbox
        if sandbox is None:
            return False
        if not sandbox.active and not self._sandbox_notice:
            self._sandbox_notice = True
            self._warn(run, f"Commands run without a sandbox: {sandbox.mechanism.reason}.")
        return sandbox.active

    async def _preview(self, run: Run, tool: Tool, item: ToolItem, args: dict) -> FileChange:
        change = await tool.preview(self.context, args)
        item.diff, item.file = change.diff, change.relative
        run.update(item)
        return change

    async def _ask(
        self, run: Run, tool: Tool, item: ToolItem, args: dict, change: FileChange | None
    ) -> tuple[Decision, FileChange | None] | None:
        """Show the card until the person answers for the diff as it stands; None if denied."""
        command = args.get("command", "") if tool.effect is Effect.EXEC else ""
        kind: ApprovalKind = "command" if command else "edit" if change is not None else "tool"
        suggested = suggest_rule(tool.name, args, self.context.workspace)
        while True:
            request = ApprovalRequest(
                item,
                kind,
                command=command,
                cwd=str(self.settings.workspace),
                diff=change.diff if change else "",
                suggested_rule=suggested,
                proposed=change.after if change else None,
            )
            if self.hooks is not None:
                self.hooks.approval(run, item, kind)
            decision = await run.ask(request)
            if not decision.allowed:
                reason = f" They said: {decision.reason}" if decision.reason else ""
                text = f"The person declined this call; nothing was done.{reason}"
                _finish(run, item, ToolResult(text, is_error=True), "denied")
                return None
            if decision.answer == "always":
                self._keep_rule(run, item, decision, suggested)
            if change is None:
                return decision, None
            # Recompute after the yes: a file changed meanwhile is never overwritten blind.
            try:
                fresh = await self._preview(run, tool, item, args)
            except (ArgumentError, OSError, ValueError, ToolError) as e:
                _fail(run, item, str(e))  # e.g. the file was deleted while the card waited
                return None
            if fresh.diff == change.diff:
                return decision, fresh
            run.notice(f"{fresh.relative} changed while the card waited; here is the new diff.")
            change = fresh

    def _keep_rule(
        self, run: Run, item: ToolItem, decision: Decision, suggested: str,
        unsandboxed: bool = False,
    ) -> None:  # fmt: skip
        rule = decision.rule or suggested
        try:
            if self.rules is not None:
                self.rules.add(rule, decision.scope, unsandboxed=unsandboxed)
            marked = ", unsandboxed" if unsandboxed else ""
            item.rule = f"{' + '.join(split_rules(rule))}{marked} ({decision.scope})"
        except (ValueError, OSError) as e:  # a rule typed wrong, a rules file unwritable
            run.notice(f"{e} — this call is allowed once; no rule was kept.", "warn")

    async def _execute(
        self, run: Run, tool: Tool, item: ToolItem, args: dict, outcome: Outcome
    ) -> None:
        item.state = "running"
        run.update(item)
        try:
            if outcome.changes and self.checkpoint is not None:
                for text in await self.checkpoint(run.conversation.id, item.title or tool.name):
                    if text not in self._checkpoint_notices:
                        self._checkpoint_notices.add(text)
                        self._warn(run, text)
            if outcome.change is not None:
                result = await _apply(self.context, outcome.change, outcome.decision)
            else:
                extra = {**self.context.extra, CALL: Call(self, run, item)}
                if not self.scope:  # the plan is the conversation's, not a sub-agent's
                    extra[PLAN_BOARD] = run
                context = replace(
                    self.context,
                    extra=extra,
                    read_only=not outcome.changes,
                    unsandboxed=outcome.unsandboxed,
                )
                result = await tool.run(context, args)
                if result.stopped:
                    result = await self._outside(run, tool, item, args, context, result)
        except (ArgumentError, OSError, ValueError, ToolError) as e:
            result = ToolResult(f"{tool.name} failed: {e}", is_error=True)
        if not result.is_error:  # a subfolder's AGENTS.md, the first time the agent works there
            own = (i for i in run.conversation.items if i.parent == self.scope)  # its model's
            note = self.instructions.note(tool.name, args.get("path"), own)
            result = result._replace(text=result.text + note) if note else result
        _finish(run, item, result, "error" if result.is_error else "done")
        if self.hooks is not None:
            await self.hooks.post_tool_use(run, item, args)

    async def _outside(
        self, run: Run, tool: Tool, item: ToolItem, args: dict, context: ToolContext,
        result: ToolResult,
    ) -> ToolResult:  # fmt: skip
        """A command the sandbox stopped: run it again outside only after a person's yes
        (`ask`, `auto`); otherwise the model reads what was stopped (SPEC §14)."""
        stopped = result.stopped
        told = (
            f"\n[The sandbox stopped this command: {stopped}. Outside the sandbox it needs the "
            "person's approval: say what it needs and ask them to allow it.]"
        )
        if run.mode not in ("ask", "auto") or context.read_only:
            return result._replace(text=result.text + told)
        command = str(args.get("command", ""))
        request = ApprovalRequest(
            item,
            "command",
            command=command,
            cwd=str(self.settings.workspace),
            suggested_rule=suggest_rule(tool.name, args, self.context.workspace),
            outside=stopped,
        )
        item.result = result.text  # the card shows what the sandboxed run printed
        decision = await run.ask(request)
        if not decision.allowed:
            reason = f" They said: {decision.reason}" if decision.reason else ""
            text = (
                f"\n[The sandbox stopped this command: {stopped}. The person did not let it "
                f"run outside the sandbox.{reason}]"
            )
            return result._replace(text=result.text + text)
        if decision.answer == "always":
            self._keep_rule(run, item, decision, request.suggested_rule, unsandboxed=True)
        item.state = "running"
        run.update(item)
        again = await tool.run(replace(context, unsandboxed=True), args)
        return again._replace(text=f"[run again outside the sandbox]\n{again.text}")


class Outcome(NamedTuple):
    """What the policy and the person decided for a call about to run."""

    changes: bool
    change: FileChange | None
    decision: Decision | None
    unsandboxed: bool = False  # a rule lets this command run outside the sandbox


async def _apply(context: ToolContext, change: FileChange, decision: Decision | None) -> ToolResult:
    """Make a planned file change, as accepted: whole, some hunks, or the person's version."""
    from agent_cli.tools.files import apply_change, hunk_count, select_hunks

    if decision is not None and decision.edited is not None:
        result = await apply_change(context, change, decision.edited)
        if decision.edited == change.after:
            return result
        edits = _diff(change.after, decision.edited, change.relative)
        note = (
            "\nThe person edited your proposal before accepting it; the file differs from "
            f"what you proposed as follows:\n{edits}"
        )
        return result._replace(text=result.text + note)
    if decision is not None and decision.hunks is not None:
        total = hunk_count(change.diff)
        kept = sorted(set(decision.hunks))
        result = await apply_change(context, change, select_hunks(change, kept))
        left = [i + 1 for i in range(total) if i not in kept]
        note = (
            f"\nOnly some hunks were accepted: applied {_numbers([i + 1 for i in kept])} of "
            f"{total}; not applied: {_numbers(left)}. The file has only the applied ones."
        )
        return result._replace(text=result.text + note)
    return await apply_change(context, change)


def _diff(proposed: str, accepted: str, path: str) -> str:
    import difflib

    lines = difflib.unified_diff(
        proposed.splitlines(keepends=True),
        accepted.splitlines(keepends=True),
        f"proposed/{path}",
        f"accepted/{path}",
    )
    return "".join(lines)


def _numbers(values: list[int]) -> str:
    return ", ".join(str(v) for v in values) or "none"


class _FailureTracker:
    """Counts each call that fails the same way (tool, arguments, result) round after
    round: a model that answers every round with the same two failing calls alternates
    between them, and each is counted on its own."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, str], int] = {}

    def repeated(self, items: list[ToolItem]) -> bool:
        counts: dict[tuple[str, str, str], int] = {}
        for item in items:
            if item.state == "error":
                key = (item.tool, item.args, item.result)
                counts[key] = counts.get(key, self.counts.get(key, 0)) + 1
        self.counts = counts  # a failure missing from this round starts again from zero
        return any(count >= SAME_FAILURE_LIMIT for count in counts.values())


def _size(specs: tuple) -> int:
    """Characters of the tool definitions sent with every round."""
    return sum(len(s.name) + len(s.description) + len(json.dumps(s.parameters)) for s in specs)


def _parse_arguments(text: str) -> dict:
    """Parse a call's arguments once; a model cut off mid-call gets the parser's reason."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as e:
        raise ArgumentError(f"arguments are not valid JSON ({e})") from e
    if not isinstance(value, dict):
        raise ArgumentError(f"arguments must be a JSON object, not {type(value).__name__}")
    return value


def _fail(run: Run, item: ToolItem, message: str) -> None:
    _finish(run, item, ToolResult(message, is_error=True), "error")


async def _round_checks(
    run: Run, context: ToolContext, tools: ToolRegistry, items: list[ToolItem]
) -> None:
    """The `{files}` checks of a round (tools/feedback.py): a failure's output joins the
    round's last call that may have changed files."""
    if context.feedback is None:
        return
    report = await context.feedback.end_round(context)
    changed = [i for i in items if (t := tools.get(i.tool)) and t.effect is not Effect.READ]
    if not report.text or not changed:
        return
    last = changed[-1]
    last.result += report.text
    last.diagnostics = (*last.diagnostics, *report.diagnostics)
    run.update(last, save=True)


def _finish(run: Run, item: ToolItem, result: ToolResult, state: str) -> None:
    text = result.text
    if len(text) > STORED_RESULT_CAP:
        text = text[:STORED_RESULT_CAP] + "\n[... the rest was not kept ...]"
    item.result = text
    item.is_error = result.is_error
    item.diff = result.diff or item.diff
    item.file = result.file or item.file
    item.diagnostics = result.diagnostics or item.diagnostics
    item.images = result.images or item.images
    item.exit_code = result.exit_code
    item.progress = ""  # said while it ran
    item.state = state  # type: ignore[assignment]
    run.update(item, save=True)
