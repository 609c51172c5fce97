"""The plan, pinned above the input as a checklist (issue 16): the built-in agent's
`update_plan` and an external agent's ACP plan alike.

Hidden while there is no plan. A plan of more than `FULL_STEPS` steps is folded
to one line — how far it is and the step at hand — and a click (or Enter when
focused) unfolds it, so a long plan never pushes the conversation off the screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.events import Click
from textual.reactive import reactive
from textual.widget import Widget

if TYPE_CHECKING:
    from agent_cli.tools.plan import Plan, PlanStep

FULL_STEPS = 5  # a plan up to this long is shown whole; a longer one folds
STEP_STYLES = {"completed": "$text-muted strike", "in_progress": "bold $accent", "pending": ""}
MARK_STYLES = {
    "completed": "$text-success",
    "in_progress": "bold $accent",
    "pending": "$text-muted",
}


def step_line(step: PlanStep) -> Content:
    from agent_cli.frontends.plan_text import SYMBOLS  # with the first plan (see render)

    return Content.assemble(
        (SYMBOLS[step.status], MARK_STYLES[step.status]), " ", (step.step, STEP_STYLES[step.status])
    )


class PlanView(Widget, can_focus=True):
    """The conversation's plan; `plan = None` hides it. A click folds or unfolds it and
    leaves the focus in the input (Space and Enter fold it only when reached with Tab)."""

    FOCUS_ON_CLICK = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "fold", "fold / unfold", show=False)
    ]

    plan: reactive[Plan | None] = reactive(None, layout=True)
    expanded: reactive[bool] = reactive(False, layout=True)

    def watch_plan(self, plan: Plan | None) -> None:
        self.display = plan is not None

    @property
    def folded(self) -> bool:
        return self.plan is not None and len(self.plan.steps) > FULL_STEPS and not self.expanded

    def render(self) -> Content:
        plan = self.plan
        if plan is None:
            return Content("")
        # The plan's text (~4 ms of imports) comes with the first plan, not before the first
        # frame: a new conversation has none.
        from agent_cli.frontends.plan_text import progress

        header = Content.styled(progress(plan), "bold")
        current = plan.current
        if self.folded:
            now = step_line(plan.steps[current]) if current is not None else Content("all done")
            hint = Content.styled(f"  · {len(plan.steps)} steps, click to unfold", "$text-muted")
            return Content.assemble(header, "  ", now, hint)
        lines = [header, *(step_line(step) for step in plan.steps)]
        if plan.explanation:
            lines.append(Content.styled(plan.explanation, "italic $text-muted"))
        return Content("\n").join(lines)

    def action_fold(self) -> None:
        self.expanded = not self.expanded

    def on_click(self, event: Click) -> None:
        event.stop()
        self.action_fold()
