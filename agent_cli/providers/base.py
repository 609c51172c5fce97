"""The one small protocol the loop knows providers by.

A request goes in; an async stream of typed events comes out. Providers speak
HTTP and wire formats only: they know nothing of what tools mean.

The records are NamedTuples rather than frozen dataclasses: as immutable, but
about six times cheaper to define (this module is on every run's startup
path) and cheaper to create, which matters once per streamed token. Dispatch
on them by `type(event) is TextDelta`, never by equality (tuples of the same
values compare equal across types).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

if TYPE_CHECKING:
    from agent_cli.media import Image

Role = Literal["user", "assistant", "tool"]


class ToolCallSpec(NamedTuple):
    """A tool call as the model wrote it; `arguments` is the JSON text sent back."""

    id: str
    name: str
    arguments: str


class Message(NamedTuple):
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCallSpec, ...] = ()
    tool_call_id: str = ""  # for role "tool"
    is_error: bool = False  # for role "tool" (Anthropic's is_error)
    # A user's images, or a tool's: each provider puts them where its API wants them.
    images: tuple[Image, ...] = ()


class ToolSpec(NamedTuple):
    name: str
    description: str
    parameters: dict[str, Any]


class Request(NamedTuple):
    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()


# Stream events, in the order a provider yields them.


class TextDelta(NamedTuple):
    text: str


class ReasoningDelta(NamedTuple):
    text: str


class ToolCallStarted(NamedTuple):
    """The first fragment of a call: its position in the round, id and name."""

    index: int  # type: ignore[assignment]  # shadows tuple.index, which nothing calls
    id: str
    name: str


class ToolCallDelta(NamedTuple):
    """More of a call's arguments as written so far (a JSON text fragment)."""

    index: int  # type: ignore[assignment]  # shadows tuple.index, which nothing calls
    fragment: str


class ToolCallFinished(NamedTuple):
    """A call complete: `arguments` is the whole text, parsed by the loop once."""

    index: int  # type: ignore[assignment]  # shadows tuple.index, which nothing calls
    id: str
    name: str
    arguments: str


class Usage(NamedTuple):
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:  # type: ignore[override]
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
        )


class Retrying(NamedTuple):
    """A request failed before any output and will be sent again after `delay` seconds."""

    attempt: int
    delay: float
    reason: str


class Finished(NamedTuple):
    """The stream ended normally; `reason` is the service's finish reason, if any."""

    reason: str = "stop"


StreamEvent = (
    TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallDelta
    | ToolCallFinished
    | Usage
    | Retrying
    | Finished
)


class ModelInfo(NamedTuple):
    id: str
    context_window: int | None = None
    extra: dict[str, Any] | None = None


class Provider(Protocol):
    """A model service. `stream` raises `agent_cli.errors.ProviderError` subclasses."""

    name: str

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]: ...

    async def list_models(self) -> list[ModelInfo]: ...

    async def aclose(self) -> None: ...
