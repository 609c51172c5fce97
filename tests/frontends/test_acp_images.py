"""`agent acp` takes image blocks: advertised, sent to the model, kept and replayed."""

from __future__ import annotations

import base64

import pytest
from acp import RequestError, image_block, text_block

from tests.frontends.test_acp_server import Editor, serving
from tests.support.cli import saved
from tests.support.fake_openai import text
from tests.support.images import png

SHOT = png(20, 12)
B64 = base64.b64encode(SHOT).decode()


async def test_an_image_block_reaches_the_model_and_a_load_replays_it(fake, workspace):
    fake.add(text("A small red picture."))
    editor = Editor()
    async with serving(workspace, fake, editor) as (conn, hello):
        assert hello.agent_capabilities.prompt_capabilities.image is True
        session = (await conn.new_session(cwd=str(workspace))).session_id
        answer = await conn.prompt(
            session_id=session,
            prompt=[text_block("what is this?"), image_block(B64, "image/png")],
        )
        assert answer.stop_reason == "end_turn"
        assert fake.requests[0]["messages"][-1]["content"] == [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + B64}},
        ]
        with pytest.raises(RequestError, match="not a PNG, JPEG, GIF or WebP"):
            await conn.prompt(session_id=session, prompt=[image_block("aGVsbG8=", "image/png")])
    (stored,) = saved()
    assert stored["items"][0]["images"][0]["width"] == 20  # by reference: no base64 in it
    assert B64[:40] not in str(stored)

    again = Editor()
    async with serving(workspace, fake, again) as (conn, _):
        await conn.load_session(cwd=str(workspace), session_id=session)
        chunks = again.of("user_message_chunk")
        assert chunks[0].content.text == "what is this?"
        assert (chunks[1].content.type, chunks[1].content.data) == ("image", B64)
