"""Images in the loop: read_file of an image reaches the model, a model that takes none
reads a line instead, and a server that refuses them is told once and the run goes on."""

from __future__ import annotations

import json

from agent_cli.backends.loop import BuiltinLoop, LoopSettings
from agent_cli.backends.prompt import system_prompt
from agent_cli.engine.backend import StopReason
from agent_cli.engine.items import Conversation, NoticeItem, ToolItem
from agent_cli.engine.session import Session
from agent_cli.engine.store import Store
from agent_cli.media import Prompt, image_from_bytes
from agent_cli.providers.openai import OpenAIProvider
from agent_cli.providers.retry import RetryPolicy
from agent_cli.providers.scripted import ScriptedProvider, answer, calls
from agent_cli.tools.base import ToolContext, ToolRegistry
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.workspace import Workspace
from tests.support import fake_openai
from tests.support.images import GIF, JPEG, WEBP, png
from tests.support.sessions import make_session

FAST = RetryPolicy(base=0.01, cap=0.02, jitter="none")


async def test_read_file_of_each_image_type_shows_the_model_the_image(tmp_path):
    files = {"a.png": png(20, 10), "b.jpg": JPEG.read_bytes(), "c.gif": GIF.read_bytes(),
             "d.webp": WEBP.read_bytes()}  # fmt: skip
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    specs = [(f"c{n}", "read_file", json.dumps({"path": name})) for n, name in enumerate(files)]
    session, provider, _ = make_session(tmp_path, [calls(*specs), answer("four images")])
    assert (await session.send("look")).reason is StopReason.ANSWERED
    results = [m for m in provider.requests[1].messages if m.role == "tool"]
    assert [m.images[0].data for m in results] == list(files.values())
    assert [m.images[0].media_type for m in results] == [
        "image/png", "image/jpeg", "image/gif", "image/webp"
    ]  # fmt: skip
    assert results[0].content == "a.png: [image a.png 20×10], " + f"{len(files['a.png'])} bytes."
    item = session.conversation.items[2]
    assert isinstance(item, ToolItem) and item.images[0].name == "a.png"


async def test_an_image_over_the_limit_is_a_result_saying_the_limit(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "PIL", None)
    (tmp_path / "huge.png").write_bytes(png(9000, 2))
    session, provider, _ = make_session(
        tmp_path, [calls(("c1", "read_file", '{"path": "huge.png"}')), answer("ok")]
    )
    await session.send("look")
    result = provider.requests[1].messages[-1]
    assert result.images == () and "over the limit of 5 MB and 8000 pixels a side" in result.content


def loop_over(provider, workspace, takes_images: bool = True):
    def backend(_conversation):
        return BuiltinLoop(
            provider=provider,
            tools=ToolRegistry(builtin_tools()),
            context=ToolContext(Workspace(workspace)),
            settings=LoopSettings("m1", workspace, 10, 128_000, None, takes_images),
            system_prompt=lambda mode: system_prompt(workspace, mode),
        )

    return backend


async def test_a_model_that_takes_no_images_reads_a_line_for_each(tmp_path):
    provider = ScriptedProvider([answer("ok")])
    session = Session(Conversation(str(tmp_path)), loop_over(provider, tmp_path, False), None)
    shot = image_from_bytes(png(8, 8), "shot.png")
    await session.send(Prompt("what is this", images=(shot,)))
    (sent,) = provider.requests[0].messages
    assert sent.images == ()
    line = "[image shot.png 8×8]: not shown — this model does not take images."
    assert sent.content == f"what is this\n{line}"


async def test_a_server_refusing_images_is_told_once_and_the_run_goes_on(tmp_path):
    shot = image_from_bytes(png(8, 8), "shot.png")
    refusal = "Invalid content type. image_url is only supported by certain models."
    with fake_openai.FakeOpenAI(models=["m1"]) as fake:
        fake.add(fake_openai.http_error(400, refusal), fake_openai.text("I cannot see it"))
        fake.add(fake_openai.text("again"))
        async with OpenAIProvider(fake.base_url, "k", retry=FAST) as provider:
            store = Store(tmp_path / "store")
            session = Session(Conversation(str(tmp_path)), loop_over(provider, tmp_path), store)
            result = await session.send(Prompt("what is this", images=(shot,)))
            assert result.reason is StopReason.ANSWERED
            await session.send(Prompt("and this?", images=(shot,)))
        bodies = fake.requests
    assert bodies[0]["messages"][1]["content"][1]["type"] == "image_url"
    for body in bodies[1:]:  # the retry and the next message: no image parts at all
        assert "image_url" not in json.dumps(body)
    assert bodies[1]["messages"][1]["content"] == (
        "what is this\n[image shot.png 8×8]: not shown — this model does not take images."
    )
    notices = [i for i in session.conversation.items if isinstance(i, NoticeItem)]
    assert len(notices) == 1
    assert notices[0].text.startswith("The model refused the images (HTTP 400)")
    assert session.conversation.items[-1].text == "again"
    kept = store.load(session.conversation.id).items[0]
    assert kept.images == (shot,)  # the person's image is kept, only not sent


async def test_an_error_without_images_in_the_request_is_not_taken_for_a_refusal(tmp_path):
    with fake_openai.FakeOpenAI(models=["m1"]) as fake:
        fake.add(fake_openai.http_error(400, "bad image of the world"))
        async with OpenAIProvider(fake.base_url, "k", retry=FAST) as provider:
            session = Session(Conversation(str(tmp_path)), loop_over(provider, tmp_path), None)
            result = await session.send("plain text")
    assert result.reason is StopReason.ERROR
