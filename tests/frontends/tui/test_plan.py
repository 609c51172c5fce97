"""The plan in the TUI (issue 16, item 3): pinned above the input, folded when long, the
plan card after plan mode and each of its answers, an external agent's plan in the same
widget — driven through Pilot against the loopback fake server (and the fixture ACP agent)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from agent_cli.backends.external import ExternalAgent
from agent_cli.engine.items import Conversation
from agent_cli.engine.session import Session
from agent_cli.frontends.interactive import Interactive
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.plan_card import PlanCard
from agent_cli.frontends.tui.plan_view import PlanView
from agent_cli.settings import load_settings
from agent_cli.tools.plan import Plan, PlanStep
from tests.frontends.tui.support import SIZE, send, settle, shown_text, until
from tests.frontends.tui.test_snapshots import short_conversation_app, steady_cursor
from tests.support.acp_agent import fixture_spec
from tests.support.fake_openai import FakeOpenAI, text, tool_calls

STEPS = [
    {"step": "Read src/app.py", "status": "completed"},
    {"step": "Change greet()", "status": "in_progress"},
    {"step": "Run the tests", "status": "pending"},
]
PLANNED = [{**step, "status": "pending"} for step in STEPS]


def plan_call(steps: list[dict], call_id: str = "call_plan") -> tuple[str, str, str]:
    return (call_id, "update_plan", json.dumps({"plan": steps, "explanation": "Small change."}))


def shown(view: PlanView) -> str:
    return "\n".join(view.render_line(y).text.rstrip() for y in range(view.size.height))


def told(fake: FakeOpenAI, request: int) -> str:
    return fake.requests[request]["messages"][-1]["content"]


async def test_the_plan_is_pinned_above_the_input_as_a_checklist(app: AgentApp, fake: FakeOpenAI):
    fake.add(tool_calls(plan_call(STEPS)), text("On it."))
    async with app.run_test(size=SIZE) as pilot:
        assert not app.plan_view.display, "no plan, no widget"
        await send(pilot, app, "change the greeting")
        await settle(pilot, app)
        view = app.plan_view
        assert view.display and view.plan is not None
        lines = shown(view).splitlines()
        assert lines[0].startswith("Plan 1/3")
        assert lines[1:4] == ["✓ Read src/app.py", "▸ Change greet()", "○ Run the tests"]
        assert "Small change." in lines[4]
        transcript, composer = app.transcript.region, app.composer.region
        assert transcript.bottom <= view.region.y < composer.y, "between the talk and the input"


async def test_a_long_plan_folds_to_the_step_at_hand_and_a_click_unfolds_it(
    app: AgentApp, fake: FakeOpenAI
):
    steps = [
        {"step": f"Step {n}", "status": "completed" if n < 4 else "pending"} for n in range(1, 10)
    ]
    steps[3]["status"] = "in_progress"
    fake.add(tool_calls(plan_call(steps)), text("Going."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "do the nine steps")
        await settle(pilot, app)
        view = app.plan_view
        folded = shown(view)
        assert view.size.height == 1 and "Plan 3/9" in folded and "▸ Step 4" in folded
        assert "Step 5" not in folded and "9 steps" in folded
        await pilot.click(PlanView)
        await pilot.pause()
        unfolded = shown(view)
        assert view.size.height >= 10 and "○ Step 9" in unfolded and "✓ Step 1" in unfolded


async def plan_mode_run(pilot, app: AgentApp, fake: FakeOpenAI) -> None:
    """/plan, then a request: the model tries a write (refused), plans, answers."""
    write = ("call_write", "write_file", json.dumps({"path": "a.txt", "content": "x"}))
    fake.add(tool_calls(write), tool_calls(plan_call(PLANNED)), text("Here is the plan."))
    await send(pilot, app, "/plan")
    await until(pilot, lambda: app.session.mode == "plan")
    await send(pilot, app, "change the greeting")
    await until(pilot, lambda: isinstance(app.screen, PlanCard))


@pytest.mark.parametrize(("key", "mode"), [("a", "ask"), ("u", "auto"), ("f", "full")])
async def test_plan_mode_refuses_a_write_then_the_card_implements_in_the_chosen_mode(
    app: AgentApp, fake: FakeOpenAI, workspace: Path, key: str, mode: str
):
    async with app.run_test(size=SIZE) as pilot:
        await plan_mode_run(pilot, app, fake)
        assert not (workspace / "a.txt").exists()
        refused = told(fake, 1)
        assert "plan mode" in refused and "update_plan" in refused
        assert "write_file" not in {t["function"]["name"] for t in fake.requests[0]["tools"]}
        fake.add(text("Done."))
        await pilot.press(key)
        await until(pilot, lambda: len(fake.requests) == 4)
        await settle(pilot, app)
        assert app.session.mode == mode and app.status.mode == mode
        message = told(fake, 3)
        assert message.startswith("Carry out this plan now")
        assert "- [ ] Change greet()" in message and "- [ ] Run the tests" in message
        assert not isinstance(app.screen, PlanCard), "no card after a run in another mode"


async def test_keep_planning_stays_in_plan_mode_and_sends_nothing(app: AgentApp, fake: FakeOpenAI):
    async with app.run_test(size=SIZE) as pilot:
        await plan_mode_run(pilot, app, fake)
        await pilot.press("k")
        await until(pilot, lambda: not isinstance(app.screen, PlanCard))
        await settle(pilot, app)
        assert app.session.mode == "plan" and len(fake.requests) == 3
        assert "Still in plan mode" in shown_text(app.transcript)
        assert app.plan_view.display, "the plan stays pinned"


async def test_edit_opens_the_plan_in_the_editor_and_implements_the_edited_version(
    app: AgentApp, fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('Run the tests', 'Run all the tests'))\n"
    )
    monkeypatch.setenv("VISUAL", f"{sys.executable} {editor}")
    async with app.run_test(size=SIZE) as pilot:
        await plan_mode_run(pilot, app, fake)
        await pilot.press("e")
        await pilot.pause()
        card = app.screen
        assert isinstance(card, PlanCard) and card.edited, "the card shows the edited plan"
        assert "Run all the tests" in str(card.query_one("#plan-text").render())
        fake.add(text("Done."))
        await pilot.press("f")
        await until(pilot, lambda: len(fake.requests) == 4)
        await settle(pilot, app)
        assert app.session.mode == "full"
        message = told(fake, 3)
        assert message.startswith("I edited the plan") and "Run all the tests" in message
        plan = app.session.conversation.plan
        assert plan is not None and plan.steps[-1] == PlanStep("Run all the tests", "pending")
        assert "Run all the tests" in shown(app.plan_view)


async def test_an_external_agents_acp_plan_is_shown_by_the_same_widget(
    workspace: Path, tmp_path: Path
):
    entries = [["Read the test", "completed"], ["Fix it", "in_progress"]]
    script = {
        "turns": [
            {"steps": [{"op": "plan", "entries": entries}, {"op": "text", "text": "Fixing."}]}
        ]
    }
    agent = ExternalAgent(fixture_spec(script, tmp_path / "agent"), workspace)
    conversation = Conversation(workspace=str(workspace), agent="fixture", mode="full")
    session = Session(conversation, lambda _c: agent, None)
    settings = dataclasses.replace(load_settings(workspace), reduce_motion=True)
    app = AgentApp(Interactive(session, None, lambda c: session), settings)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, app, "fix the test")
            await settle(pilot, app)
            lines = shown(app.plan_view).splitlines()
            assert lines[:3] == ["Plan 1/2", "✓ Read the test", "▸ Fix it"]
    finally:
        await session.aclose()


def test_the_pinned_plan(snap_compare, workspace: Path):
    app = short_conversation_app(workspace, "agent-dark")
    app.session.conversation.plan = Plan(
        (
            PlanStep("Find where the greeting comes from", "completed"),
            PlanStep("Change the f-string in greet()", "in_progress"),
            PlanStep("Run the tests", "pending"),
        ),
        "A one-line change; the tests cover it.",
    )
    assert snap_compare(app, terminal_size=(90, 40), run_before=steady_cursor)


def test_the_plan_card(snap_compare, workspace: Path):
    app = short_conversation_app(workspace, "agent-dark")
    plan = Plan((PlanStep("Change the f-string in greet()"), PlanStep("Run the tests")))
    app.session.conversation.plan = plan

    async def open_the_card(pilot) -> None:
        app.push_screen(PlanCard(plan))
        await steady_cursor(pilot)

    assert snap_compare(app, terminal_size=(90, 30), run_before=open_the_card)
