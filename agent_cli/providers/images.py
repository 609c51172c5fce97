"""Images in requests: what goes to a model that takes none, and a refusal recognised.

Chat-style APIs (OpenAI chat, Responses) take a tool's result as text only, so
a tool's images go in a user message after the round's results (`after_results`);
Anthropic puts them inside the `tool_result` block itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from agent_cli.providers.base import Message, ModelInfo

# An error answer about images: "does not support image input", "vision is not
# enabled", "image_url is only supported by certain models", "multimodal"...
_REFUSAL = re.compile(r"image|vision|multi-?modal", re.IGNORECASE)
REFUSED_NOTICE = (
    "The model refused the images ({reason}); the run goes on without them. Set "
    "`images = false` for this provider in the config to stop sending them."
)
NOT_SENT = "{label}: not shown — this model does not take images."


def takes_images(configured: bool | None, model: ModelInfo) -> bool:
    """The config's word first (`images = false`), then what a listing says of the
    model (OpenRouter's `architecture.input_modalities`); else yes, and a refusal is
    recognised (`images_refused`) and said once."""
    if configured is not None:
        return configured
    architecture = (model.extra or {}).get("architecture")
    modalities = architecture.get("input_modalities") if isinstance(architecture, dict) else None
    if isinstance(modalities, list) and modalities:
        return "image" in modalities
    return True


def images_refused(status: int, text: str) -> bool:
    """Whether an error answer to a request with images means "no images here"."""
    return status in (400, 404, 415, 422, 500) and _REFUSAL.search(text) is not None


def has_images(messages: Sequence[Message]) -> bool:
    return any(message.images for message in messages)


def without_images(messages: Sequence[Message]) -> tuple[Message, ...]:
    """The messages with each image replaced by a line saying it was not shown."""
    return tuple(
        message._replace(
            content="\n".join(
                [message.content, *(NOT_SENT.format(label=i.label) for i in message.images)]
            ).strip("\n"),
            images=(),
        )
        if message.images
        else message
        for message in messages
    )


def after_results(
    messages: Sequence[Message],
    encoded: list[bytes],
    followup: Callable[[list[Message]], bytes],
) -> list[bytes]:
    """`encoded` (one entry per message) with, after each run of tool results that had
    images, the user message `followup` makes of those results."""
    if not any(m.images for m in messages if m.role == "tool"):
        return encoded
    out: list[bytes] = []
    waiting: list[Message] = []
    for message, data in zip(messages, encoded, strict=True):
        if waiting and message.role != "tool":
            out.append(followup(waiting))
            waiting = []
        out.append(data)
        if message.role == "tool" and message.images:
            waiting.append(message)
    if waiting:
        out.append(followup(waiting))
    return out


def followup_text(message: Message) -> str:
    """The text before a tool's images in the user message that carries them."""
    return f"The images the call {message.tool_call_id} returned:"
