"""`update_plan` and plan mode through the loop: the plan kept, published, stored; plan mode
reads only (issue 16, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.backends.prompt import PROMPT_CAP, system_prompt
from agent_cli.engine.events import PlanUpdated
from agent_cli.engine.items import Conversation, ToolItem
from agent_cli.engine.store import Store
from agent_cli.policy.modes import MODES, STRICTNESS, capped, offered
from agent_cli.providers.scripted import answer, calls
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.plan import PLAN_TOOL, Plan, PlanStep, make_plan
from agent_cli.tools.plan_tool import update_plan
from tests.support.sessions import make_session

STEPS = [
    {"step": "Read the failing test", "status": "completed"},
    {"step": "Fix the parser", "status": "in_progress"},
    {"step": "Run the tests", "status": "pending"},
]


def plan_call(steps: list[dict], explanation: str | None = None, call_id: str = "p1") -> list:
    args: dict = {"plan": steps}
    if explanation is not None:
        args["explanation"] = explanation
    return calls((call_id, PLAN_TOOL, json.dumps(args)))


def test_the_schema_is_derived_from_the_typed_parameters():
    schema = update_plan.parameters
    assert schema["required"] == ["plan"]
    item = schema["properties"]["plan"]["items"]
    assert item["required"] == ["status", "step"]
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert schema["properties"]["explanation"]["type"] == "string"
    assert update_plan.effect == "read", "a plan changes nothing: it never asks"


@pytest.mark.parametrize(
    ("steps", "said"),
    [
        ([], "no steps"),
        ([{"step": "  ", "status": "pending"}], "step 1 is empty"),
        ([{"step": "x" * 301, "status": "pending"}], "one line"),
        (
            [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}],
            "steps 1, 2 are all in_progress",
        ),
    ],
)
def test_a_plan_that_does_not_hold_says_what_to_fix(steps: list, said: str):
    made = make_plan(steps, "")
    assert isinstance(made, str) and said in made


async def test_the_plan_is_kept_published_and_read_back_by_the_model(tmp_path: Path):
    session, provider, recorder = make_session(
        tmp_path, [plan_call(STEPS, "Parser first."), answer("Working on it.")]
    )
    await session.send("fix the parser")
    plan = session.conversation.plan
    assert plan == Plan(
        (
            PlanStep("Read the failing test", "completed"),
            PlanStep("Fix the parser", "in_progress"),
            PlanStep("Run the tests", "pending"),
        ),
        "Parser first.",
    )
    assert [e.plan for e in recorder.of(PlanUpdated)] == [plan]
    assert PlanUpdated(plan).to_json() == {
        "type": "plan",
        "steps": STEPS,
        "explanation": "Parser first.",
    }
    told = provider.requests[1].messages[-1].content
    assert told == "Plan updated: 1 of 3 steps completed; in progress: Fix the parser"
    card = next(i for i in session.conversation.items if isinstance(i, ToolItem))
    assert (card.title, card.state) == ("Update the plan (1/3 done)", "done")


async def test_a_bad_plan_is_refused_with_the_reason_and_nothing_is_kept(tmp_path: Path):
    two = [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]
    wrong = [{"step": "a", "status": "started"}]
    session, provider, recorder = make_session(
        tmp_path, [plan_call(two), plan_call(wrong, call_id="p2"), answer("ok")]
    )
    await session.send("plan it")
    assert session.conversation.plan is None and not recorder.of(PlanUpdated)
    first = provider.requests[1].messages[-1].content
    assert first.startswith("Not done: steps 1, 2 are all in_progress")
    second = provider.requests[2].messages[-1].content
    assert "'status' must be one of 'pending', 'in_progress', 'completed'" in second


async def test_the_plan_survives_the_store(tmp_path: Path):
    store = Store(tmp_path / "store")
    session, _, _ = make_session(tmp_path, [plan_call(STEPS), answer("ok")], store=store)
    await session.send("plan it")
    loaded = store.load(session.conversation.id)
    assert loaded.plan == session.conversation.plan is not None
    again = Conversation.from_json(json.loads(json.dumps(session.conversation.to_json())))
    assert again.plan == session.conversation.plan
    assert Conversation.from_json({"workspace": "/w", "id": "x"}).plan is None


def test_plan_mode_is_a_mode_as_strict_as_read_only():
    assert "plan" in MODES and "plan" in STRICTNESS
    assert capped("ask", "plan") == "plan" and capped("plan", "read-only") == "read-only"
    names = offered(builtin_tools(), "plan").names()
    assert names == offered(builtin_tools(), "read-only").names()
    assert "write_file" not in names and PLAN_TOOL in names and "exec_shell_command" in names


async def test_plan_mode_refuses_a_write_naming_plan_mode_and_asks_for_a_plan(tmp_path: Path):
    write = calls(("w1", "write_file", json.dumps({"path": "a.txt", "content": "x"})))
    session, provider, _ = make_session(
        tmp_path, [write, plan_call(STEPS), answer("Here is the plan.")], mode="plan"
    )
    result = await session.send("add a.txt")
    assert result.reason == "answered"
    assert not (tmp_path / "a.txt").exists()
    refused = provider.requests[1].messages[-1].content
    assert "plan mode" in refused and "update_plan" in refused
    system = provider.requests[0].system
    assert "Mode: plan" in system and "update_plan" in system
    assert all(r.system == system for r in provider.requests), "byte-identical rounds"
    assert "write_file" not in {spec.name for spec in provider.requests[0].tools}
    assert session.conversation.plan is not None


def test_the_plan_mode_prompt_stays_under_the_cap(tmp_path: Path):
    assert len(system_prompt(tmp_path, "plan")) < PROMPT_CAP


async def test_a_sub_agent_keeps_no_plan_and_only_reads_under_plan_mode():
    from agent_cli.backends.subagents import capped as sub_capped

    assert sub_capped("full", "plan") == "read-only"
