"""What the model reads of a conversation: items → messages (SPEC §4).

The person's record keeps everything; the model's view is derived here, in
one place: notices are left out, results are capped (head and tail), a
shortened result shows less, arguments that are not a JSON object are shown
as `{}`, and every call the model made gets exactly one result.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from agent_cli.engine.items import AssistantItem, Item, ToolItem, UserItem
from agent_cli.providers.base import Message, ToolCallSpec
from agent_cli.tools.base import MODEL_RESULT_CAP, cap_for_model

# What a shortened result keeps for the model.
SHORTENED_CAP = 1024
NOT_RUN = "This call did not run (the run stopped before it)."


def to_messages(items: Sequence[Item]) -> tuple[Message, ...]:
    messages: list[Message] = []
    results: dict[str, ToolItem] = {
        i.call_id: i for i in items if isinstance(i, ToolItem) and i.state in _FINAL
    }
    for item in items:
        if isinstance(item, UserItem):
            messages.append(Message("user", item.text))
        elif isinstance(item, AssistantItem) and (item.text or item.tool_calls):
            calls = tuple(
                ToolCallSpec(c.id, c.name, arguments_for_model(c.arguments))
                for c in item.tool_calls
            )
            messages.append(Message("assistant", item.text, calls))
            for call in item.tool_calls:
                messages.append(_result_message(call.id, results.get(call.id)))
    return tuple(messages)


_FINAL = ("done", "denied", "error")


def _result_message(call_id: str, item: ToolItem | None) -> Message:
    if item is None:
        return Message("tool", NOT_RUN, tool_call_id=call_id, is_error=True)
    return Message("tool", result_for_model(item), tool_call_id=call_id, is_error=item.is_error)


def result_for_model(item: ToolItem) -> str:
    return cap_for_model(item.result, SHORTENED_CAP if item.shortened else MODEL_RESULT_CAP)


def arguments_for_model(arguments: str) -> str:
    """Arguments as written when they are a JSON object, else `{}` (SPEC §4)."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return "{}"
    return arguments if isinstance(value, dict) and arguments.strip() else "{}"
