"""The plan as the person reads and edits it, and what carrying it out sends.

Shared by every front end (no UI library here): a plan is shown as a Markdown
checklist; in plan mode, a run that ends with a plan offers the plan card, whose
answers mean the same in the TUI and the line REPL (`PlanAnswer`): implement it
in a mode, keep planning, or edit it in $EDITOR first. Implementing switches the
mode and sends the plan as the next user message, so the next run reads it.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from agent_cli.policy.mode_names import IMPLEMENT_MODES
from agent_cli.tools.plan import MAX_STEPS, Plan, PlanStatus, PlanStep

if TYPE_CHECKING:
    from agent_cli.engine.session import Session

MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
STATUS_OF_MARK: dict[str, PlanStatus] = {
    " ": "pending", "x": "completed", "X": "completed", "~": "in_progress", ">": "in_progress"
}  # fmt: skip
SYMBOLS = {"completed": "✓", "in_progress": "▸", "pending": "○"}
_CHECKLIST_LINE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[([ xX~>])\]\s*)?(.*\S)\s*$")
IMPLEMENT = "Carry out this plan now, step by step, keeping it up to date with update_plan:"
EDITED = "I edited the plan; carry out my version now, keeping it up to date with update_plan:"

Choice = Literal["implement", "keep"]  # editing first is the card's own business


class PlanAnswer(NamedTuple):
    """What the person chose on the plan card: `mode` and `text` for "implement"."""

    choice: Choice
    mode: str = ""
    text: str = ""  # the plan as it is to be carried out (edited, perhaps)
    edited: bool = False


def checklist(plan: Plan) -> str:
    """The plan as a Markdown checklist (`[~]` marks the step in progress)."""
    lines = [f"- {MARKS[step.status]} {step.step}" for step in plan.steps]
    if plan.explanation:
        lines += ["", plan.explanation]
    return "\n".join(lines)


def progress(plan: Plan) -> str:
    """How far the plan is, in a few characters: `Plan 2/5`."""
    return f"Plan {plan.completed}/{len(plan.steps)}"


def parse_checklist(text: str) -> Plan | None:
    """A plan from a checklist the person edited; lines that are not items are its
    explanation. None when no line is a list item."""
    steps: list[PlanStep] = []
    notes: list[str] = []
    for line in text.splitlines():
        found = _CHECKLIST_LINE.match(line)
        if found is None or len(steps) >= MAX_STEPS:
            if line.strip():
                notes.append(line.strip())
            continue
        mark, step = found.group(1) or " ", found.group(2)
        steps.append(PlanStep(step, STATUS_OF_MARK[mark]))
    if not steps:
        return None
    return Plan(tuple(steps), " ".join(notes))


def card_due(session: Session, reason: str) -> bool:
    """Whether a run that ended with `reason` ends with a plan to approve (plan mode)."""
    return reason == "answered" and session.mode == "plan" and session.conversation.plan is not None


def implement_message(text: str, edited: bool = False) -> str:
    return f"{EDITED if edited else IMPLEMENT}\n\n{text.strip()}"


def implement(session: Session, answer: PlanAnswer) -> str:
    """Carry out a plan: the mode the person picked, the plan as they edited it kept; the
    message to send, which starts the run that carries it out."""
    if answer.mode not in IMPLEMENT_MODES:
        raise ValueError(f"a plan is carried out in {'/'.join(IMPLEMENT_MODES)}, not {answer.mode}")
    session.set_mode(answer.mode)
    if answer.edited:
        plan = parse_checklist(answer.text)
        if plan is not None:
            session.set_plan(plan)
    return implement_message(answer.text, answer.edited)


def editor_command(path: Path) -> list[str]:
    """$VISUAL or $EDITOR (else vi) on `path`; ValueError for a command that does not parse."""
    import shlex  # here: not needed before the TUI's first frame

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    return [*shlex.split(editor), str(path)]


Editor = Callable[[list[str]], int]  # runs a command line, returns its exit code


def edit_text(
    text: str, run: Editor = subprocess.call, what: str = "plan", allow_empty: bool = False
) -> tuple[str | None, str]:
    """Open `text` in the person's editor (blocking); (the edited text, "") or (None, why not).

    `run` runs the editor and returns its exit code (the TUI hands it the terminal first);
    `what` names the text in the reasons (the plan, the input); an emptied text is refused
    unless `allow_empty`.
    """
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{what}.md"
        path.write_text(text + "\n", encoding="utf-8")
        try:
            code = run(editor_command(path))
        except (OSError, ValueError) as e:
            return None, f"the editor could not be started ({e}); set $VISUAL or $EDITOR"
        if code != 0:
            return None, f"the editor exited with {code}; the {what} is as it was"
        try:
            edited = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            return None, f"the edited {what} could not be read ({e})"
    if not edited and not allow_empty:
        return None, f"the edited {what} is empty; the {what} is as it was"
    return edited, ""
