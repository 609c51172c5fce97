"""Builds a Session from Settings: the one place that knows every concrete part."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Collection
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli import logs, paths
from agent_cli.engine.backend import Backend
from agent_cli.engine.items import Conversation
from agent_cli.engine.opening import Opening
from agent_cli.engine.session import Session
from agent_cli.engine.store import Store
from agent_cli.errors import ConfigError, UsageError
from agent_cli.providers.base import ModelInfo, Provider
from agent_cli.settings import ProviderSettings, Settings

if TYPE_CHECKING:
    from agent_cli.backends.catalog import AgentSpec
    from agent_cli.backends.loop import Checkpoint  # the loop is imported when a run needs it
    from agent_cli.frontends.interactive import AgentChoice, Interactive, Listing, Questions
    from agent_cli.frontends.prompt_commands import CommandRegistry
    from agent_cli.providers.breaker import Clock, GuardedProvider
    from agent_cli.providers.http_common import StreamingProvider
    from agent_cli.sandbox.launch import Sandbox, SandboxConfig
    from agent_cli.tools.background import BackgroundShells
    from agent_cli.tools.base import FileAccess, Tool
    from agent_cli.tools.environment import EnvironmentPolicy
    from agent_cli.tools.feedback import Feedback
    from agent_cli.tools.mcp import ClientHooks, McpServers, ServerConfig
    from agent_cli.tools.mcp_resources import McpResources


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
    provider_class: type[StreamingProvider]
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
        return ModelInfo(settings.model)
    models = await provider.list_models()
    if not models:
        raise ConfigError(
            f"The model service {provider.name!r} lists no models — pass --model or set "
            "AGENT_MODEL."
        )
    return models[0]


def served_window_probe(settings: Settings, model: ModelInfo) -> asyncio.Future[int | None]:
    """What a local server says about the window it runs `model` with, asked in the background.

    Only local servers are asked (a remote service: the table, not a round
    trip), and only when neither the config nor the model listing said; the
    others get an answer of None at once.
    """
    served = settings.provider
    if served is not None and not served.context_window and not model.context_window:
        from agent_cli.providers.local_hints import is_local, served_context_window

        if is_local(served.base_url):
            return asyncio.ensure_future(served_context_window(served, model.id))
    known: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
    known.set_result(None)
    return known


def checkpointer(workspace: Path) -> Checkpoint:
    """Records the workspace in the shadow repository before each change, off the event loop."""
    checkpoints = None

    async def record(conversation: str, label: str) -> list[str]:
        nonlocal checkpoints
        if checkpoints is None:
            from agent_cli.git import Checkpoints

            checkpoints = Checkpoints(workspace)
        turn = logs.current_turn()  # the message's turn: a rewind to it finds its changes
        return await asyncio.to_thread(checkpoints.record, conversation, label, turn)

    return record


AskTrust = Callable[[Path, list], Awaitable[bool]]


class McpTools:
    """A session's MCP servers as a tool source for the loop: started on first use.

    A workspace's own `.agent/mcp.json` is used only once the person trusted
    it (asked through `ask`, when there is someone to ask); otherwise its
    servers are left out with a notice. `env_policy` ([shell_environment]) says what of
    the user's environment a stdio server inherits; `sandbox`, where an entry with
    `"sandbox": true` starts.
    """

    def __init__(
        self,
        workspace: Path,
        ask: AskTrust | None,
        env_policy: EnvironmentPolicy | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.workspace = workspace
        self.ask = ask
        self.env_policy = env_policy
        self.sandbox = sandbox
        self.servers: McpServers | None = None
        self._starting = asyncio.Lock()  # the loop and the prompt commands may both start them
        self._resources: McpResources | None = None

    @property
    def resources(self) -> McpResources:
        """The servers' resources, for `@server:uri` in a message and its completion."""
        if self._resources is None:
            from agent_cli.tools.mcp_resources import McpResources

            self._resources = McpResources(served(self), lambda: self.servers, self.configured)
        return self._resources

    def configured(self) -> list[str]:
        """The names of the servers the config files configure (a workspace's whether
        trusted yet or not: starting them asks), without starting any (blocking: files)."""
        from agent_cli import mcp_config

        configs, _ = mcp_config.load_servers(self.workspace, trusted=lambda _file: True)
        return [config.name for config in configs if not config.disabled]

    @property
    def listed_anew(self) -> bool:
        return self.servers is not None and self.servers.listed_anew

    @property
    def offering(self) -> int:
        return self.servers.offering if self.servers is not None else 0

    @property
    def nothing_to_ask(self) -> bool:
        """Starting the servers asks the person nothing (no workspace file waits for trust)."""
        from agent_cli import mcp_config

        try:
            return mcp_config.pending_trust(self.workspace) is None
        except ConfigError:
            return False

    async def tools(self) -> tuple[list[Tool], list[str]]:
        if self.servers is not None:
            return await self.servers.tools()
        async with self._starting:
            if self.servers is not None:
                return await self.servers.tools()
            return await self._start()

    async def _start(self) -> tuple[list[Tool], list[str]]:
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
        # The whole environment: an entry's ${VAR} may name a secret on purpose.
        self.servers = McpServers(
            configs, workspace, os.environ, env_policy=self.env_policy, sandbox=self.sandbox,
            hooks=self._hooks(),
        )  # fmt: skip
        tools, notices = await self.servers.tools()
        return tools, [*warnings, *notices]

    def _hooks(self) -> ClientHooks:
        """An HTTP server's OAuth login: asked about first where someone can answer (the
        TUI, the REPL, `agent run` on a terminal); refused with how to log in where not."""
        import os

        from agent_cli.tools.mcp import ClientHooks
        from agent_cli.tools.mcp_auth import asking, oauth, refuse

        def auth(config: ServerConfig) -> Any:
            present = refuse if self.ask is None else asking(self.ask, config.file or Path())
            return oauth(config, os.environ, present)

        return ClientHooks(auth=auth)

    async def aclose(self) -> None:
        if self.servers is not None:
            await self.servers.aclose()


class LentMcpTools:
    """A front end's MCP servers lent to one backend: they outlive it (a model switch and
    /new keep them running, with the prompt commands they serve); the front end closes them."""

    def __init__(self, owner: McpTools) -> None:
        self.owner = owner

    @property
    def listed_anew(self) -> bool:
        return self.owner.listed_anew

    @property
    def offering(self) -> int:
        return self.owner.offering

    async def tools(self) -> tuple[list[Tool], list[str]]:
        return await self.owner.tools()

    async def aclose(self) -> None:
        pass  # the owner's, closed with the front end


class Route:
    """The built-in agent's provider and model: connected when first needed, switchable.

    A conversation worked by an external agent never needs one, so
    `agent --agent opencode` runs with no provider configured at all.

    `get` hands out the provider behind the process's breaker for its service
    (providers/breaker.py): a long session stops asking a service that is down.
    """

    def __init__(self, settings: Settings, clock: Clock | None = None) -> None:
        self.settings = settings
        self.clock = clock  # the breaker's (None: the wall clock)
        self.provider: Provider | None = None
        self._guarded: GuardedProvider | None = None
        self.model: ModelInfo | None = None
        self._models: list[ModelInfo] | None = None  # the server's list, asked once
        self._served: asyncio.Future[int | None] | None = None  # see served_window

    async def get(self) -> tuple[Provider, ModelInfo]:
        if self.provider is None or self._guarded is None:
            from agent_cli.providers.breaker import PROVIDER_FAILURES, GuardedProvider
            from agent_cli.providers.breaker import shared_breaker as breaker

            served = self.settings.require_provider()
            self.provider = make_provider(served, self.settings)
            key = f"{served.kind} {served.base_url}"
            args = (key, PROVIDER_FAILURES)
            made = breaker(*args, self.clock) if self.clock else breaker(*args)
            self._guarded = GuardedProvider(self.provider, made)
        if self.model is None:
            self.model = await choose_model(self.provider, self.settings)
        return self._guarded, self.model

    async def connect(self) -> None:
        """Make the provider and choose the model now (a listing, when none is configured)."""
        await self.get()

    def served_window(self) -> asyncio.Future[int | None]:
        """The server's own answer about the model's window: asked once, when first wanted.

        Not before the first request: the loop asks only once something could be
        shortened to fit it, and an interactive front end when it shows the window.
        """
        if self._served is None:
            if self.model is None:  # not connected: nothing to ask about
                unknown: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
                unknown.set_result(None)
                return unknown
            self._served = served_window_probe(self.settings, self.model)
        return self._served

    async def models(self) -> list[ModelInfo]:
        provider, _ = await self.get()
        if self._models is None:
            self._models = await provider.list_models()
        return self._models

    async def switch(self, name: str) -> ModelInfo:
        """Use model `name` from the next run (a local server asked its window now, to say it)."""
        provider, _ = await self.get()
        model = await choose_model(provider, replace(self.settings, model=name))
        if self._guarded is not None:
            self._guarded.breaker.reset()  # another model: worth asking again at once
        if self._served is not None:
            self._served.cancel()
        self.model, self._served = model, None
        await self.served_window()  # so the switch can say the window
        return model

    @property
    def label(self) -> str:
        """The route as "provider/model" once connected, else the configured model."""
        if self.provider is not None and self.model is not None:
            return f"{self.provider.name}/{self.model.id}"
        return self.settings.model

    def context_window(self) -> int | None:
        """The model's context window when it is known (not the loop's default guess)."""
        from agent_cli.backends.context import known_context_window

        if self.model is None:
            return None
        configured = self.settings.provider.context_window if self.settings.provider else None
        # Only read here: the question to the server is asked by `served_window`, which a
        # front end calls once its first frame is out (it is a few round trips).
        probe = self._served
        done = probe is not None and probe.done() and not probe.cancelled()
        served = probe.result() if probe is not None and done else None
        return known_context_window(self.model.id, configured, self.model.context_window or served)

    async def aclose(self) -> None:
        if self._served is not None:
            self._served.cancel()
        if self.provider is not None:
            await self.provider.aclose()


def routed_session(
    settings: Settings,
    conversation: Conversation,
    store: Store | None,
    route: Route,
    ask_trust: AskTrust | None = None,
    files: FileAccess | None = None,
    mcp: McpTools | None = None,
) -> Session:
    """A session whose backend follows `conversation.agent`: built-in, or an ACP agent;
    `mcp`: MCP servers it shares with the front end (see `builtin_backend`)."""
    if route.provider is not None and conversation.agent == "builtin":
        conversation.model = route.label

    from agent_cli.tools.background import BackgroundShells

    shells = BackgroundShells()  # the session's: they outlive a model switch, not the session

    async def backend(conversation: Conversation) -> Backend:
        if conversation.agent != "builtin":
            return external_backend(settings, conversation)
        provider, model = await route.get()
        conversation.model = route.label
        return builtin_backend(
            settings, conversation, provider, model, ask_trust, files, route.served_window, shells,
            mcp,
        )  # fmt: skip

    resources = mcp.resources if mcp is not None else None  # `@server:uri` in a message
    return Session(conversation, backend, store, shells, resources)


def agent_spec(settings: Settings, agent: str) -> AgentSpec:
    """The catalog entry for `agent`, installed; else a UsageError saying what to do."""
    from agent_cli.backends.catalog import find_agent, load_catalog

    spec = find_agent(load_catalog(settings.agents), agent)
    missing = spec.missing()
    if missing:
        raise UsageError(spec.missing_message(missing))
    return spec


def check_agent(settings: Settings, agent: str) -> None:
    """Fail early (before a conversation opens) for an unknown or missing agent."""
    if agent != "builtin":
        agent_spec(settings, agent)


class Agents:
    """The catalog as the interactive front ends' `/agent` sees it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def choices(self) -> list[AgentChoice]:
        from agent_cli.backends.catalog import load_catalog
        from agent_cli.frontends.interactive import AgentChoice

        catalog = load_catalog(self.settings.agents)
        return [
            AgentChoice(spec.id, spec.name, tuple(spec.missing()), spec.install)
            for spec in catalog.values()
        ]

    def check(self, agent: str) -> None:
        check_agent(self.settings, agent)


def running(shells: BackgroundShells | None) -> str:
    return shells.prompt_note() if shells is not None else ""


class Bench:
    """The interactive front ends' port to what surrounds the conversation (their
    `Workbench`): each answer is read when asked, so a change made meanwhile shows."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace

    def mcp_servers(self) -> Listing:
        from agent_cli import mcp_config
        from agent_cli.frontends.interactive import Listing

        configs, warnings = mcp_config.load_servers(
            self.workspace, trusted=lambda file: mcp_config.is_trusted(self.workspace, file)
        )
        rows = [
            (c.name, c.url or " ".join([c.command, *c.args]), c.source, self._breaker(c))
            for c in configs
        ]
        return Listing(list(rows), warnings)

    def _breaker(self, config: ServerConfig) -> str:
        from agent_cli.tools.mcp_breakers import cooling
        from agent_cli.tools.mcp_listings import listing_key

        return cooling(listing_key(config.identity(self.workspace))) or "ok"

    def restart_mcp(self, name: str) -> str:
        from agent_cli import mcp_config
        from agent_cli.tools.mcp_breakers import reset
        from agent_cli.tools.mcp_listings import listing_key

        configs, _ = mcp_config.load_servers(
            self.workspace, trusted=lambda file: mcp_config.is_trusted(self.workspace, file)
        )
        found = next((c for c in configs if c.name == name), None)
        if found is None:
            raise UsageError(f"There is no MCP server {name!r} — see /mcp for their names.")
        if reset(listing_key(found.identity(self.workspace))):
            return f"The MCP server {name!r} is called again: its next call starts it."
        return f"The MCP server {name!r} was not cooling down; its next call starts it if need be."

    def skills(self) -> Listing:
        from agent_cli.frontends.interactive import Listing
        from agent_cli.tools.skills import Skills

        found = Skills.discover(self.workspace)
        rows = [
            (s.name, "on" if found.is_enabled(s.name) else "off", s.source, s.description)
            for s in found.all
        ]
        return Listing(list(rows), list(found.warnings))

    def switch_skill(self, name: str, on: bool) -> str:
        from agent_cli.tools.skills import Skills

        Skills.discover(self.workspace).set_enabled(name, on)  # raises UnknownSkill
        state = "on" if on else "off"
        return f"Skill `{name}` is {state} in every workspace, from the next conversation (`/new`)."

    def tasks(self) -> list[str]:
        from agent_cli.tasks import summary_lines

        return summary_lines()

    def diff(self) -> str | None:
        from agent_cli.git import workspace_diff

        return workspace_diff(self.workspace)

    def undo(self, conversation: str) -> str:
        from agent_cli.git import Checkpoints

        return Checkpoints(self.workspace).undo(conversation).summary(conversation)

    def first_change(self, conversation: str, turns: Collection[str]) -> str | None:
        from agent_cli.git import Checkpoints, short_label

        label = Checkpoints(self.workspace).first_change(conversation, turns)
        return None if label is None else short_label(label)

    def copy_checkpoints(self, conversation: str, to: str) -> str:
        return copy_checkpoints(self.workspace, conversation, to)

    def restore_before(self, conversation: str, turns: Collection[str]) -> str:
        from agent_cli.git import Checkpoints

        restored = Checkpoints(self.workspace).restore_before(conversation, turns)
        if not restored.changes:
            return "The files already are as they were before that message."
        return restored.summary(conversation)

    def branch(self) -> tuple[str, bool] | None:
        from agent_cli.git import branch_status

        return branch_status(self.workspace)


def copy_checkpoints(workspace: Path, conversation: str, to: str) -> str:
    """A fork gets the checkpoints of the conversation it copies (blocking); "" when
    done, else a warning saying what undo cannot do in the copy."""
    from agent_cli.git import CheckpointError, Checkpoints

    try:
        Checkpoints(workspace).copy(conversation, to)
    except CheckpointError as e:
        return (
            f"The checkpoints were not copied to {to} ({e}): /undo and /rewind in it cannot "
            "restore the files to before the fork."
        )
    return ""


def external_backend(settings: Settings, conversation: Conversation) -> Backend:
    from agent_cli.backends.external import ExternalAgent

    spec = agent_spec(settings, conversation.agent)
    workspace = Path(conversation.workspace)
    return ExternalAgent(spec, workspace, checkpoint=checkpointer(workspace))


def builtin_backend(
    settings: Settings,
    conversation: Conversation,
    provider: Provider,
    model: ModelInfo,
    ask_trust: AskTrust | None = None,
    files: FileAccess | None = None,
    served_window: Callable[[], Awaitable[int | None]] | None = None,
    shells: BackgroundShells | None = None,
    mcp: McpTools | None = None,
) -> Backend:
    """The built-in loop for a conversation, with every tool it may offer.

    `files`: where the file tools read and write (an editor's buffers over
    ACP); the disk when None. Paths are confined to the workspace either way.
    `served_window`: asks the server its window (see `Route.served_window`).
    `mcp`: the front end's MCP servers, lent (its own are started for it when None).
    """
    from agent_cli.backends.context import context_window
    from agent_cli.backends.loop import BuiltinLoop, LoopParts, LoopSettings
    from agent_cli.backends.prompt import SkillLine, system_prompt
    from agent_cli.policy.rules import RuleSet
    from agent_cli.providers.images import takes_images
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
    subagents = None
    if settings.subagent_depth > 0:  # 0 turns sub-agents off: no task tool at all
        from agent_cli.backends.subagent_definitions import discover
        from agent_cli.backends.subagents import Subagents

        definitions = discover(workspace)
        subagents = Subagents(definitions, settings.subagent_depth, settings.subagent_rounds)
        tools.add(subagents.tool())
    hooks = None
    if settings.hooks or settings.project_hooks:
        from agent_cli.backends.hooks import Hooks

        project_file = paths.project_config_file(workspace)

        async def trust_hooks(entries: list) -> bool:
            """The workspace's hooks run once the person trusted its config file, as for MCP."""
            from agent_cli import mcp_config

            if mcp_config.is_trusted(workspace, project_file):
                return True
            asked = [*entries, *_feedback_programs(settings)]  # all the file would run
            if ask_trust is None or not await ask_trust(project_file, asked):
                return False
            mcp_config.trust(workspace, project_file)
            return True

        hooks = Hooks(
            workspace,
            settings.hooks,
            settings.project_hooks,
            trust_hooks,
            env_policy=settings.shell_environment,
        )
    feedback = feedback_of(settings, workspace, ask_trust)
    if feedback is not None:  # the shell tool watched for changed files; the LSP tools
        tools = feedback.equip(tools)
    return BuiltinLoop(
        provider=provider,
        tools=tools,
        context=ToolContext(
            confined,
            files=files,
            env_policy=settings.shell_environment,
            sandbox=sandbox_of(settings),
            shells=shells,
            feedback=feedback,
        ),
        settings=LoopSettings(
            model.id,
            workspace,
            settings.max_rounds,
            window,
            settings.auto_compact,
            takes_images(settings.provider.images if settings.provider else None, model),
        ),
        system_prompt=lambda mode: system_prompt(workspace, mode, lines) + running(shells),
        parts=LoopParts(
            rules=rules,
            checkpoint=checkpointer(workspace),
            extra_tools=LentMcpTools(mcp)
            if mcp is not None
            else McpTools(workspace, ask_trust, settings.shell_environment, sandbox_of(settings)),
            hooks=hooks,
            subagents=subagents,
            served_window=served_window,
        ),
    )


def feedback_of(settings: Settings, workspace: Path, ask_trust: AskTrust | None) -> Feedback | None:
    """Language servers and check commands, told of every edit (None when there are none).

    The workspace's own checks and `[lsp.NAME]` servers run once the person trusted its
    config file: the same yes as for its hooks, asked listing all that the file runs.
    """
    import os

    from agent_cli.tools.feedback import Feedback

    if not (settings.lsp.enabled or settings.checks or settings.project_checks):
        return None
    project_file = paths.project_config_file(workspace)

    async def trust() -> bool:
        from agent_cli import mcp_config
        from agent_cli.backends.hooks import ProjectHook

        if mcp_config.is_trusted(workspace, project_file):
            return True
        hooks = [ProjectHook(e, h) for e, found in settings.project_hooks.items() for h in found]
        asked = [*hooks, *_feedback_programs(settings)]
        if ask_trust is None or not await ask_trust(project_file, asked):
            return False
        mcp_config.trust(workspace, project_file)
        return True

    feedback = Feedback(
        workspace,
        settings.lsp,
        settings.checks,
        settings.project_checks,
        trust,
        sandbox_of(settings),
        settings.shell_environment.apply(os.environ),  # no secrets, as for commands
    )
    return feedback if feedback.watches else None


def _feedback_programs(settings: Settings) -> list:
    """The project's checks and language servers, as its hooks are listed when it asks."""
    from agent_cli.backends.hooks import ProjectHook
    from agent_cli.settings import Hook

    checks = [(f"check on {', '.join(c.files)}", c.command) for c in settings.project_checks]
    programs = [*checks, *settings.lsp.project_programs()]
    return [ProjectHook(what, Hook(command)) for what, command in programs]


def sandbox_of(settings: Settings) -> Sandbox:
    """The sandbox commands run in; one per process and configuration (it starts bwrap
    once to find out whether it works)."""
    return _sandboxes(settings.sandbox, settings.sandbox_off_by)


@functools.cache
def _sandboxes(config: SandboxConfig, off_by: str) -> Sandbox:
    from agent_cli.sandbox.launch import Sandbox

    return Sandbox(config, off_by)


async def open_interactive(
    settings: Settings,
    opening: Opening,
    mode: str,
    ask_trust: AskTrust | None = None,
    agent: str | None = None,
    questions: Questions | None = None,
    connect: bool = True,
) -> Interactive:
    """The current session and slash commands for the TUI or the line REPL.

    The route (provider and model) is shared by every session the front end
    opens (/new, /sessions); close it with `interactive.aclose()`. It connects
    now when the conversation is the built-in agent's, so a server that does
    not answer is said before the prompt; with `connect=False` the front end
    does it (`route.connect()`: the TUI, once its first frame is out).
    `ask_trust` asks the person before a workspace's own MCP servers may start.
    """
    from agent_cli.frontends.interactive import Interactive, Questions

    store = make_store()
    conversation = open_conversation(settings, store, opening, mode)
    route = Route(settings)
    try:
        if agent is not None:
            check_agent(settings, agent)
        if connect and (agent or conversation.agent) == "builtin":
            await route.get()
    except BaseException:
        await route.aclose()
        raise
    saving = store if opening.save else None
    _preload_mcp_sdk(settings.workspace)
    mcp = McpTools(settings.workspace, ask_trust, settings.shell_environment, sandbox_of(settings))

    def make(conversation: Conversation) -> Session:
        return routed_session(settings, conversation, saving, route, ask_trust, mcp=mcp)

    async def close() -> None:
        await mcp.aclose()
        await route.aclose()

    session = make(conversation)
    if agent is not None:
        await session.switch_agent(agent)
    commands = prompt_commands(settings.workspace, mcp)

    async def warm_commands() -> None:
        if mcp.nothing_to_ask:  # a workspace's servers wait for their trust question
            await commands.load(start=True, files=False)  # read by prompt_commands just now
            await mcp.resources.refresh(start=True)  # for `@server:` completion

    return Interactive(
        session,
        saving,
        make,
        close=close,
        route=route,
        agents=Agents(settings),
        prices=settings.price_of,
        questions=questions or Questions(),
        bench=Bench(settings.workspace),
        unconfined=lambda: "" if sandbox_of(settings).active else "no sandbox",
        commands=commands,
        warm_commands=warm_commands,
        resources=mcp.resources,
    )


def prompt_commands(workspace: Path, mcp: McpTools | None = None) -> CommandRegistry:
    """The prompt commands of a workspace (the person's and the project's command files,
    the skills, then `mcp`'s servers' prompts once listed), read once now; the built-in
    slash commands' names are reserved."""
    from agent_cli.frontends.interactive import COMMANDS
    from agent_cli.frontends.prompt_commands import (
        CommandRegistry,
        CommandSource,
        McpPromptCommands,
        SkillCommands,
        file_sources,
    )
    from agent_cli.tools.skills import Skills

    skills = SkillCommands(Skills.discover(workspace))
    sources: list[CommandSource] = [*file_sources(workspace, paths.config_dir()), skills]
    if mcp is not None:
        sources.append(McpPromptCommands(served(mcp)))
    registry = CommandRegistry(sources, reserved=(c.name for c in COMMANDS))
    registry.refresh()
    return registry


def served(mcp: McpTools) -> Callable[[bool], Awaitable[tuple[McpServers | None, list[str]]]]:
    """`mcp`'s servers for the prompt commands, and what they said: started when asked to
    (`start`), else only when they were started already."""

    async def servers(start: bool) -> tuple[McpServers | None, list[str]]:
        if mcp.servers is None and not start:
            return None, []
        _, notices = await mcp.tools()  # at once when they are up; else waits for their start
        return mcp.servers, notices

    return servers


def _preload_mcp_sdk(workspace: Path) -> None:
    """With MCP servers configured, import their SDK (a second or more) while the person
    types: the first message then starts them without waiting for the import."""
    from agent_cli import mcp_config

    if mcp_config.user_file().exists() or mcp_config.workspace_file(workspace).exists():
        from agent_cli.tools.mcp import preload_sdk

        preload_sdk()
