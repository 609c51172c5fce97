"""A provider that replays scripted turns: for tests of the loop, and demos.

Each turn is a list of stream events to yield (or an exception to raise,
before or after some events); every request is recorded so a test can check
exactly what the model was sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence

from agent_cli.providers.base import (
    Finished,
    ModelInfo,
    Request,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)

Step = StreamEvent | BaseException | float  # a float pauses that many seconds


class ScriptedProvider:
    name = "scripted"

    def __init__(
        self, turns: Iterable[Sequence[Step]], models: Sequence[str] = ("scripted",)
    ) -> None:
        self.turns = list(turns)
        self.requests: list[Request] = []
        self.models = list(models)
        self.closed = False

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if not self.turns:
            raise AssertionError("the scripted provider has no turn left for this request")
        for step in self.turns.pop(0):
            if isinstance(step, BaseException):
                raise step
            if isinstance(step, float):
                await asyncio.sleep(step)
                continue
            yield step

    async def list_models(self) -> list[ModelInfo]:
        return [ModelInfo(m) for m in self.models]

    async def aclose(self) -> None:
        self.closed = True


def answer(text: str, usage: Usage | None = None) -> list[Step]:
    """A turn that answers `text`, word by word."""
    usage = usage or Usage(10, 5)
    words = text.split(" ")
    steps: list[Step] = [TextDelta(w if i == 0 else " " + w) for i, w in enumerate(words)]
    return [*steps, usage, Finished("stop")]


def calls(*specs: tuple[str, str, str], text: str = "") -> list[Step]:
    """A turn that calls tools: each spec is (id, name, arguments JSON), written in pieces."""
    steps: list[Step] = [TextDelta(text)] if text else []
    for index, (call_id, name, arguments) in enumerate(specs):
        steps.append(ToolCallStarted(index, call_id, name))
        for start in range(0, len(arguments), 7):
            steps.append(ToolCallDelta(index, arguments[start : start + 7]))
    for index, (call_id, name, arguments) in enumerate(specs):
        steps.append(ToolCallFinished(index, call_id, name, arguments))
    return [*steps, Usage(10, 5), Finished("tool_calls")]
