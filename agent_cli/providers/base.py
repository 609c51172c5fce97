"""The one small protocol the loop knows providers by.

A request goes in; an async stream of typed events comes out. Providers speak
HTTP and wire formats only: they know nothing of what tools mean.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Role = Literal["user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCallSpec:
    """A tool call as the model wrote it; `arguments` is the JSON text sent back."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCallSpec, ...] = ()
    tool_call_id: str = ""  # for role "tool"
    is_error: bool = False  # for role "tool" (Anthropic's is_error)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Request:
    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()


# Stream events, in the order a provider yields them.


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The first fragment of a call: its position in the round, id and name."""

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """More of a call's arguments as written so far (a JSON text fragment)."""

    index: int
    fragment: str


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """A call complete: `arguments` is the whole text, parsed by the loop once."""

    index: int
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
        )


@dataclass(frozen=True, slots=True)
class Retrying:
    """A request failed before any output and will be sent again after `delay` seconds."""

    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True, slots=True)
class Finished:
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


@dataclass(frozen=True, slots=True)
class ModelInfo:
    id: str
    context_window: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Provider(Protocol):
    """A model service. `stream` raises `agent_cli.errors.ProviderError` subclasses."""

    name: str

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]: ...

    async def list_models(self) -> list[ModelInfo]: ...

    async def aclose(self) -> None: ...
