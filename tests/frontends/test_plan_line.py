"""The plan in the line REPL (`agent --plain`, issue 16 item 3): printed when it changes, and
after plan mode the plan card with each of its answers — the real CLI on a pseudo-terminal."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.frontends.test_line import PROMPT, enter, leave, pty_env, repl, spawn
from tests.support.fake_openai import FakeOpenAI, text, tool_calls

__all__ = ["pty_env"]  # the fixture, shared with test_line

STEPS = [
    {"step": "Read greet()", "status": "pending"},
    {"step": "Change the greeting", "status": "pending"},
]
CARD = "[k]eep"


def plan_call(steps: list[dict]) -> tuple[str, str, str]:
    return ("call_plan", "update_plan", json.dumps({"plan": steps}))


def before_prompt(child) -> str:
    """What the terminal showed before the prompt's `›`, without escape codes: the mode."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before).rstrip()


def told(fake: FakeOpenAI, request: int) -> str:
    return fake.requests[request]["messages"][-1]["content"]


def test_the_plan_is_printed_when_it_changes(fake, workspace, pty_env):
    working = [{**STEPS[0], "status": "completed"}, {**STEPS[1], "status": "in_progress"}]
    fake.add(tool_calls(plan_call(working)), text("Changing it now."))
    child = repl(workspace, pty_env)
    enter(child, "change the greeting")
    child.expect_exact("Plan 1/2")
    child.expect_exact("✓ Read greet()")
    child.expect_exact("▸ Change the greeting")
    child.expect_exact("Changing it now.")
    child.expect_exact(PROMPT)
    assert CARD not in child.before, "no card outside plan mode"
    assert leave(child) == 0


def plan_mode(fake: FakeOpenAI, workspace: Path, env: dict[str, str]):
    """--mode plan; a request whose write is refused, then a plan and the card."""
    write = ("call_write", "write_file", json.dumps({"path": "a.txt", "content": "x"}))
    fake.add(tool_calls(write), tool_calls(plan_call(STEPS)), text("Here is the plan."))
    child = spawn(workspace, env, "--plain", "--mode", "plan")
    enter(child, "change the greeting")
    child.expect_exact("Write a.txt")  # refused: the call's line
    child.expect_exact("Here is the plan.")
    child.expect_exact("The plan")
    child.expect_exact(CARD)
    assert not (workspace / "a.txt").exists()
    assert "plan mode" in told(fake, 1)
    return child


@pytest.mark.parametrize(("key", "mode"), [("a", "ask"), ("u", "auto"), ("f", "full")])
def test_plan_mode_ends_with_the_card_and_implements_in_the_chosen_mode(
    fake, workspace, pty_env, key: str, mode: str
):
    child = plan_mode(fake, workspace, pty_env)
    fake.add(text("Implemented."))
    enter(child, key)
    child.expect_exact("Implemented.")
    child.expect_exact(PROMPT)
    assert before_prompt(child).endswith(mode), "the prompt shows the new mode"
    message = told(fake, 3)
    assert message.startswith("Carry out this plan now") and "- [ ] Read greet()" in message
    assert leave(child) == 0


def test_keep_planning_goes_back_to_the_prompt_in_plan_mode(fake, workspace, pty_env):
    child = plan_mode(fake, workspace, pty_env)
    enter(child, "k")
    child.expect_exact("Still in plan mode")
    child.expect_exact(PROMPT)
    assert before_prompt(child).endswith("plan")
    assert len(fake.requests) == 3
    assert leave(child) == 0


def test_edit_opens_the_editor_and_the_edited_plan_is_carried_out(
    fake, workspace, pty_env, tmp_path: Path
):
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text() + '- [ ] Update the docs\\n')\n"
    )
    env = dict(pty_env, VISUAL=f"{sys.executable} {editor}")
    child = plan_mode(fake, workspace, env)
    enter(child, "e")
    child.expect_exact("Update the docs")  # the card again, with the edited plan
    child.expect_exact(CARD)
    fake.add(text("Implemented."))
    enter(child, "f")
    child.expect_exact("Implemented.")
    child.expect_exact(PROMPT)
    message = told(fake, 3)
    assert message.startswith("I edited the plan") and "- [ ] Update the docs" in message
    assert leave(child) == 0
