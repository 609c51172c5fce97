"""The model's plan for the work, as Codex's `update_plan` keeps it: its values and checks.

The plan is conversation state the person sees pinned above the input (and an
editor sees as ACP `plan` updates). The tool (`plan_tool`) only checks the model's plan
and hands it to the `PlanBoard` the loop lends it (`ToolContext.extra[PLAN_BOARD]`);
it changes nothing in the world, so it is declared a read and never asks. It is a
module of its own: it needs the tools' machinery, and the plan's values here are
needed without it (a conversation holds them; the TUI's first frame imports them).
The plan's values (`PlanStep`, `Plan`) are plain data; their JSON is the
conversation's, in engine/items.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

PLAN_TOOL = "update_plan"
PLAN_BOARD = "plan_board"
"""The key of `ToolContext.extra` under which the loop lends the `PlanBoard`."""

PlanStatus = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[str, ...] = get_args(PlanStatus)
MAX_STEPS = 50
MAX_STEP_LENGTH = 300  # characters: a step is one line of a checklist
MAX_EXPLANATION_LENGTH = 2000


@dataclass(frozen=True, slots=True)
class PlanStep:
    step: str
    status: PlanStatus = "pending"


@dataclass(frozen=True, slots=True)
class Plan:
    """The steps in order, and why the plan is what it is (or changed), if said."""

    steps: tuple[PlanStep, ...]
    explanation: str = ""

    @property
    def current(self) -> int | None:
        """The step being worked on: the one in progress, else the first pending one."""
        for wanted in ("in_progress", "pending"):
            for index, step in enumerate(self.steps):
                if step.status == wanted:
                    return index
        return None

    @property
    def completed(self) -> int:
        return sum(step.status == "completed" for step in self.steps)


class PlanBoard(Protocol):
    """Where an accepted plan goes: the run, which stores it and tells every front end."""

    def set_plan(self, plan: Plan) -> None: ...


def make_plan(steps: list[Any], explanation: str) -> Plan | str:
    """The plan from checked arguments, or what is wrong with them (for the model to fix)."""
    if not steps:
        return "the plan has no steps; give every step of the plan, in order."
    if len(steps) > MAX_STEPS:
        return f"the plan has {len(steps)} steps; keep it to at most {MAX_STEPS}."
    made: list[PlanStep] = []
    for number, given in enumerate(steps, 1):
        text = " ".join(str(given["step"]).split())
        if not text:
            return f"step {number} is empty; say what the step does."
        if len(text) > MAX_STEP_LENGTH:
            return (
                f"step {number} is {len(text)} characters long; keep each step to one line of "
                f"at most {MAX_STEP_LENGTH}."
            )
        made.append(PlanStep(text, given["status"]))
    working = [n for n, step in enumerate(made, 1) if step.status == "in_progress"]
    if len(working) > 1:
        listed = ", ".join(str(n) for n in working)
        return (
            f"steps {listed} are all in_progress; at most one step may be in_progress at a "
            "time — mark the others pending or completed."
        )
    return Plan(tuple(made), explanation.strip()[:MAX_EXPLANATION_LENGTH])


def summary(plan: Plan) -> str:
    """What the model reads back: how far the plan is, and the step at hand."""
    text = f"Plan updated: {plan.completed} of {len(plan.steps)} steps completed"
    current = plan.current
    if current is None:
        return text + "."
    step = plan.steps[current]
    now = "in progress" if step.status == "in_progress" else "next"
    return f"{text}; {now}: {step.step}"
