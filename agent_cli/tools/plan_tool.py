"""`update_plan`, the tool: checks the model's plan (`plan.make_plan`) and hands it to the
`PlanBoard` the loop lends it; it changes nothing in the world, so it is a read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, TypedDict

from agent_cli.tools.base import Effect, ToolContext, ToolResult, tool
from agent_cli.tools.plan import PLAN_BOARD, PLAN_TOOL, PlanStatus, make_plan, summary


class StepArgument(TypedDict):
    step: Annotated[str, "What to do, in a few words (one line)."]
    status: Annotated[PlanStatus, "pending, in_progress (at most one step) or completed."]


def _title(args: Mapping[str, Any]) -> str:
    steps = args.get("plan")
    if not isinstance(steps, list):
        return "Update the plan"
    done = sum(1 for s in steps if isinstance(s, Mapping) and s.get("status") == "completed")
    return f"Update the plan ({done}/{len(steps)} done)"


@tool(PLAN_TOOL, Effect.READ, title=_title)
async def update_plan(
    ctx: ToolContext,
    plan: Annotated[list[StepArgument], "Every step of the plan, in order: the whole plan."],
    explanation: Annotated[str | None, "Why the plan is this, or what changed, briefly."] = None,
) -> ToolResult:
    """Keep the plan for the task, shown to the person as a checklist. Use it for work of
    several steps: give the whole plan each time, with at most one step in_progress, and
    call it again as steps are completed or the plan changes. Not for a single quick step."""
    made = make_plan(plan, explanation or "")
    if isinstance(made, str):
        return ToolResult(f"Not done: {made}", is_error=True)
    board = ctx.extra.get(PLAN_BOARD)
    if board is None:
        return ToolResult("Not done: only the conversation's own agent keeps a plan.", True)
    board.set_plan(made)
    return ToolResult(summary(made))
