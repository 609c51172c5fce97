"""What the model reads of a conversation, and keeping it inside the context window (SPEC §4).

The person's record keeps everything; the model's view is derived here, in
one place: notices are left out, results are capped (head and tail), a
shortened result shows less, arguments that are not a JSON object are shown
as `{}`, every call the model made gets exactly one result, and items before
the latest `/compact` summary are replaced by it.

Token counts are estimates (characters / 4): exact counts need the model's
tokenizer, and the estimate only has to say "this will not fit" early; the
service's own refusal is the final word.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from agent_cli.engine.items import (
    AssistantItem,
    Item,
    NoticeItem,
    SummaryItem,
    ToolItem,
    UserItem,
)
from agent_cli.media import Image
from agent_cli.providers.base import Message, ToolCallSpec
from agent_cli.tools.base import MODEL_RESULT_CAP, cap_for_model

# What a shortened result keeps for the model.
SHORTENED_CAP = 1024
NOT_RUN = "This call did not run (the run stopped before it)."
FINAL = ("done", "denied", "error")  # a call's states once it has its result
SUMMARY_HEADER = "[A summary of the earlier conversation, which was compacted]\n"
NOTE_HEADER = "[A note from the agent program, not written by the person]\n"
CHARS_PER_TOKEN = 4
ITEM_OVERHEAD_TOKENS = 8  # role markers and framing around each message
DEFAULT_CONTEXT_WINDOW = 128_000
# Room kept free for the answer when judging whether a request fits.
ANSWER_RESERVE = 0.15
# An image's tokens: about one per 750 pixels, services scale big ones down to ~1,600.
PIXELS_PER_TOKEN = 750
MAX_IMAGE_TOKENS = 1600

# Context windows of well-known models, for servers that do not say (prefix match).
KNOWN_WINDOWS = (
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-5", 400_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("claude", 200_000),
    ("gemini", 1_048_576),
    ("deepseek", 128_000),
    ("qwen3", 131_072),
    ("qwen2.5", 32_768),
    ("llama-3.", 131_072),  # 3.1 and later; plain Llama 3 has 8k
    ("llama3.", 131_072),
    ("llama-3", 8_192),
    ("llama3", 8_192),
    ("mistral", 32_768),
)


def context_window(model: str, configured: int | None, served: int | None) -> int:
    """Config first, then what the server says, then the table, then a default."""
    return known_context_window(model, configured, served) or DEFAULT_CONTEXT_WINDOW


def known_context_window(model: str, configured: int | None, served: int | None) -> int | None:
    """The window when config, the server or the table knows it (None: a guess would be shown)."""
    if configured:
        return configured
    if served:
        return served
    name = model.lower().rpartition("/")[2]
    return next((window for prefix, window in KNOWN_WINDOWS if name.startswith(prefix)), None)


def sent_items(items: Sequence[Item]) -> Sequence[Item]:
    """The items the model reads: from the latest summary on."""
    for index in range(len(items) - 1, -1, -1):
        if isinstance(items[index], SummaryItem):
            return items[index:]
    return items


def to_messages(items: Sequence[Item]) -> tuple[Message, ...]:
    sent = sent_items(items)
    return tuple(message for index in range(len(sent)) for message in item_messages(sent, index))


def item_messages(items: Sequence[Item], index: int) -> list[Message]:
    """The messages the item at `index` stands for: a user message or a summary, or an
    answer followed by one result for each of its calls (a notice for the model: a user
    message; other notices and calls: none)."""
    item = items[index]
    if isinstance(item, UserItem):
        return [user_message(item)]
    if isinstance(item, SummaryItem):
        return [Message("user", SUMMARY_HEADER + item.text)]
    if isinstance(item, NoticeItem) and item.for_model:
        return [Message("user", NOTE_HEADER + item.text)]
    if isinstance(item, AssistantItem) and (item.text or item.tool_calls):
        return answer_messages(item, call_results(items, index))
    return []


def user_message(item: UserItem) -> Message:
    """The person's text, then what they attached to it; their images beside it."""
    parts = [item.text, *(a.for_model() for a in item.attachments)]
    images, missing = present_images(item.images)
    return Message("user", "\n\n".join(p for p in [*parts, *missing] if p), images=images)


def present_images(images: tuple[Image, ...]) -> tuple[tuple[Image, ...], list[str]]:
    """The images whose bytes are there, and a note for each that is not."""
    if all(image.data for image in images):
        return images, []
    gone = "its stored file is gone, so it is not shown."
    notes = [f"{image.label}: {gone}" for image in images if not image.data]
    return tuple(image for image in images if image.data), notes


def call_results(items: Sequence[Item], index: int) -> dict[str, ToolItem]:
    """The finished calls of the answer at `index`, by call id: its round's tool items,
    which come after it and before the next answer (a model may use an id again)."""
    results: dict[str, ToolItem] = {}
    for at in range(index + 1, len(items)):
        item = items[at]
        if isinstance(item, AssistantItem):
            break
        if isinstance(item, ToolItem) and item.state in FINAL:
            results[item.call_id] = item
    return results


def answer_messages(item: AssistantItem, results: dict[str, ToolItem]) -> list[Message]:
    calls = tuple(
        ToolCallSpec(c.id, c.name, arguments_for_model(c.arguments)) for c in item.tool_calls
    )
    messages = [Message("assistant", item.text, calls)]
    messages += (result_message(call.id, results.get(call.id)) for call in item.tool_calls)
    return messages


def result_message(call_id: str, item: ToolItem | None) -> Message:
    if item is None:
        return Message("tool", NOT_RUN, tool_call_id=call_id, is_error=True)
    text, images = result_for_model(item), tuple[Image, ...]()
    if item.images and item.shortened:
        text += "".join(f"\n{i.label} left out to save room." for i in item.images)
    elif item.images:
        images, missing = present_images(item.images)
        text = "\n".join([text, *missing])
    return Message("tool", text, tool_call_id=call_id, is_error=item.is_error, images=images)


def result_for_model(item: ToolItem) -> str:
    return cap_for_model(item.result, SHORTENED_CAP if item.shortened else MODEL_RESULT_CAP)


def arguments_for_model(arguments: str) -> str:
    """Arguments as written when they are a JSON object, else `{}` (SPEC §4)."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return "{}"
    return arguments if isinstance(value, dict) and arguments.strip() else "{}"


# ----------------------------------------------------------------- estimates


def estimate_item(item: Item) -> int:
    """Tokens the model reads for one item: O(1), from lengths alone."""
    images = 0
    if isinstance(item, ToolItem):
        cap = SHORTENED_CAP if item.shortened else MODEL_RESULT_CAP
        chars = min(len(item.result), cap) + len(item.args)
        images = 0 if item.shortened else image_tokens(item.images)
    elif isinstance(item, AssistantItem):
        chars = len(item.text) + sum(len(c.arguments) + len(c.name) for c in item.tool_calls)
    elif isinstance(item, UserItem):
        chars = len(item.text) + sum(len(a.text) + len(a.label) for a in item.attachments)
        images = image_tokens(item.images)
    elif isinstance(item, SummaryItem):
        chars = len(item.text)
    elif isinstance(item, NoticeItem) and item.for_model:
        chars = len(NOTE_HEADER) + len(item.text)
    else:
        return 0  # other notices are not sent
    return chars // CHARS_PER_TOKEN + ITEM_OVERHEAD_TOKENS + images


def image_tokens(images: tuple[Image, ...]) -> int:
    return sum(
        min(image.width * image.height // PIXELS_PER_TOKEN, MAX_IMAGE_TOKENS) for image in images
    )


def estimate(system: str, items: Sequence[Item], tools_chars: int = 0) -> int:
    """Tokens of a whole request, estimated."""
    sent = sent_items(items)
    return (len(system) + tools_chars) // CHARS_PER_TOKEN + sum(map(estimate_item, sent))


def fits(tokens: int, window: int) -> bool:
    return tokens <= window * (1 - ANSWER_RESERVE)


def shorten_oldest(items: Sequence[Item]) -> ToolItem | None:
    """Mark the oldest long, not yet shortened tool result as shortened; None if none is left.

    User messages are never touched; a shortened result still answers its call,
    so no call/result pair is ever split.
    """
    for item in sent_items(items):
        if shortenable(item):
            assert isinstance(item, ToolItem)
            item.shortened = True
            return item
    return None


def can_shorten(items: Sequence[Item]) -> bool:
    """Whether `shorten_oldest` would find something to shorten."""
    return any(shortenable(item) for item in sent_items(items))


def shortenable(item: Item) -> bool:
    """A long tool result the model still reads whole."""
    return isinstance(item, ToolItem) and not item.shortened and len(item.result) > SHORTENED_CAP


def compaction_cut(items: Sequence[Item], keep_turns: int) -> int:
    """Where a summary can stand: before the user message that starts the last
    `keep_turns` turns. Cutting before a user message never splits a call from
    its result. 0 when there is nothing older to summarise."""
    sent = sent_items(items)
    offset = len(items) - len(sent)
    starts = [i for i, item in enumerate(sent) if isinstance(item, UserItem)]
    if len(starts) <= keep_turns:
        return 0
    cut = starts[-keep_turns] if keep_turns else len(sent)
    return offset + cut if cut > (1 if isinstance(sent[0], SummaryItem) else 0) else 0
