"""The plan over ACP (issue 16, item 3): `agent acp` in a subprocess, driven by the SDK's
client side, sends `plan` updates (live and on session/load) and offers plan mode."""

from __future__ import annotations

import json

from acp import text_block

from tests.frontends.test_acp_server import Editor, serving, told
from tests.support.fake_openai import text, tool_calls

STEPS = [
    {"step": "Read the parser", "status": "completed"},
    {"step": "Fix the off-by-one", "status": "in_progress"},
    {"step": "Run the tests", "status": "pending"},
]


def plan_call(steps: list[dict], call_id: str = "call_plan") -> tuple[str, str, str]:
    return (call_id, "update_plan", json.dumps({"plan": steps}))


def entries(update) -> list[tuple[str, str, str]]:
    return [(e.content, e.status, e.priority) for e in update.entries]


async def test_the_plan_goes_to_the_editor_as_plan_updates_and_again_on_load(fake, workspace):
    done = [{**step, "status": "completed"} for step in STEPS]
    fake.add(tool_calls(plan_call(STEPS)), tool_calls(plan_call(done, "call_2")), text("Done."))
    editor = Editor()
    async with serving(workspace, fake, editor) as (conn, _):
        session = (await conn.new_session(cwd=str(workspace))).session_id
        answer = await conn.prompt(session_id=session, prompt=[text_block("fix it")])
        assert answer.stop_reason == "end_turn"
        first, last = editor.of("plan")
        assert entries(first) == [
            ("Read the parser", "completed", "medium"),
            ("Fix the off-by-one", "in_progress", "high"),
            ("Run the tests", "pending", "medium"),
        ]
        assert [status for _, status, _ in entries(last)] == ["completed"] * 3
        calls = [c for c in editor.calls() if c.title.startswith("Update the plan")]
        assert calls and calls[0].kind == "think"

    again = Editor()
    async with serving(workspace, fake, again) as (conn, _):
        await conn.load_session(cwd=str(workspace), session_id=session)
        (replayed,) = again.of("plan")
        assert entries(replayed) == entries(last)


async def test_plan_mode_is_offered_and_refuses_a_write_naming_plan_mode(fake, workspace):
    write = ("call_write", "write_file", json.dumps({"path": "a.txt", "content": "x"}))
    planned = [{**step, "status": "pending"} for step in STEPS]
    fake.add(tool_calls(write), tool_calls(plan_call(planned)), text("Here is the plan."))
    editor = Editor()
    async with serving(workspace, fake, editor) as (conn, _):
        opened = await conn.new_session(cwd=str(workspace))
        plan_mode = next(m for m in opened.modes.available_modes if m.id == "plan")
        assert "plan" in (plan_mode.description or "")
        await conn.set_session_mode(mode_id="plan", session_id=opened.session_id)
        await conn.prompt(session_id=opened.session_id, prompt=[text_block("fix it")])
        assert not (workspace / "a.txt").exists()
        assert "plan mode" in told(fake, 1)
        (plan,) = editor.of("plan")
        assert [content for content, _, _ in entries(plan)] == [s["step"] for s in STEPS]
        assert editor.permissions == [], "refused by the mode: nobody is asked"
        tools = {t["function"]["name"] for t in fake.requests[0]["tools"]}
        assert "update_plan" in tools and "write_file" not in tools
