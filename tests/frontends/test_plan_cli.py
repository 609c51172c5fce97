"""The plan in `agent run` (issue 16, item 3): text prints it when it changes, stream-json
has a `plan` event, json a `plan` field, and `--mode plan` reads, prints the plan, exits."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import agent, err, out
from tests.support.fake_openai import FakeOpenAI, text, tool_calls

STEPS = [
    {"step": "Read the parser", "status": "completed"},
    {"step": "Fix the off-by-one", "status": "in_progress"},
    {"step": "Run the tests", "status": "pending"},
]


def plan_call(steps: list[dict], call_id: str = "call_plan") -> tuple[str, str, str]:
    return (call_id, "update_plan", json.dumps({"plan": steps}))


def test_text_output_prints_the_plan_when_it_changes(fake: FakeOpenAI, workspace: Path):
    done = [{**step, "status": "completed"} for step in STEPS]
    fake.add(tool_calls(plan_call(STEPS)), tool_calls(plan_call(done, "call_2")), text("All done."))
    result = agent(workspace, "run", "--mode", "full", "fix the parser", fake=fake)
    assert result.returncode == 0, err(result)
    assert out(result).strip() == "All done.", "the answer alone on stdout"
    said = err(result)
    assert "Plan 1/3:\n  ✓ Read the parser\n  ▸ Fix the off-by-one\n  ○ Run the tests" in said
    assert "Plan 3/3:\n  ✓ Read the parser\n  ✓ Fix the off-by-one\n  ✓ Run the tests" in said


def test_stream_json_has_a_plan_event_and_json_a_plan_field(fake: FakeOpenAI, workspace: Path):
    fake.add(tool_calls(plan_call(STEPS)), text("Working."))
    result = agent(workspace, "run", "-o", "stream-json", "--mode", "full", "go", fake=fake)
    assert result.returncode == 0, err(result)
    lines = [json.loads(line) for line in out(result).splitlines()]
    plans = [line for line in lines if line["type"] == "plan"]
    assert plans == [{"type": "plan", "steps": STEPS, "explanation": ""}]
    types = [line["type"] for line in lines]
    assert types.index("plan") < types.index("run_finished") < types.index("result")
    assert lines[-1]["plan"] == {"steps": STEPS, "explanation": ""}

    fake.add(text("Still."))
    result = agent(workspace, "run", "-o", "json", "--continue", "and now?", fake=fake)
    data = json.loads(out(result))
    assert data["plan"]["steps"] == STEPS, "the plan is the conversation's: it carries on"


def test_mode_plan_headless_refuses_a_write_prints_the_plan_and_exits(
    fake: FakeOpenAI, workspace: Path
):
    planned = [{**step, "status": "pending"} for step in STEPS]
    write = ("call_write", "write_file", json.dumps({"path": "a.txt", "content": "x"}))
    fake.add(tool_calls(write), tool_calls(plan_call(planned)), text("The fix is small."))
    result = agent(workspace, "run", "--mode", "plan", "fix the parser", fake=fake)
    assert result.returncode == 0, err(result)
    assert not (workspace / "a.txt").exists()
    refused = fake.requests[1]["messages"][-1]["content"]
    assert "plan mode" in refused
    assert out(result) == (
        "The fix is small.\n\n## Plan\n\n"
        "- [ ] Read the parser\n- [ ] Fix the off-by-one\n- [ ] Run the tests\n"
    )
    assert "Plan 0/3:" not in err(result), "printed once, as the answer"
    assert len(fake.requests) == 3, "no card, nothing carried out: it exits"
    assert "Mode: plan" in fake.requests[0]["messages"][0]["content"]
