"""Build real Sessions around a scripted provider, and record their events."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agent_cli.backends.loop import BuiltinLoop, LoopParts, LoopSettings
from agent_cli.backends.prompt import system_prompt
from agent_cli.engine.backend import Backend
from agent_cli.engine.events import Event
from agent_cli.engine.items import Conversation
from agent_cli.engine.session import Session
from agent_cli.engine.store import Store
from agent_cli.providers.scripted import ScriptedProvider, Step
from agent_cli.tools.base import Tool, ToolContext, ToolRegistry
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.workspace import Workspace

if TYPE_CHECKING:
    from agent_cli.backends.hooks import Hooks
    from agent_cli.backends.subagents import Subagents


class Recorder:
    """Keeps every event a session publishes, in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]


def make_session(
    workspace: Path,
    turns: Iterable[Sequence[Step]],
    *,
    tools: Iterable[Tool] = (),
    mode: str = "ask",
    max_rounds: int = 30,
    store: Store | None = None,
    context_window: int = 128_000,
    provider: ScriptedProvider | None = None,
    hooks: Hooks | None = None,
    subagents: Subagents | None = None,
    auto_compact: float | None = None,
) -> tuple[Session, ScriptedProvider, Recorder]:
    """A Session over a scripted provider (`provider`, else one replaying `turns`);
    with `subagents`, the conversation is offered the task tool."""
    provider = provider or ScriptedProvider(turns)
    task = [subagents.tool()] if subagents is not None and subagents.offers_task else []
    registry = ToolRegistry([*builtin_tools(), *tools, *task])

    def backend(_conversation: Conversation) -> Backend:
        return BuiltinLoop(
            provider=provider,
            tools=registry,
            context=ToolContext(Workspace(workspace)),
            settings=LoopSettings(
                "scripted-model", workspace, max_rounds, context_window, auto_compact
            ),
            system_prompt=lambda m: system_prompt(workspace, m),
            parts=LoopParts(hooks=hooks, subagents=subagents),
        )

    conversation = Conversation(workspace=str(workspace), mode=mode)
    session = Session(conversation, backend, store)
    recorder = Recorder()
    session.events.subscribe(recorder)
    return session, provider, recorder
