"""Messages' JSON kept from one request to the next: a round encodes only its new ones."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from agent_cli.providers.anthropic import encode_messages
from agent_cli.providers.base import Message, Request, ToolCallSpec, ToolSpec
from agent_cli.providers.message_json import MessageJSON, dumps
from agent_cli.providers.openai_wire import encode_chat_request
from agent_cli.providers.responses import encode_responses_request

TOOLS = (ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}}),)


def rounds() -> list[tuple[Message, ...]]:
    """The messages of a conversation's rounds, each round's sent again by the next."""
    messages: list[Message] = [Message("user", "read a, then b — «quoted»")]
    sent = []
    for n, path in enumerate(("a", "b", "a")):
        call = ToolCallSpec(f"c{n}", "read_file", json.dumps({"path": path}))
        result = Message("tool", f"{path}\n" * 50, tool_call_id=call.id)
        messages += [Message("assistant", "", (call,)), result]
        sent.append(tuple(messages))
    shortened = Message("tool", "a\n[... cut ...]", tool_call_id="c0")  # what shortening does
    sent.append((*messages[:2], shortened, *messages[3:], Message("assistant", "Done.")))
    return sent


def test_a_request_encodes_only_the_messages_the_last_one_did_not_have():
    encoded: list[Message] = []

    def encode(message: Message) -> bytes:
        encoded.append(message)
        return dumps(message.content)

    kept = MessageJSON()
    first, second, third, fourth = rounds()
    kept.encode(first, encode)
    assert len(encoded) == 3
    kept.encode(second, encode)
    assert encoded[3:] == list(second[3:])  # the round's call and its result, nothing else
    kept.encode(third, encode)
    encoded.clear()
    fourth_json = kept.encode(fourth, encode)
    assert encoded == [fourth[2], fourth[-1]]  # the shortened result is another message
    assert json.loads(fourth_json[2]) == "a\n[... cut ...]"


Encoder = Callable[[Request, "MessageJSON | None"], bytes]


@pytest.mark.parametrize(
    "encode",
    [
        encode_chat_request,
        lambda request, cache: encode_messages(request, 1024, cache),
        encode_responses_request,
    ],
    ids=["openai", "anthropic", "responses"],
)
def test_each_wire_format_sends_the_same_bytes_with_kept_messages(encode: Encoder):
    kept = MessageJSON()
    for system in ("You help.", ""):
        for tools in (TOOLS, ()):
            for messages in rounds():
                request = Request("model-1", system, messages, tools)
                body = encode(request, kept)
                assert body == encode(request, None)
                assert json.loads(body)["model"] == "model-1"
    empty = Request("model-1", "", (), ())
    assert encode(empty, kept) == encode(empty, None)
