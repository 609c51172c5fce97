"""Sub-agents: the `task` tool hands a focused piece of work to a child agent.

The child is another BuiltinLoop with the parent's provider, workspace,
rules, checkpoints and hooks, and a fresh context: its first message is the
`task` call's prompt, and its final answer is the call's result. It works
inside the parent's run (a `ChildRun`):

- its items join the parent's conversation, each with `parent` set to the
  `task` item's id; every loop sends its model only the items of its own
  level, so the parent's model never reads the child's work, yet the
  conversation file and every front end have it, nested under the card;
- its approvals go through the parent's run, so they appear on the parent's
  front end like any other card; its usage counts in the conversation's;
- its mode is its definition's (read-only by default), lowered to the
  parent's at every read (`read-only` < `ask` < `full`), so a sub-agent never
  does more than the conversation allows — a definition in a cloned
  repository cannot raise it either.

Guards, after the reference design: a depth limit (the conversation's own
loop is depth 0; a loop at the limit is not offered `task`; 0 turns it off),
and one round budget per message shared by every sub-agent of the tree (the
conversation's own rounds have their own limit). A stop cancels the parent's
calls, and with them every live child, since each child is awaited inside its
call. Several `task` calls of one round run together: `task` is dispatched
as a read (the call itself changes nothing; every call the child makes passes
the policy on its own).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Annotated, Any

from agent_cli.backends.loop import CALL, BuiltinLoop, Call, LoopParts
from agent_cli.backends.subagent_definitions import GENERAL, Definition, Definitions
from agent_cli.engine.approval import ApprovalRequest, Decision
from agent_cli.engine.backend import Run, RunResult, StopReason
from agent_cli.engine.items import AssistantItem, Item, ToolItem, UserItem
from agent_cli.errors import AgentError
from agent_cli.policy import modes
from agent_cli.providers.base import Usage
from agent_cli.tools.base import Effect, Tool, ToolContext, ToolRegistry, ToolResult, tool
from agent_cli.tools.plan import PLAN_TOOL

TASK_TOOL = "task"
OWN_TOOLS = (TASK_TOOL, PLAN_TOOL)  # a child gets its own task tool, and keeps no plan

SUBAGENT_PROMPT = """
You are a sub-agent: another agent handed you one focused task, given in the first message.
Do it alone with your tools; nobody can answer questions. Then answer with everything the
other agent needs, complete and self-contained: it reads only your final answer, not your
steps, so include the paths, names, findings and exact errors it will use.
"""

TASK_DESCRIPTION = """\
Hand a focused piece of work to a sub-agent with a fresh context. It works alone with its own
tools and its final answer becomes this call's result. Use it for self-contained searches,
investigations or reviews that would fill this conversation with intermediate steps. Several
task calls in one answer run at the same time. The prompt must say everything the sub-agent
needs: it does not see this conversation. It never does more than this conversation's mode
allows."""


def capped(wanted: str, parent: str) -> str:
    """The lower of two modes: a sub-agent never does more than its parent may. Under a
    conversation in plan mode it only reads: the plan is the conversation's to make."""
    mode = modes.capped(wanted, parent)
    return "read-only" if mode == "plan" else mode


class RoundBudget:
    """Rounds left to all the sub-agents of one message."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    @property
    def spent(self) -> bool:
        return self.used >= self.limit

    def take(self) -> bool:
        if self.spent:
            return False
        self.used += 1
        return True


class Subagents:
    """What one loop knows of the sub-agent tree it is part of, and its place in it."""

    def __init__(
        self,
        definitions: Definitions,
        max_depth: int,
        max_rounds: int,
        depth: int = 0,
        budget: RoundBudget | None = None,
        base_prompt: Callable[[str], str] | None = None,
    ) -> None:
        self.definitions = definitions
        self.max_depth = max_depth
        self.max_rounds = max_rounds
        self.depth = depth
        self.budget = budget or RoundBudget(max_rounds)
        self.base_prompt = base_prompt  # the conversation's system prompt, for every child

    @property
    def offers_task(self) -> bool:
        return self.depth < self.max_depth

    def start_tree(self) -> None:
        """A new message: its sub-agents get a fresh budget."""
        self.budget = RoundBudget(self.max_rounds)

    def take_round(self) -> bool:
        """Count a round of this loop against the budget (the conversation's own: free)."""
        return self.depth == 0 or self.budget.take()

    def budget_notice(self) -> str:
        return (
            f"Stopped: the sub-agents of this message used all {self.budget.limit} rounds they "
            "share ([subagents] max_rounds)."
        )

    def child(self, base_prompt: Callable[[str], str]) -> Subagents:
        return Subagents(
            self.definitions,
            self.max_depth,
            self.max_rounds,
            self.depth + 1,
            self.budget,
            self.base_prompt or base_prompt,
        )

    def tool(self) -> Tool:
        """The `task` tool, its description listing the definitions by name."""
        lines = [f"- {d.name}: {d.description}" for d in self.definitions.all]
        description = TASK_DESCRIPTION
        if lines:
            description += (
                "\n\nSub-agents you may name in `agent` (without one, a general read-only "
                "helper):\n" + "\n".join(lines)
            )
        return replace(task, description=description)


def _title(args: Mapping[str, Any]) -> str:
    agent = args.get("agent")
    return f"Task{f' ({agent})' if agent else ''}: {args.get('description') or '…'}"


@tool(TASK_TOOL, Effect.READ, title=_title)
async def task(
    ctx: ToolContext,
    description: Annotated[str, "The work in a few words, shown to the person."],
    prompt: Annotated[str, "The task, with every detail the sub-agent needs to do it alone."],
    agent: Annotated[str | None, "A sub-agent's name from the list, or none."] = None,
) -> ToolResult:
    """Hand a focused piece of work to a sub-agent (the description is set per conversation)."""
    call = ctx.extra.get(CALL)
    if not isinstance(call, Call):
        return ToolResult("The task tool can only run inside the agent loop.", is_error=True)
    return await run_task(call, prompt, agent)


async def run_task(call: Call, prompt: str, agent: str | None) -> ToolResult:
    """Run a child loop on `prompt` inside `call`'s run; its answer is the result."""
    parent, run, item = call
    subagents = parent.subagents
    if subagents is None or not subagents.offers_task:
        return ToolResult("Not done: the sub-agent depth limit is reached; do it yourself.", True)
    definition = subagents.definitions.get(agent) if agent else GENERAL
    if definition is None:
        names = ", ".join(d.name for d in subagents.definitions.all) or "none"
        return ToolResult(
            f"There is no sub-agent named {agent!r} (there are: {names}); call task again "
            "with one of them, or without `agent` for a general one.",
            is_error=True,
        )
    child_run = ChildRun(run, item, definition.mode)
    child = _child_loop(parent, subagents, definition, item)
    child_run.add(UserItem(prompt))
    try:
        result = await child.run(child_run)
    except AgentError as e:
        _settle(child_run)
        return ToolResult(f"The sub-agent failed: {e}", is_error=True)
    return _outcome(child_run, result, subagents)


class ChildRun(Run):
    """A sub-agent's run inside its parent's (see the module docstring)."""

    def __init__(self, parent: Run, task_item: ToolItem, mode: str) -> None:
        # The parent's publisher: the child's events are the parent's session's events.
        super().__init__(
            parent.conversation, parent._publish, lambda: capped(mode, parent.mode), parent.save
        )
        self.parent = parent
        self.scope = task_item.id
        self.task_item = task_item
        self._own_mode = mode
        self._calls: set[str] = set()  # ids of the calls it made (its own, not its children's)
        self._step = "thinking"

    @property
    def mode_owner(self) -> str:
        if self.mode == self.parent.mode:
            return self.parent.mode_owner
        return (
            f"this sub-agent (its definition allows {self._own_mode}, while "
            f"{self.parent.mode_owner} is in {self.parent.mode} mode)"
        )

    def add(self, item: Item) -> None:
        item.parent = self.scope
        super().add(item)
        self._track(item)

    def update(self, item: Item, *, save: bool = False) -> None:
        super().update(item, save=save)
        self._track(item)

    def _track(self, item: Item) -> None:
        """Say on the task's card what the sub-agent does now and how many calls it made."""
        if item.parent != self.scope:
            return
        if isinstance(item, ToolItem):
            self._calls.add(item.id)
            self._step = {
                "running": item.title or item.tool,
                "waiting": "waiting for approval",
                "composing": "writing a call",
            }.get(item.state, "thinking")
        elif isinstance(item, AssistantItem):
            self._step = "thinking"
        count = len(self._calls)
        said = f"{count} tool call{'' if count == 1 else 's'} · {self._step}"
        task = self.task_item
        if task.state == "running" and said != task.progress:
            task.progress = said
            self.parent.update(task)

    def insert(self, index: int, item: Item) -> None:
        item.parent = self.scope
        super().insert(index, item)

    def add_usage(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        self.parent.add_usage(usage)

    async def ask(self, request: ApprovalRequest) -> Decision:
        return await self.parent.ask(request)


def _child_loop(
    parent: BuiltinLoop, subagents: Subagents, definition: Definition, item: ToolItem
) -> BuiltinLoop:
    nested = subagents.child(parent.system_prompt)
    base = nested.base_prompt or parent.system_prompt  # the conversation's, not the parent's
    extra = SUBAGENT_PROMPT + (f"\n{definition.prompt}\n" if definition.prompt else "")
    wanted = definition.tools

    def allowed(name: str) -> bool:
        return wanted is None or name in wanted

    tools = [t for t in parent.tools if t.name not in OWN_TOOLS and allowed(t.name)]
    if nested.offers_task and allowed(TASK_TOOL):
        tools.append(nested.tool())  # bound to its own depth
    model = definition.model or parent.settings.model
    child = BuiltinLoop(
        provider=parent.provider,
        tools=ToolRegistry(tools),
        context=parent.context,
        settings=parent.settings._replace(model=model),
        system_prompt=lambda mode: base(mode) + extra,
        parts=LoopParts(
            rules=parent.rules,
            checkpoint=parent.checkpoint,
            hooks=parent.hooks,
            subagents=nested,
            served_window=parent.served_window,
        ),
    )
    child.scope = item.id
    return child


def _outcome(run: ChildRun, result: RunResult, subagents: Subagents) -> ToolResult:
    """The call's result: the child's last answer, and why it stopped if it did not finish."""
    answer = next(
        (
            i.text
            for i in reversed(run.conversation.items)
            if isinstance(i, AssistantItem) and i.parent == run.scope and i.text.strip()
        ),
        "",
    )
    if result.reason is StopReason.ANSWERED:
        return ToolResult(answer or "The sub-agent finished without an answer.")
    if result.reason is StopReason.ROUND_LIMIT and subagents.budget.spent:
        why = f"the {subagents.budget.limit} rounds all sub-agents of this message share are spent"
    elif result.reason is StopReason.ROUND_LIMIT:
        why = f"it reached the limit of {run.rounds} rounds"
    else:
        why = "the same call kept failing the same way"
    text = f"The sub-agent stopped before it finished: {why}."
    if answer:
        text += f" What it had so far:\n\n{answer}"
    return ToolResult(text, is_error=True)


def _settle(run: ChildRun) -> None:
    """After a child's error, leave none of its items half-done."""
    for item in run.conversation.items:
        if item.parent != run.scope:
            continue
        if isinstance(item, AssistantItem) and item.streaming:
            item.streaming = False
            run.update(item)
        elif isinstance(item, ToolItem) and item.state in ("composing", "running", "waiting"):
            item.state = "error"
            item.is_error = True
            item.result = item.result or "The sub-agent failed before this call finished."
            run.update(item)
