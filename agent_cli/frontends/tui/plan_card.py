"""The plan card: a run in plan mode ended with a plan (issue 16).

The person carries the plan out in the mode they pick (`a` ask, `u` auto, `f`
full), opens it in $EDITOR first (`e`; the card then shows their version), or
keeps planning (`k`, Escape). The screen dismisses with a `PlanAnswer`; what
implementing does is `plan_text.implement`'s, the same in every front end.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.frontends.plan_text import PlanAnswer, checklist, edit_text
from agent_cli.frontends.tui.plan_view import step_line
from agent_cli.frontends.tui.terminal import run_in_terminal
from agent_cli.tools.plan import Plan

KEYS = {"a": "ask", "u": "auto", "f": "full"}
OPTIONS = (
    ("ask", "a  implement, asking before each change (ask mode)"),
    ("auto", "u  implement, edits and sandboxed commands without asking (auto mode)"),
    ("full", "f  implement without asking (full mode)"),
    ("edit", "e  edit the plan in $EDITOR first"),
    ("keep", "k  keep planning: say what to change"),
)


class PlanCard(ModalScreen[PlanAnswer]):
    """Dismisses with implement (a mode and the plan's text), or keep."""

    CSS_PATH = "plan_card.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "implement('ask')", "ask"),
        Binding("u", "implement('auto')", "auto"),
        Binding("f", "implement('full')", "full"),
        Binding("e", "edit", "edit in $EDITOR"),
        Binding("k,escape", "keep", "keep planning"),
    ]

    def __init__(self, plan: Plan) -> None:
        super().__init__()
        self.plan = plan
        self.text = checklist(plan)
        self.edited = False

    def compose(self) -> ComposeResult:
        with Vertical(id="card") as card:
            card.border_title = "The plan"
            card.border_subtitle = f"{len(self.plan.steps)} steps · nothing has changed yet"
            with VerticalScroll(id="plan-body"):
                yield Static(self._body(), id="plan-text")
            yield OptionList(*[Option(text, id=key) for key, text in OPTIONS], id="choices")

    def on_mount(self) -> None:
        self.query_one("#choices", OptionList).focus()

    def _body(self) -> Content:
        if self.edited:
            return Content(self.text)
        lines = [step_line(step) for step in self.plan.steps]
        if self.plan.explanation:
            lines += [Content(""), Content.styled(self.plan.explanation, "italic $text-muted")]
        return Content("\n").join(lines)

    @on(OptionList.OptionSelected, "#choices")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        choice = str(event.option.id)
        if choice in KEYS.values():
            self.action_implement(choice)
        elif choice == "edit":
            self.action_edit()
        else:
            self.action_keep()

    def action_implement(self, mode: str) -> None:
        self.dismiss(PlanAnswer("implement", mode, self.text, self.edited))

    def action_keep(self) -> None:
        self.dismiss(PlanAnswer("keep"))

    def action_edit(self) -> None:
        edited, problem = edit_text(self.text, self._run_editor)
        if edited is None:
            self.notify(f"Not edited: {problem}.", severity="warning")
            return
        self.text, self.edited = edited, True
        self.query_one("#plan-text", Static).update(self._body())
        self.query_one("#card", Vertical).border_subtitle = "edited · nothing has changed yet"

    def _run_editor(self, command: list[str]) -> int:
        return run_in_terminal(self.app, command)
