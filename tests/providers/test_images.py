"""A real PNG through each provider's loopback fake: the request bodies hold each API's
own part shape, for a person's image and for a tool's."""

from __future__ import annotations

import base64

from agent_cli.media import image_from_bytes
from agent_cli.providers.anthropic import AnthropicProvider
from agent_cli.providers.base import Message, ModelInfo, Request, ToolCallSpec
from agent_cli.providers.images import takes_images, without_images
from agent_cli.providers.openai import OpenAIProvider
from agent_cli.providers.responses import ResponsesProvider
from agent_cli.providers.retry import RetryPolicy
from tests.support import fake_anthropic, fake_openai, fake_responses
from tests.support.images import png

FAST = RetryPolicy(base=0.01, cap=0.02, jitter="none")
PNG = png(32, 24)
B64 = base64.b64encode(PNG).decode()
URI = "data:image/png;base64," + B64
SHOT = image_from_bytes(PNG, "shot.png")
CALL = ToolCallSpec("c1", "read_file", '{"path":"shot.png"}')
OTHER = ToolCallSpec("c2", "read_file", '{"path":"a.txt"}')
WITH_IMAGES = Request(
    model="m1",
    system="",
    messages=(
        Message("user", "what is this", images=(SHOT,)),
        Message("assistant", "", (CALL, OTHER)),
        Message("tool", "shot.png: [image shot.png 32×24]", tool_call_id="c1", images=(SHOT,)),
        Message("tool", "text", tool_call_id="c2"),
        Message("user", "and now?"),
    ),
)


async def drain(provider, request: Request) -> None:
    async for _ in provider.stream(request):
        pass


async def test_openai_chat_sends_image_url_parts_and_a_tools_image_after_the_results():
    with fake_openai.FakeOpenAI(models=["m1"]) as fake:
        fake.add(fake_openai.text("ok"))
        async with OpenAIProvider(fake.base_url, "k", retry=FAST) as provider:
            await drain(provider, WITH_IMAGES)
        messages = fake.requests[0]["messages"]
    assert messages[0] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is this"},
            {"type": "image_url", "image_url": {"url": URI}},
        ],
    }
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "shot.png: [image shot.png 32×24]",
    }
    assert messages[4] == {  # after both results: chat wants them right after the call
        "role": "user",
        "content": [
            {"type": "text", "text": "The images the call c1 returned:"},
            {"type": "image_url", "image_url": {"url": URI}},
        ],
    }
    assert messages[5] == {"role": "user", "content": "and now?"}


async def test_anthropic_sends_image_blocks_and_images_inside_the_tool_result():
    with fake_anthropic.FakeAnthropic(models=["m1"]) as fake:
        fake.add(fake_anthropic.text("ok"))
        async with AnthropicProvider(fake.base_url, "k", retry=FAST) as provider:
            await drain(provider, WITH_IMAGES)
        messages = fake.requests[0]["messages"]
    source = {"type": "base64", "media_type": "image/png", "data": B64}
    assert messages[0] == {
        "role": "user",
        "content": [{"type": "image", "source": source}, {"type": "text", "text": "what is this"}],
    }
    assert messages[2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": [
            {"type": "text", "text": "shot.png: [image shot.png 32×24]"},
            {"type": "image", "source": source},
        ],
        "is_error": False,
    }
    assert messages[2]["content"][1]["content"] == "text"  # a result without images: text
    assert messages[2]["content"][2] == {"type": "text", "text": "and now?"}


async def test_responses_sends_input_image_parts_and_a_tools_image_after_the_outputs():
    with fake_responses.FakeResponses(models=["m1"]) as fake:
        fake.add(fake_responses.text("ok"))
        async with ResponsesProvider(fake.base_url, "k", retry=FAST) as provider:
            await drain(provider, WITH_IMAGES)
        items = fake.requests[0]["input"]
    assert items[0] == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "what is this"},
            {"type": "input_image", "image_url": URI},
        ],
    }
    kinds = [item.get("type", item.get("role")) for item in items]
    assert kinds == [
        "user", "function_call", "function_call", "function_call_output",
        "function_call_output", "user", "user",
    ]  # fmt: skip
    assert items[5] == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "The images the call c1 returned:"},
            {"type": "input_image", "image_url": URI},
        ],
    }


def test_a_model_that_takes_no_images_reads_a_line_for_each():
    (user, *_rest) = without_images(WITH_IMAGES.messages)
    assert user == Message(
        "user", "what is this\n[image shot.png 32×24]: not shown — this model does not take images."
    )


def test_whether_a_model_takes_images_config_first_then_the_listing():
    vision = ModelInfo("m", extra={"architecture": {"input_modalities": ["text", "image"]}})
    text_only = ModelInfo("m", extra={"architecture": {"input_modalities": ["text"]}})
    assert takes_images(None, ModelInfo("m")) is True  # the default: send, a refusal is heard
    assert takes_images(None, vision) is True
    assert takes_images(None, text_only) is False
    assert takes_images(False, vision) is False
    assert takes_images(True, text_only) is True
