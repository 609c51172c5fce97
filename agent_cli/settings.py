"""Typed settings, built once: flags > environment > project file > user file > defaults.

Nothing else reads the environment. A bad config file is an error naming the
file, the line and the key; it never falls back silently. Unknown keys warn.

A project file (`.agent/config.toml`) comes with a cloned repository, so it
may not raise its own permissions: `mode`, `providers` (which could send
your key to another server) and allow rules are read from the user's file
and flags only; in a project file they are ignored with a warning. Of
`[shell_environment]` it may only add `exclude` patterns: anything else
could hand a secret to the commands the model runs.

A provider's API key, in order: the variable its `api_key_env` names; the
service's own variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) for the
`openai`/`anthropic` entries it belongs to; the credentials file (by
provider name, see `credentials`); and last the kind's variable for any other
entry of that kind. A stored key beats a generic variable for other services
on purpose: a stored OpenRouter key must not be replaced by, and so leak, the
OpenAI key in the environment.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli import paths
from agent_cli.errors import ConfigError
from agent_cli.lsp.options import (
    DEFAULT_SETTLE_TIME,
    DEFAULT_START_TIMEOUT,
    LspSettings,
    read_lsp,
)
from agent_cli.policy.mode_names import MODES, MODES_TEXT
from agent_cli.sandbox.plan import MODES as SANDBOX_MODES
from agent_cli.sandbox.plan import SandboxConfig
from agent_cli.tools.environment import INHERIT_CHOICES, EnvironmentPolicy

if TYPE_CHECKING:
    from agent_cli.tools.checks import Check

DEFAULT_MODE = "ask"
DEFAULT_MAX_ROUNDS = 30
DEFAULT_AUTO_COMPACT = 0.85  # the share of the context window that starts a compaction
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 120.0
PROVIDER_KINDS = ("openai", "anthropic", "openai-responses")

# The environment variable holding a key for each wire format, and the entries it belongs to.
KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
_VARIABLE_OWNERS = {"OPENAI_API_KEY": "openai", "ANTHROPIC_API_KEY": "anthropic"}

# Every key a config file may have, with its type. Tables are dotted prefixes.
_TOP_KEYS: dict[str, type | tuple[type, ...]] = {
    "model": str,
    "provider": str,
    "mode": str,
    "max_rounds": int,
    "auto_compact": (bool, int, float),
    "connect_timeout": (int, float),
    "read_timeout": (int, float),
    "theme": str,
    "reduce_motion": bool,
    "notify": bool,
}
_PROVIDER_KEYS: dict[str, type | tuple[type, ...]] = {
    "kind": str,
    "base_url": str,
    "models": list,
    "default_model": str,
    "context_window": int,
    "images": bool,
    "headers": dict,
    "api_key_env": str,
}
_RULE_KEYS: dict[str, type | tuple[type, ...]] = {"allow": list, "deny": list}
# [agents.ID]: external ACP agents added to (or changing) the shipped catalog.
_AGENT_KEYS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "command": str,
    "args": list,
    "needs": list,
    "env": dict,
    "install": str,
    "gated": bool,
}
_SUBAGENT_KEYS: dict[str, type | tuple[type, ...]] = {"max_depth": int, "max_rounds": int}
# [shell_environment]: what of the user's environment commands and MCP servers get.
_ENVIRONMENT_KEYS: dict[str, type | tuple[type, ...]] = {
    "inherit": str,
    "ignore_default_excludes": bool,
    "exclude": list,
    "include_only": list,
    "set": dict,
}
_PROJECT_ENVIRONMENT_KEYS = ("exclude",)  # a project may hide more, never show more
# [sandbox]: how commands are confined (SPEC §14).
_SANDBOX_KEYS: dict[str, type | tuple[type, ...]] = {
    "mode": str,
    "writable": list,
    "deny_read": list,
    "network": bool,
}
_PRICE_KEYS: dict[str, type | tuple[type, ...]] = {"input": (int, float), "output": (int, float)}
_HOOK_KEYS: dict[str, type | tuple[type, ...]] = {
    "command": str,
    "timeout": (int, float),
    "tools": list,
}
HOOK_EVENTS = ("user_prompt_submit", "pre_tool_use", "post_tool_use", "notification", "stop")
# [[checks]]: commands run after an edit of a matching file (tools/checks.py).
_CHECK_KEYS: dict[str, type | tuple[type, ...]] = {
    "files": (str, list),
    "command": str,
    "timeout": (int, float),
}
DEFAULT_HOOK_TIMEOUT = 30.0
DEFAULT_SUBAGENT_DEPTH = 3
DEFAULT_SUBAGENT_ROUNDS = 50
# An agent entry names a program to run, and sub-agent budgets spend your tokens:
# a cloned repository must not choose either.
_PROJECT_FORBIDDEN = ("mode", "providers", "rules.allow", "agents", "subagents")


@dataclass(frozen=True)
class ProviderSettings:
    """A provider entry as the config and the presets make it, with its key."""

    name: str
    kind: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    models: tuple[str, ...] = ()
    default_model: str = ""
    context_window: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    images: bool | None = None  # whether its models take images; None: as the server says


# Built-in presets: a provider by name with nothing but a key to add.
PRESETS: dict[str, ProviderSettings] = {
    "openai": ProviderSettings("openai", "openai", "https://api.openai.com/v1"),
    "anthropic": ProviderSettings("anthropic", "anthropic", "https://api.anthropic.com"),
    "openrouter": ProviderSettings("openrouter", "openai", "https://openrouter.ai/api/v1"),
    "llama.cpp": ProviderSettings("llama.cpp", "openai", "http://127.0.0.1:8080/v1"),
    "ollama": ProviderSettings("ollama", "openai", "http://127.0.0.1:11434/v1"),
    "vllm": ProviderSettings("vllm", "openai", "http://127.0.0.1:8000/v1"),
}


@dataclass(frozen=True)
class Hook:
    """A command run at an event (SPEC reference: hooks), JSON of the event on stdin."""

    command: str
    timeout: float = DEFAULT_HOOK_TIMEOUT
    tools: tuple[str, ...] = ()  # tool events only: names (fnmatch patterns); empty = all
    source: str = ""  # the file it was read from


@dataclass(frozen=True)
class Price:
    """What a model costs, in dollars per million tokens."""

    input: float
    output: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


@dataclass(frozen=True)
class Flags:
    """What the command line says; None means "not given"."""

    model: str | None = None
    provider: str | None = None
    mode: str | None = None
    max_rounds: int | None = None
    debug: bool = False
    sandbox: str | None = None  # --sandbox: a mechanism, or "off" (commands run unconfined)


@dataclass(frozen=True)
class Settings:
    """Everything the files, the environment and the flags say, checked."""

    workspace: Path
    provider: ProviderSettings | None
    model: str = ""  # empty: the server's first model
    mode: str | None = None  # None: the front end's default
    max_rounds: int = DEFAULT_MAX_ROUNDS
    auto_compact: float | None = DEFAULT_AUTO_COMPACT  # None: only /compact compacts
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    theme: str = ""  # empty: the TUI's default (or the one last chosen with /theme)
    reduce_motion: bool = False  # no spinners or animation in the TUI
    notify: bool = True  # a desktop notification / bell when a run needs the person
    debug: bool = False
    agents: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # [agents.ID]
    hooks: Mapping[str, tuple[Hook, ...]] = field(default_factory=dict)  # user file: trusted
    project_hooks: Mapping[str, tuple[Hook, ...]] = field(default_factory=dict)  # after a yes
    subagent_depth: int = DEFAULT_SUBAGENT_DEPTH  # 0 turns the `task` tool off
    subagent_rounds: int = DEFAULT_SUBAGENT_ROUNDS  # shared by the whole tree of children
    prices: Mapping[str, Price] = field(default_factory=dict)  # model name → price
    shell_environment: EnvironmentPolicy = field(default_factory=EnvironmentPolicy)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    sandbox_off_by: str = ""  # who turned the sandbox off ("--sandbox off"), if a flag did
    lsp: LspSettings = field(default_factory=LspSettings)  # language servers (lsp/options.py)
    checks: tuple[Check, ...] = ()  # the user's [[checks]]
    project_checks: tuple[Check, ...] = ()  # the project's: they run after a yes, as hooks
    warnings: tuple[str, ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)

    def price_of(self, model: str) -> Price | None:
        """The configured price of a model, by "provider/model" or the model's own name."""
        return self.prices.get(model) or self.prices.get(model.partition("/")[2])

    def require_provider(self) -> ProviderSettings:
        if self.provider is None:
            raise ConfigError(
                "No model provider is configured — set OPENAI_BASE_URL (for example "
                "http://127.0.0.1:8080/v1 for llama.cpp) and, if it needs one, OPENAI_API_KEY; "
                f"or add a [providers.NAME] table to {paths.user_config_file()}."
            )
        return self.provider


def load_settings(
    workspace: Path, flags: Flags = Flags(), environ: Mapping[str, str] | None = None
) -> Settings:
    env = dict(environ if environ is not None else _environ())
    user = _read_config(paths.user_config_file(), project=False, env=env)
    project = _read_config(paths.project_config_file(workspace), project=True, env=env)
    warnings = user.warnings + project.warnings
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for layer in (user, project):
        for key, value in layer.values.items():
            merged[key], sources[key] = value, str(layer.path)
    _overlay(merged, sources, "environment", model=env.get("AGENT_MODEL"))
    _overlay(merged, sources, "environment", provider=env.get("AGENT_PROVIDER"))
    _overlay(merged, sources, "command line", model=flags.model, provider=flags.provider)
    _overlay(merged, sources, "command line", mode=flags.mode, max_rounds=flags.max_rounds)
    mode = merged.get("mode")
    if mode is not None and mode not in MODES:
        raise ConfigError(f"Unknown mode {mode!r} ({sources['mode']}) — use {MODES_TEXT}.")
    provider = _resolve_provider(merged, user.providers, env)
    model = merged.get("model") or (provider.default_model if provider else "")
    rules = user.rules
    return Settings(
        workspace=workspace,
        provider=provider,
        model=model,
        mode=mode,
        max_rounds=merged.get("max_rounds", DEFAULT_MAX_ROUNDS),
        auto_compact=_auto_compact(merged.get("auto_compact", True), sources.get("auto_compact")),
        connect_timeout=float(merged.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT)),
        read_timeout=float(merged.get("read_timeout", DEFAULT_READ_TIMEOUT)),
        allow=tuple(rules.get("allow", ())),
        deny=tuple(rules.get("deny", ())) + tuple(project.rules.get("deny", ())),
        theme=merged.get("theme", ""),
        reduce_motion=merged.get("reduce_motion", False),
        notify=merged.get("notify", True),
        debug=flags.debug,
        agents=user.agents,
        hooks=user.hooks,
        project_hooks=project.hooks,
        subagent_depth=merged.get("subagents.max_depth", DEFAULT_SUBAGENT_DEPTH),
        subagent_rounds=merged.get("subagents.max_rounds", DEFAULT_SUBAGENT_ROUNDS),
        prices={**user.prices, **project.prices},
        shell_environment=_environment_policy(user.environment, project.environment),
        sandbox=_sandbox_config(user.sandbox, project.sandbox, flags.sandbox),
        sandbox_off_by="--sandbox off" if flags.sandbox == "off" else "",
        lsp=_lsp_settings(user, project),
        checks=user.checks,
        project_checks=project.checks,
        warnings=tuple(warnings),
        sources=sources,
    )


def _auto_compact(value: bool | float, source: str | None) -> float | None:
    """`auto_compact`: false turns it off, true is the default share, else a share."""
    if value is True:
        return DEFAULT_AUTO_COMPACT
    if value is False:
        return None
    if not 0 < value <= 1:
        raise ConfigError(
            f"auto_compact = {value!r} ({source}) is not a share of the context window — "
            "use a number above 0 and at most 1 (such as 0.85), or false to turn it off."
        )
    return float(value)


def _environment_policy(user: Mapping[str, Any], project: Mapping[str, Any]) -> EnvironmentPolicy:
    """The user's `[shell_environment]`, with the project's `exclude` patterns added."""
    return EnvironmentPolicy(
        inherit=user.get("inherit", "all"),
        ignore_default_excludes=user.get("ignore_default_excludes", False),
        exclude=(*user.get("exclude", ()), *project.get("exclude", ())),
        include_only=tuple(user.get("include_only", ())),
        set=dict(user.get("set", {})),
    )


def _lsp_settings(user: _Layer, project: _Layer) -> LspSettings:
    """The user's `lsp` settings; the project's may turn it off, change the times, and
    add tables (used once the project file is trusted)."""
    options = {**user.lsp, **project.lsp}
    return LspSettings(
        enabled=user.lsp.get("enabled", True) and project.lsp.get("enabled", True),
        settle_time=float(options.get("settle_time", DEFAULT_SETTLE_TIME)),
        start_timeout=float(options.get("start_timeout", DEFAULT_START_TIMEOUT)),
        user=user.lsp_servers,
        project=project.lsp_servers,
    )


def _sandbox_config(
    user: Mapping[str, Any], project: Mapping[str, Any], flag: str | None
) -> SandboxConfig:
    """The user's `[sandbox]` (its mode as the flag says), tightened by the project's
    (more deny_read, network off)."""
    network = user.get("network", False) and project.get("network", True)
    return SandboxConfig(
        mode=flag or user.get("mode", "auto"),
        writable=tuple(user.get("writable", ())),
        deny_read=(*user.get("deny_read", ()), *project.get("deny_read", ())),
        network=network,
    )


def _environ() -> Mapping[str, str]:
    import os

    return os.environ


def _overlay(merged: dict[str, Any], sources: dict[str, str], where: str, **values: Any) -> None:
    for key, value in values.items():
        if value is not None and value != "":
            merged[key], sources[key] = value, where


def _resolve_provider(
    merged: Mapping[str, Any], configured: Mapping[str, ProviderSettings], env: Mapping[str, str]
) -> ProviderSettings | None:
    name = merged.get("provider")
    if name:
        if name in configured:
            return _keyed(configured[name], env)
        if name in PRESETS:
            return _keyed(PRESETS[name], env)
        known = ", ".join(sorted({*configured, *PRESETS}))
        raise ConfigError(
            f"No provider named {name!r} — use one of {known}, or add [providers.{name}] "
            f"to {paths.user_config_file()}."
        )
    if env.get("OPENAI_BASE_URL"):
        base = ProviderSettings("openai", "openai", env["OPENAI_BASE_URL"].rstrip("/"))
        # The stored "openai" key is for api.openai.com, not for whatever this URL is.
        stored = base.base_url == PRESETS["openai"].base_url
        return _keyed(base, env, stored=stored)
    if configured:
        return _keyed(next(iter(configured.values())), env)
    # Only a key in the environment: the service it belongs to.
    if env.get("OPENAI_API_KEY"):
        return _keyed(PRESETS["openai"], env)
    if env.get("ANTHROPIC_API_KEY"):
        return _keyed(PRESETS["anthropic"], env)
    return None


def _keyed(
    provider: ProviderSettings, env: Mapping[str, str], stored: bool = True
) -> ProviderSettings:
    """`provider` with its key (see the module docstring for the order)."""
    key, _ = key_for(provider, env, _stored_keys if stored else dict)
    return replace(provider, api_key=key) if key != provider.api_key else provider


def key_for(
    provider: ProviderSettings,
    env: Mapping[str, str],
    stored_keys: Callable[[], Mapping[str, str]],
) -> tuple[str | None, str]:
    """The key a provider will use and where it comes from ("" when it has none).

    `stored_keys` is called only when needed, so a run whose key is in the
    environment never opens the credentials file.
    """
    if provider.api_key:
        return provider.api_key, "api_key_env"
    variable = KEY_VARIABLES.get(provider.kind, "")
    from_env = env.get(variable) if variable else None
    if from_env and _VARIABLE_OWNERS.get(variable) == provider.name:
        return from_env, variable
    stored = stored_keys().get(provider.name)
    if stored:
        return stored, "credentials file"
    if from_env:
        return from_env, variable
    return None, ""


def _stored_keys() -> Mapping[str, str]:
    from agent_cli import credentials

    return credentials.read_keys()


@dataclass(frozen=True)
class ProviderEntry:
    """A provider as `agent providers list` shows it: never the key, only where it is."""

    provider: ProviderSettings
    preset: bool  # a built-in preset (perhaps changed by a config table)
    configured: bool  # has a [providers.NAME] table in the user's file
    key_source: str  # "" (no key), "credentials file", or the variable's name


def known_providers(environ: Mapping[str, str] | None = None) -> list[ProviderEntry]:
    """Every provider one may choose: the user's config entries, then the remaining presets."""
    env = dict(environ if environ is not None else _environ())
    configured = _read_config(paths.user_config_file(), project=False, env=env).providers
    keys = _stored_keys()
    entries = []
    presets = [(name, p) for name, p in PRESETS.items() if name not in configured]
    for name, provider in [*configured.items(), *presets]:
        _, source = key_for(provider, env, lambda: keys)
        entries.append(ProviderEntry(provider, name in PRESETS, name in configured, source))
    return entries


# ------------------------------------------------------------ config files


@dataclass
class _Layer:
    """What one config file says, checked, before the layers are merged."""

    path: Path
    values: dict[str, Any] = field(default_factory=dict)
    providers: dict[str, ProviderSettings] = field(default_factory=dict)
    rules: dict[str, list[str]] = field(default_factory=dict)
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    hooks: dict[str, tuple[Hook, ...]] = field(default_factory=dict)
    prices: dict[str, Price] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)  # [shell_environment], checked
    sandbox: dict[str, Any] = field(default_factory=dict)  # [sandbox], checked
    lsp: dict[str, Any] = field(default_factory=dict)  # `lsp` / [lsp] options, checked
    lsp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)  # [lsp.NAME]
    checks: tuple[Check, ...] = ()
    warnings: list[str] = field(default_factory=list)


def _read_config(path: Path, project: bool, env: Mapping[str, str] | None = None) -> _Layer:
    layer = _Layer(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return layer
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"Config file {path} could not be read: {e} — fix or remove it.") from e
    import tomllib  # ~2 ms, only where there is a file to read

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(
            f"Config file {path} is not valid TOML: {e} — fix that line or remove the file."
        ) from e
    bad = _Checker(path, text)
    for key, value in data.items():
        if project and key in _PROJECT_FORBIDDEN:
            layer.warnings.append(f"{path}: {key!r} is ignored in a project file, for safety.")
        elif key == "providers":
            layer.providers = _read_providers(bad, value, env if env is not None else _environ())
        elif key == "rules":
            layer.rules = _read_rules(bad, value, project, layer.warnings)
        elif key == "agents":
            layer.agents = _read_agents(bad, value)
        elif key == "hooks":
            layer.hooks = _read_hooks(bad, value, path)
        elif key == "prices":
            layer.prices = _read_prices(bad, value)
        elif key == "shell_environment":
            layer.environment = _read_environment(bad, value, project, layer.warnings)
        elif key == "sandbox":
            layer.sandbox = _read_sandbox(bad, value, project, layer.warnings)
        elif key == "lsp":
            layer.lsp, layer.lsp_servers = read_lsp(bad, value, str(path))
        elif key == "checks":
            layer.checks = _read_checks(bad, value, path)
        elif key == "subagents":
            bad.check(key, value, dict)
            for name, setting in value.items():
                if name not in _SUBAGENT_KEYS:
                    raise bad.error(f"subagents.{name}", "is not a sub-agent setting")
                number = bad.check(f"subagents.{name}", setting, int)
                if number < 0:
                    raise bad.error(f"subagents.{name}", "must be 0 or more")
                layer.values[f"subagents.{name}"] = number
        elif key in _TOP_KEYS:
            layer.values[key] = bad.check(key, value, _TOP_KEYS[key])
            if key == "mode" and value not in MODES:
                raise bad.error(key, f"is {value!r}: use {MODES_TEXT}")
        else:
            layer.warnings.append(f"{path}, line {bad.line_of(key)}: unknown key {key!r}.")
    return layer


def _read_providers(
    bad: _Checker, table: Any, env: Mapping[str, str]
) -> dict[str, ProviderSettings]:
    bad.check("providers", table, dict)
    providers: dict[str, ProviderSettings] = {}
    for name, entry in table.items():
        where = f"providers.{name}"
        bad.check(where, entry, dict)
        for key, value in entry.items():
            if key not in _PROVIDER_KEYS:
                raise bad.error(f"{where}.{key}", "is not a provider setting")
            bad.check(f"{where}.{key}", value, _PROVIDER_KEYS[key])
        for key in ("models", "headers"):
            values = entry.get(key, ())
            for item in values.values() if isinstance(values, dict) else values:
                bad.check(f"{where}.{key}", item, str)
        preset = PRESETS.get(name)
        kind = entry.get("kind", preset.kind if preset else "openai")
        if kind not in PROVIDER_KINDS:
            raise bad.error(f"{where}.kind", f"must be one of {', '.join(PROVIDER_KINDS)}")
        base_url = entry.get("base_url", preset.base_url if preset else "")
        if not base_url:
            raise bad.error(where, "needs a base_url")
        key_env = entry.get("api_key_env")
        # The variable it names, from the environment given (or the process's own).
        api_key = (env.get(key_env) or _environ().get(key_env)) if key_env else None
        provider = ProviderSettings(
            name=name,
            kind=kind,
            base_url=base_url.rstrip("/"),
            api_key=api_key,
            models=tuple(entry.get("models", ())),
            default_model=entry.get("default_model", ""),
            context_window=entry.get("context_window"),
            headers=entry.get("headers", {}),
            images=entry.get("images"),
        )
        providers[name] = provider
    return providers


def _read_agents(bad: _Checker, table: Any) -> dict[str, dict[str, Any]]:
    bad.check("agents", table, dict)
    agents: dict[str, dict[str, Any]] = {}
    for agent_id, entry in table.items():
        where = f"agents.{agent_id}"
        bad.check(where, entry, dict)
        for key, value in entry.items():
            if key not in _AGENT_KEYS:
                raise bad.error(f"{where}.{key}", "is not an agent setting")
            bad.check(f"{where}.{key}", value, _AGENT_KEYS[key])
        for key in ("args", "needs", "env"):
            values = entry.get(key, ())
            for item in values.values() if isinstance(values, dict) else values:
                bad.check(f"{where}.{key}", item, str)
        agents[agent_id] = dict(entry)
    return agents


def _read_hooks(bad: _Checker, table: Any, path: Path) -> dict[str, tuple[Hook, ...]]:
    """`[hooks]`: each event a list of commands, or of tables {command, timeout, tools}."""
    bad.check("hooks", table, dict)
    hooks: dict[str, tuple[Hook, ...]] = {}
    for event, entries in table.items():
        where = f"hooks.{event}"
        if event not in HOOK_EVENTS:
            raise bad.error(where, f"is not a hook event (use {', '.join(HOOK_EVENTS)})")
        bad.check(where, entries, list)
        found = []
        for entry in entries:
            if isinstance(entry, str):
                found.append(Hook(entry, source=str(path)))
                continue
            bad.check(where, entry, (str, dict))
            for key, value in entry.items():
                if key not in _HOOK_KEYS:
                    raise bad.error(f"{where}.{key}", "is not a hook setting")
                bad.check(f"{where}.{key}", value, _HOOK_KEYS[key])
            if not entry.get("command"):
                raise bad.error(where, "needs a command")
            tools = tuple(bad.check(f"{where}.tools", t, str) for t in entry.get("tools", ()))
            timeout = float(entry.get("timeout", DEFAULT_HOOK_TIMEOUT))
            if timeout <= 0:
                raise bad.error(f"{where}.timeout", "must be more than 0")
            found.append(Hook(entry["command"], timeout, tools, str(path)))
        hooks[event] = tuple(found)
    return hooks


def _read_checks(bad: _Checker, entries: Any, path: Path) -> tuple[Check, ...]:
    """`[[checks]]`: each a table {files, command, timeout}."""
    from agent_cli.tools.checks import DEFAULT_CHECK_TIMEOUT, Check

    bad.check("checks", entries, list)
    found = []
    for entry in entries:
        bad.check("checks", entry, dict)
        for key, value in entry.items():
            if key not in _CHECK_KEYS:
                raise bad.error(
                    f"checks.{key}", "is not a check setting (use files, command or timeout)"
                )
            bad.check(f"checks.{key}", value, _CHECK_KEYS[key])
        files = entry.get("files")
        globs = [files] if isinstance(files, str) else files or []
        if not globs or not entry.get("command"):
            raise bad.error("checks", 'needs files (a glob such as "**/*.py") and a command')
        for glob in globs:
            bad.check("checks.files", glob, str)
        timeout = float(entry.get("timeout", DEFAULT_CHECK_TIMEOUT))
        if timeout <= 0:
            raise bad.error("checks.timeout", "must be more than 0")
        found.append(Check(tuple(globs), entry["command"], timeout, str(path)))
    return tuple(found)


def _read_prices(bad: _Checker, table: Any) -> dict[str, Price]:
    """`[prices."MODEL"]` with `input` and `output` in dollars per million tokens."""
    bad.check("prices", table, dict)
    prices: dict[str, Price] = {}
    for model, entry in table.items():
        where = f"prices.{model}"
        bad.check(where, entry, dict)
        for key, value in entry.items():
            if key not in _PRICE_KEYS:
                raise bad.error(f"{where}.{key}", "is not a price (use input and output)")
            bad.check(f"{where}.{key}", value, _PRICE_KEYS[key])
        prices[model] = Price(float(entry.get("input", 0)), float(entry.get("output", 0)))
    return prices


def _read_environment(
    bad: _Checker, table: Any, project: bool, warnings: list[str]
) -> dict[str, Any]:
    """`[shell_environment]`; in a project file, everything but `exclude` is ignored."""
    bad.check("shell_environment", table, dict)
    found: dict[str, Any] = {}
    for key, value in table.items():
        where = f"shell_environment.{key}"
        if key not in _ENVIRONMENT_KEYS:
            raise bad.error(
                where,
                "is not a shell_environment setting (use inherit, ignore_default_excludes, "
                "exclude, include_only or set)",
            )
        if project and key not in _PROJECT_ENVIRONMENT_KEYS:
            warnings.append(
                f"{bad.path}, line {bad.line_of(where)}: {where!r} is ignored in a project "
                "file, for safety (a project may only add exclude patterns)."
            )
            continue
        bad.check(where, value, _ENVIRONMENT_KEYS[key])
        if key == "inherit" and value not in INHERIT_CHOICES:
            raise bad.error(where, f"is {value!r}: use all, core or none")
        if key in ("exclude", "include_only"):
            value = tuple(bad.check(where, pattern, str) for pattern in value)
        if key == "set":
            for name, text in value.items():
                if not name or "=" in name:
                    raise bad.error(where, f"names {name!r}, which cannot be a variable's name")
                bad.check(f"{where}.{name}", text, str)
        found[key] = value
    return found


def _read_sandbox(bad: _Checker, table: Any, project: bool, warnings: list[str]) -> dict[str, Any]:
    """`[sandbox]`; a project file may only tighten it: more deny_read, network = false."""
    bad.check("sandbox", table, dict)
    found: dict[str, Any] = {}
    for key, value in table.items():
        where = f"sandbox.{key}"
        if key not in _SANDBOX_KEYS:
            raise bad.error(
                where, "is not a sandbox setting (use mode, writable, deny_read or network)"
            )
        bad.check(where, value, _SANDBOX_KEYS[key])
        if project and not (key == "deny_read" or (key == "network" and value is False)):
            warnings.append(
                f"{bad.path}, line {bad.line_of(where)}: {where!r} is ignored in a project "
                "file, for safety (a project may only add deny_read or set network = false)."
            )
            continue
        if key == "mode" and value not in SANDBOX_MODES:
            raise bad.error(where, f"is {value!r}: use {', '.join(SANDBOX_MODES)}")
        if key in ("writable", "deny_read"):
            value = tuple(bad.check(where, folder, str) for folder in value)
        found[key] = value
    return found


def _read_rules(bad: _Checker, table: Any, project: bool, warnings: list[str]) -> dict:
    bad.check("rules", table, dict)
    rules: dict[str, list[str]] = {}
    for key, value in table.items():
        if key not in _RULE_KEYS:
            raise bad.error(f"rules.{key}", "is not a rule list (use allow or deny)")
        if project and key == "allow":
            warnings.append(f"{bad.path}: 'rules.allow' is ignored in a project file, for safety.")
            continue
        bad.check(f"rules.{key}", value, list)
        for rule in value:
            bad.check(f"rules.{key}", rule, str)
        rules[key] = list(value)
    return rules


class _Checker:
    """Type checks that fail with the file, the line and the key."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def check(self, key: str, value: Any, expected: type | tuple[type, ...]) -> Any:
        types = expected if isinstance(expected, tuple) else (expected,)
        ok = False if isinstance(value, bool) and bool not in types else isinstance(value, types)
        if not ok:
            names = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
            raise self.error(key, f"must be {names}, not {value!r}")
        return value

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(
            f"Config file {self.path}, line {self.line_of(key)}: {key!r} {problem} — fix it."
        )

    def line_of(self, dotted: str) -> int:
        """The line where a (dotted) key is set, for the message; 1 when it cannot be found."""
        parts = dotted.split(".")
        start, rest = 0, parts
        for n in range(len(parts), 0, -1):
            header = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(map(_key_re, parts[:n])) + r"\s*\]")
            found = next((i for i, s in enumerate(self.lines) if header.match(s)), None)
            if found is not None:
                if n == len(parts):
                    return found + 1
                start, rest = found, parts[n:]
                break
        pattern = re.compile(r"^\s*" + _key_re(rest[0]) + r"\s*[=.]")
        for number in range(start, len(self.lines)):
            if pattern.match(self.lines[number]):
                return number + 1
        return start + 1


def _key_re(key: str) -> str:
    return r"""(?:"|')?""" + re.escape(key) + r"""(?:"|')?"""


_TYPE_NAMES = {
    str: "a string",
    int: "a whole number",
    float: "a number",
    list: "a list",
    dict: "a table",
    bool: "true or false",
}
