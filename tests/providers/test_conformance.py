"""One conversation through all three wire formats: the loop cannot tell them apart.

The same scripted exchange — reasoning and text, a tool call, its result sent
back, the answer — is served by the OpenAI, Anthropic and Responses fakes and
run through a real Session and BuiltinLoop with the real provider for each.
Everything the Session publishes (events and the items they carry) must be the
same, ids aside; and each format must have sent the tool result back its own way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import pytest

from agent_cli.backends.loop import BuiltinLoop, LoopSettings
from agent_cli.backends.prompt import system_prompt
from agent_cli.engine.backend import Backend, StopReason
from agent_cli.engine.events import Event
from agent_cli.engine.items import Conversation, item_to_json
from agent_cli.engine.session import Session
from agent_cli.providers.anthropic import AnthropicProvider
from agent_cli.providers.base import (
    Finished,
    Message,
    Request,
    StreamEvent,
    TextDelta,
    ToolCallFinished,
)
from agent_cli.providers.http_common import StreamingProvider
from agent_cli.providers.openai import OpenAIProvider
from agent_cli.providers.responses import ResponsesProvider
from agent_cli.tools.base import ToolContext, ToolRegistry
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.workspace import Workspace
from tests.support import fake_anthropic, fake_openai, fake_responses

ARGUMENTS = json.dumps({"path": "notes.txt"})
CALL_ID = "call_1"


class Wire(NamedTuple):
    name: str
    fake: Callable[[], fake_openai.FakeOpenAI]
    builders: ModuleType  # text(), tool_calls()
    provider: Callable[[str], OpenAIProvider | StreamingProvider]


WIRES = [
    Wire("openai", fake_openai.FakeOpenAI, fake_openai, OpenAIProvider),
    Wire("anthropic", fake_anthropic.FakeAnthropic, fake_anthropic, AnthropicProvider),
    Wire("responses", fake_responses.FakeResponses, fake_responses, ResponsesProvider),
]


def script(builders: ModuleType) -> list[Any]:
    """Round one: a sentence and a read_file call; round two: reasoning, then the answer."""
    return [
        builders.tool_calls((CALL_ID, "read_file", ARGUMENTS), text="Let me look at the notes."),
        builders.text("The notes say hello.", reasoning="The file has one line.", usage=(30, 6)),
    ]


class Recorded(NamedTuple):
    events: list[dict[str, Any]]  # each event's JSON, taken when it was published
    items: list[dict[str, Any]]
    result: StopReason
    requests: list[dict[str, Any]]


async def converse(wire: Wire, workspace: Path) -> Recorded:
    """Run the scripted conversation through a real Session on `wire`'s fake and provider."""
    with wire.fake() as fake:
        fake.add(*script(wire.builders))
        provider = wire.provider(fake.base_url)
        registry = ToolRegistry(builtin_tools())

        def backend(_conversation: Conversation) -> Backend:
            return BuiltinLoop(
                provider=provider,
                tools=registry,
                context=ToolContext(Workspace(workspace)),
                settings=LoopSettings("m1", workspace),
                system_prompt=lambda mode: system_prompt(workspace, mode),
            )

        session = Session(Conversation(workspace=str(workspace), mode="ask"), backend, None)
        seen: list[dict[str, Any]] = []

        def record(event: Event) -> None:
            data = event.to_json()
            last = seen[-1] if seen else {}
            if data["type"] == "delta" and last.get("type") == "delta" and same_kind(last, data):
                # One network read or several: `Run.delta` joins what one loop turn brings.
                for key in ("text", "reasoning"):
                    if key in data:
                        last[key] = last.get(key, "") + data[key]
                return
            seen.append(data)

        session.events.subscribe(record)
        try:
            result = await session.send("What do the notes say?")
        finally:
            await session.aclose()
            await provider.aclose()
        conversation = session.conversation
        ids = {conversation.id: "conversation"}
        ids.update((item.id, f"item {n}") for n, item in enumerate(conversation.items))
        turns = (getattr(item, "turn", "") for item in conversation.items)
        ids.update((turn, f"turn {n}") for n, turn in enumerate(turns) if turn)
        items = [item_to_json(item) for item in conversation.items]
        return Recorded(
            _without_ids(seen, ids), _without_ids(items, ids), result.reason, fake.requests
        )


def _without_ids(value: Any, ids: dict[str, str]) -> Any:
    """`value` with every item and conversation id replaced by its position."""
    if isinstance(value, dict):
        return {key: _without_ids(inner, ids) for key, inner in value.items()}
    if isinstance(value, list):
        return [_without_ids(inner, ids) for inner in value]
    if isinstance(value, str):
        return ids.get(value, value)
    return value


def same_kind(one: dict[str, Any], other: dict[str, Any]) -> bool:
    """Deltas of the same item, both text or both reasoning."""
    return one["item"] == other["item"] and ("text" in one) == ("text" in other)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("hello\n")
    return tmp_path


async def test_the_same_conversation_gives_the_same_events_and_items(workspace: Path) -> None:
    runs = {wire.name: await converse(wire, workspace) for wire in WIRES}
    reference = runs["openai"]
    assert reference.result is StopReason.ANSWERED
    kinds = [item["kind"] for item in reference.items]
    assert kinds == ["user", "assistant", "tool", "assistant"]
    tool = reference.items[2]
    assert (tool["call_id"], tool["args"], tool["state"]) == (CALL_ID, ARGUMENTS, "done")
    assert reference.items[3]["reasoning"] == "The file has one line."
    deltas = [e for e in reference.events if e["type"] == "delta"]
    assert "".join(e.get("reasoning", "") for e in deltas) == "The file has one line."
    for name in ("anthropic", "responses"):
        assert runs[name].items == reference.items, name
        assert runs[name].events == reference.events, name
        assert runs[name].result is reference.result

    # Each format sent the result back in its own shape, with the same text.
    result_text = tool["result"]
    openai_sent = reference.requests[1]["messages"][-1]
    assert openai_sent == {"role": "tool", "tool_call_id": CALL_ID, "content": result_text}
    anthropic_sent = runs["anthropic"].requests[1]["messages"][-1]
    assert anthropic_sent["role"] == "user"
    assert anthropic_sent["content"] == [
        {"type": "tool_result", "tool_use_id": CALL_ID, "content": result_text, "is_error": False}
    ]
    responses_sent = runs["responses"].requests[1]["input"][-1]
    assert responses_sent == {
        "type": "function_call_output",
        "call_id": CALL_ID,
        "output": result_text,
    }


@pytest.mark.parametrize("wire", WIRES[1:], ids=lambda wire: wire.name)
async def test_truncated_call_at_the_length_limit_is_the_same_everywhere(wire: Wire) -> None:
    """A stream cut by the length limit mid-call: every provider reports the same events."""
    cut = '{"path": "no'
    bodies = {
        "anthropic": fake_anthropic.message_start()
        + fake_anthropic.block_start(
            0, {"type": "tool_use", "id": CALL_ID, "name": "ls", "input": {}}
        )
        + fake_anthropic.delta(0, "input_json_delta", "partial_json", cut)
        + fake_anthropic.ending("max_tokens"),
        "responses": fake_responses.events(
            fake_responses.frame(
                "response.output_item.added",
                output_index=0,
                item={"type": "function_call", "id": "fc", "call_id": CALL_ID, "name": "ls"},
            ),
            fake_responses.frame(
                "response.function_call_arguments.delta", output_index=0, delta=cut
            ),
        )
        + fake_responses.completed(
            status="incomplete", incomplete_details={"reason": "max_output_tokens"}
        ),
    }
    openai_body = fake_openai.frames(
        fake_openai.chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": CALL_ID, "function": {"name": "ls", "arguments": cut}}
                ]
            }
        ),
        fake_openai.chunk({}, finish_reason="length"),
        fake_openai.chunk(None, usage=(10, 5)),
    )
    streams: list[list[StreamEvent]] = []
    for make_fake, body, make in (
        (fake_openai.FakeOpenAI, openai_body, OpenAIProvider),
        (wire.fake, bodies[wire.name], wire.provider),
    ):
        with make_fake() as fake:
            fake.add(fake_openai.raw(body))
            async with make(fake.base_url) as provider:
                request = Request("m1", "", (Message("user", "hi"),))
                streams.append([event async for event in provider.stream(request)])
    assert streams[0] == streams[1]
    assert ToolCallFinished(0, CALL_ID, "ls", cut) in streams[0]
    assert streams[0][-1] == Finished("length") and TextDelta not in map(type, streams[0])
