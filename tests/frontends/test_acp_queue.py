"""`agent acp`: a session/prompt that comes while one runs waits its turn (issue 16),
and session/cancel ends the running one and every one waiting."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

from acp import text_block

from tests.frontends.test_acp_server import Editor, serving, told
from tests.support.fake_openai import FakeOpenAI, Scripted, chunk, frames, text
from tests.support.waiting import GENEROUS, eventually


def held(answer: str, gate: threading.Event) -> Scripted:
    """An answer whose first frame comes at once and the rest only once `gate` is set."""
    whole = text(answer).body
    first = frames(chunk({"role": "assistant", "content": ""}, model="m1"), done=False)
    assert whole.startswith(first)

    def rest() -> Iterator[bytes]:
        gate.wait(GENEROUS)
        yield whole[len(first) :]

    return Scripted(first, more=rest)


async def test_a_prompt_during_a_run_is_queued_and_answered_in_its_turn(
    fake: FakeOpenAI, workspace
):
    gate = threading.Event()
    fake.add(held("First answer.", gate), text("Second answer."))
    editor = Editor()
    async with serving(workspace, fake, editor) as (conn, _):
        session = (await conn.new_session(cwd=str(workspace))).session_id
        first = asyncio.ensure_future(conn.prompt(session_id=session, prompt=[text_block("one")]))
        await eventually(lambda: len(fake.requests) == 1, "the first request")
        second = asyncio.ensure_future(conn.prompt(session_id=session, prompt=[text_block("two")]))
        gate.set()  # before the change, "two" failed at once: a run was going on
        answers = await asyncio.wait_for(asyncio.gather(first, second), GENEROUS)
        assert [a.stop_reason for a in answers] == ["end_turn", "end_turn"]
        assert len(fake.requests) == 2 and told(fake, 1) == "two"
        users = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "user"]
        assert users == ["one", "two"]  # in order, each its own turn
        assert editor.said() == "First answer.Second answer."


async def test_cancel_ends_the_running_prompt_and_the_waiting_ones(fake: FakeOpenAI, workspace):
    gate = threading.Event()
    fake.add(held("Never finished.", gate), text("After the cancel."))
    editor = Editor()
    try:
        async with serving(workspace, fake, editor) as (conn, _):
            session = (await conn.new_session(cwd=str(workspace))).session_id
            first = asyncio.ensure_future(
                conn.prompt(session_id=session, prompt=[text_block("one")])
            )
            await eventually(lambda: len(fake.requests) == 1, "the first request")
            waiting = asyncio.ensure_future(
                conn.prompt(session_id=session, prompt=[text_block("two")])
            )
            # One turn of the loop lets the prompt's task put its request on the wire (the
            # SDK sends in order), so the agent reads "two" before the cancel.
            await asyncio.sleep(0)
            await conn.cancel(session_id=session)
            answers = await asyncio.wait_for(asyncio.gather(first, waiting), GENEROUS)
            assert [a.stop_reason for a in answers] == ["cancelled", "cancelled"]
            assert len(fake.requests) == 1  # the waiting prompt never reached the model
            later = await conn.prompt(session_id=session, prompt=[text_block("three")])
            assert later.stop_reason == "end_turn" and told(fake, 1) == "three"
    finally:
        gate.set()
