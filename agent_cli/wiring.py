"""Builds a Session from Settings: the one place that knows every concrete part."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent_cli import paths
from agent_cli.backends.loop import Checkpoint
from agent_cli.engine.backend import Backend
from agent_cli.engine.items import Conversation
from agent_cli.engine.session import Session
from agent_cli.engine.store import Store
from agent_cli.errors import ConfigError, UsageError
from agent_cli.providers.base import ModelInfo, Provider
from agent_cli.settings import ProviderSettings, Settings

if TYPE_CHECKING:
    from agent_cli.frontends.interactive import Interactive
    from agent_cli.tools.base import Tool
    from agent_cli.tools.mcp import McpServers


@dataclass(frozen=True)
class Opening:
    """Which conversation a front end opens."""

    resume: str | None = None
    continue_last: bool = False
    save: bool = True


def make_store() -> Store:
    return Store(paths.conversations_dir())


def open_conversation(
    settings: Settings, store: Store, opening: Opening, mode: str
) -> Conversation:
    workspace = str(settings.workspace)
    if opening.resume:
        conversation = store.load(opening.resume)
        if conversation.workspace != workspace:
            raise UsageError(
                f"Conversation {conversation.id} belongs to {conversation.workspace} — "
                "run agent there, or pass --cwd."
            )
    elif opening.continue_last:
        found = store.last(workspace)
        if found is None:
            raise UsageError(
                f"There is no earlier conversation in {workspace} to continue — drop --continue."
            )
        conversation = found
    else:
        conversation = Conversation(workspace=workspace)
    conversation.mode = mode
    return conversation


def make_provider(provider: ProviderSettings, settings: Settings) -> Provider:
    """The provider for a configured entry, by its wire format (`kind`)."""
    if provider.kind == "openai":
        from agent_cli.providers.openai import OpenAIProvider as provider_class
    elif provider.kind == "anthropic":
        from agent_cli.providers.anthropic import AnthropicProvider as provider_class
    elif provider.kind == "openai-responses":
        from agent_cli.providers.responses import ResponsesProvider as provider_class
    else:
        raise ConfigError(
            f"Provider {provider.name!r} is of kind {provider.kind!r}, which this version "
            'cannot speak — use kind = "openai", "anthropic" or "openai-responses".'
        )
    return provider_class(
        provider.base_url,
        provider.api_key,
        name=provider.name,
        headers=dict(provider.headers),
        connect_timeout=settings.connect_timeout,
        read_timeout=settings.read_timeout,
    )


async def choose_model(provider: Provider, settings: Settings) -> ModelInfo:
    """The configured model, else the server's first listed one (with its context window)."""
    if settings.model:
        info = ModelInfo(settings.model)
    else:
        models = await provider.list_models()
        if not models:
            raise ConfigError(
                f"The model service {provider.name!r} lists no models — pass --model or set "
                "AGENT_MODEL."
            )
        info = models[0]
    served = settings.provider
    if served is not None and not info.context_window and not served.context_window:
        from agent_cli.providers.local_hints import is_local, served_context_window

        if is_local(served.base_url):  # a remote service: the table, not a round trip
            info = info._replace(context_window=await served_context_window(served, info.id))
    return info


def checkpointer(workspace: Path) -> Checkpoint:
    """Records the workspace in the shadow repository before each change, off the event loop."""
    checkpoints = None

    async def record(conversation: str, label: str) -> list[str]:
        nonlocal checkpoints
        if checkpoints is None:
            from agent_cli.git import Checkpoints

            checkpoints = Checkpoints(workspace)
        return await asyncio.to_thread(checkpoints.record, conversation, label)

    return record


AskTrust = Callable[[Path, list], Awaitable[bool]]


class McpTools:
    """A session's MCP servers as a tool source for the loop: started on first use.

    A workspace's own `.agent/mcp.json` is used only once the person trusted
    it (asked through `ask`, when there is someone to ask); otherwise its
    servers are left out with a notice.
    """

    def __init__(self, workspace: Path, ask: AskTrust | None) -> None:
        self.workspace = workspace
        self.ask = ask
        self.servers: McpServers | None = None

    async def tools(self) -> tuple[list[Tool], list[str]]:
        import os

        from agent_cli import mcp_config
        from agent_cli.tools.mcp import McpServers

        workspace = self.workspace
        try:
            pending = mcp_config.pending_trust(workspace)
            if pending is not None and self.ask is not None and await self.ask(*pending):
                mcp_config.trust(workspace, pending[0])
            configs, warnings = mcp_config.load_servers(
                workspace, trusted=lambda file: mcp_config.is_trusted(workspace, file)
            )
        except ConfigError as e:
            return [], [f"{e} MCP servers are left out."]
        if not configs:
            return [], warnings
        self.servers = McpServers(configs, workspace, os.environ)
        tools, notices = await self.servers.tools()
        return tools, [*warnings, *notices]

    async def aclose(self) -> None:
        if self.servers is not None:
            await self.servers.aclose()


def build_session(
    settings: Settings,
    conversation: Conversation,
    store: Store | None,
    provider: Provider,
    model: ModelInfo,
    ask_trust: AskTrust | None = None,
) -> Session:
    conversation.model = f"{provider.name}/{model.id}"

    def backend(conversation: Conversation) -> Backend:
        return builtin_backend(settings, conversation, provider, model, ask_trust)

    return Session(conversation, backend, store)


def builtin_backend(
    settings: Settings,
    conversation: Conversation,
    provider: Provider,
    model: ModelInfo,
    ask_trust: AskTrust | None = None,
) -> Backend:
    """The built-in loop for a conversation, with every tool it may offer."""
    from agent_cli.backends.context import context_window
    from agent_cli.backends.loop import BuiltinLoop, LoopSettings
    from agent_cli.backends.prompt import SkillLine, system_prompt
    from agent_cli.policy.rules import RuleSet
    from agent_cli.tools.base import ToolContext
    from agent_cli.tools.builtin import builtin_tools
    from agent_cli.tools.skills import Skills, use_skill_tool
    from agent_cli.tools.workspace import Workspace

    configured = settings.provider.context_window if settings.provider else None
    window = context_window(model.id, configured, model.context_window)
    workspace = Path(conversation.workspace)
    confined = Workspace(workspace)
    try:
        rules = RuleSet(confined, settings.allow, settings.deny, paths.data_dir() / "rules")
    except ValueError as e:
        raise ConfigError(f"A rule in the config is not valid: {e} — fix it.") from e
    skills = Skills.discover(workspace)
    tools = builtin_tools()
    if skills.enabled():  # use_skill needs a switched-on skill (SPEC §7)
        tools.add(use_skill_tool(skills))
    lines = [SkillLine(name, description) for name, description in skills.prompt_lines()]
    return BuiltinLoop(
        provider=provider,
        tools=tools,
        context=ToolContext(confined),
        settings=LoopSettings(model.id, workspace, settings.max_rounds, window),
        system_prompt=lambda mode: system_prompt(workspace, mode, lines),
        rules=rules,
        checkpoint=checkpointer(workspace),
        extra_tools=McpTools(workspace, ask_trust),
    )


async def open_interactive(
    settings: Settings, opening: Opening, mode: str, ask_trust: AskTrust | None = None
) -> Interactive:
    """The current session and slash commands for the TUI or the line REPL.

    The provider is shared by every session the front end opens (/new,
    /sessions); close it with `interactive.aclose()`. `ask_trust` asks the
    person before a workspace's own MCP servers may start.
    """
    from agent_cli.frontends.interactive import Interactive

    store = make_store()
    conversation = open_conversation(settings, store, opening, mode)
    provider = make_provider(settings.require_provider(), settings)
    try:
        model = await choose_model(provider, settings)
    except BaseException:
        await provider.aclose()
        raise
    saving = store if opening.save else None

    def make(conversation: Conversation) -> Session:
        return build_session(settings, conversation, saving, provider, model, ask_trust)

    return Interactive(make(conversation), saving, make, close=provider.aclose)
