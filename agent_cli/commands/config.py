"""`agent config [show|path|edit]`: the settings, where each comes from, and the file (SPEC §2).

`show` prints every setting as it is after merging (flags > environment >
project file > user file > defaults) with where its value came from. No
secret is ever printed: a key reads "set (from WHERE)", a header "***", an
agent's variable named like a secret "***".
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import typer

from agent_cli.commands.common import guarded, start_debug_log, workspace_from
from agent_cli.errors import UsageError

if TYPE_CHECKING:
    from agent_cli.settings import ProviderEntry, ProviderSettings, Settings

JSON = Annotated[bool, typer.Option("--json", help="One JSON object instead of a table.")]
CWD = Annotated[Path | None, typer.Option(help="The workspace (its .agent/config.toml counts).")]
DEBUG = Annotated[bool, typer.Option("--debug", help="Write a debug log; show tracebacks.")]
MASK = "***"
DEFAULT = "default"
# The variable each environment-set key is read from (settings says only "environment").
ENVIRONMENT_NAMES = {"model": "AGENT_MODEL", "provider": "AGENT_PROVIDER"}
SECRET_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD")
FROM_BASE_URL = "environment (OPENAI_BASE_URL)"
MODE_NOTE = "{}; read-only in agent run without a terminal"


class Row(NamedTuple):
    key: str  # dotted, as in the config file
    value: Any  # None or "": not set, the `note` says what happens then
    source: str  # a file, "environment (VAR)", "command line", "preset", or "default"
    note: str = ""

    @property
    def unset(self) -> str:
        """What happens when the value is not set ("" when it is)."""
        return self.note if self.value in (None, "") else ""


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="config",
        help="The settings: show the merged values and where each comes from, the file, edit it."
        "\n\nWith no subcommand, shows them. Precedence: command-line flags > environment > "
        "the project's .agent/config.toml > the user's config.toml > defaults.",
        epilog="Examples: agent config · agent config show --json | jq .settings.model · "
        "agent config path · EDITOR=nano agent config edit",
        invoke_without_command=True,
        no_args_is_help=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    group.callback()(_default)
    group.command(
        "show",
        epilog="Examples: agent config show · agent config show --json · "
        "agent config show --provider ollama (what that flag would change)",
    )(show)
    group.command("path", epilog="Examples: agent config path · agent config path --json")(path)
    group.command(
        "edit",
        epilog="Examples: agent config edit · VISUAL='code --wait' agent config edit",
    )(edit)
    app.add_typer(group)


def _default(context: typer.Context, as_json: JSON = False, cwd: CWD = None) -> None:
    """With no subcommand, show the settings."""
    if context.invoked_subcommand is not None:
        if as_json or cwd is not None:
            print(
                f"agent: put the options after the subcommand "
                f"(agent config {context.invoked_subcommand} ...).",
                file=sys.stderr,
            )
            raise typer.Exit(2)
        return
    show(as_json=as_json, cwd=cwd)


# --------------------------------------------------------------------- show


def show(
    as_json: JSON = False,
    model: Annotated[str | None, typer.Option(help="As if given to a run: the model.")] = None,
    provider: Annotated[
        str | None, typer.Option(help="As if given to a run: the provider.")
    ] = None,
    mode: Annotated[str | None, typer.Option(help="As if given to a run: the mode.")] = None,
    cwd: CWD = None,
    debug: DEBUG = False,
) -> None:
    """Show every setting's value and where it comes from (secrets masked)."""

    def action() -> int:
        from agent_cli.settings import Flags, load_settings

        if debug:
            start_debug_log()
        workspace = workspace_from(cwd)
        settings = load_settings(workspace, Flags(model=model, provider=provider, mode=mode))
        for warning in settings.warnings:
            print(f"agent: {warning}", file=sys.stderr)
        rows = setting_rows(settings)
        if as_json:
            print(json.dumps(_as_json(settings, rows), indent=2, ensure_ascii=False))
        else:
            _print_rows(settings, rows)
        return 0

    raise typer.Exit(guarded(debug, action))


def setting_rows(settings: Settings) -> list[Row]:
    """Every setting with its value and source; secrets already masked."""
    from agent_cli import settings as defaults

    sources = settings.sources

    def source(key: str) -> str:
        where = sources.get(key, DEFAULT)
        variable = ENVIRONMENT_NAMES.get(key)
        return f"environment ({variable})" if where == "environment" and variable else where

    provider = settings.provider
    model_source = source("model")
    if "model" not in sources and provider is not None and settings.model:
        model_source = f"provider {provider.name}'s default_model"
    rows = [
        Row("model", settings.model, model_source, "the server's first model"),
        Row("provider", None, DEFAULT, "none configured"),
        Row("mode", settings.mode, source("mode"), MODE_NOTE.format(defaults.DEFAULT_MODE)),
        Row("max_rounds", settings.max_rounds, source("max_rounds")),
        Row("connect_timeout", settings.connect_timeout, source("connect_timeout")),
        Row("read_timeout", settings.read_timeout, source("read_timeout")),
        Row("theme", settings.theme, source("theme"), "the TUI's default"),
        Row("reduce_motion", settings.reduce_motion, source("reduce_motion")),
        Row("notify", settings.notify, source("notify")),
        Row("subagents.max_depth", settings.subagent_depth, source("subagents.max_depth")),
        Row("subagents.max_rounds", settings.subagent_rounds, source("subagents.max_rounds")),
    ]
    if provider is not None:
        entry = _entry(provider.name)
        chosen_by = _provider_source(settings, entry)
        rows[1] = Row("provider", provider.name, chosen_by)
        rows += _provider_rows(provider, entry, from_env=chosen_by == FROM_BASE_URL)
    rows += _table_rows(settings)
    return rows


def _provider_source(settings: Settings, entry: ProviderEntry | None) -> str:
    """Why this provider: named somewhere, OPENAI_BASE_URL, the first configured, or a key."""
    from agent_cli import paths

    if "provider" in settings.sources:
        return (
            "environment (AGENT_PROVIDER)"
            if settings.sources["provider"] == "environment"
            else settings.sources["provider"]
        )
    # Settings records no source for a provider it was not told by name; see _resolve_provider.
    if os.environ.get("OPENAI_BASE_URL"):
        return FROM_BASE_URL
    if entry is not None and entry.configured:
        return f"{paths.user_config_file()} (first provider)"
    anthropic = settings.provider is not None and settings.provider.kind == "anthropic"
    return f"environment ({'ANTHROPIC_API_KEY' if anthropic else 'OPENAI_API_KEY'})"


def _provider_rows(
    provider: ProviderSettings, entry: ProviderEntry | None, from_env: bool
) -> list[Row]:
    from agent_cli import paths

    table = str(paths.user_config_file()) if entry and entry.configured else "preset"
    if from_env:
        table = FROM_BASE_URL
    rows = [
        Row("provider.kind", provider.kind, table),
        Row("provider.base_url", provider.base_url, table),
    ]
    if provider.models:
        rows.append(Row("provider.models", list(provider.models), table))
    if provider.default_model:
        rows.append(Row("provider.default_model", provider.default_model, table))
    if provider.context_window:
        rows.append(Row("provider.context_window", provider.context_window, table))
    rows.append(Row("provider.api_key", _key_state(provider, entry, from_env), ""))
    rows += [Row(f"provider.headers.{name}", MASK, table) for name in provider.headers]
    return rows


def _key_state(provider: ProviderSettings, entry: ProviderEntry | None, from_env: bool) -> str:
    """ "set (from WHERE)" or "not set": never the key."""
    from agent_cli import paths

    if not provider.api_key:
        return "not set"
    if from_env:
        where = "OPENAI_API_KEY"
    else:
        where = entry.key_source if entry and entry.key_source else "the environment"
        if where == "credentials file":
            where = f"the credentials file {paths.credentials_file()}"
        elif where == "api_key_env":
            where = _api_key_env(provider.name) or "api_key_env"
    return f"set (from {where})"


def _api_key_env(name: str) -> str:
    """The variable a provider's table names with `api_key_env` (settings keeps only the key)."""
    import tomllib

    from agent_cli import paths

    try:
        data = tomllib.loads(paths.user_config_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    variable = data.get("providers", {}).get(name, {}).get("api_key_env")
    return variable if isinstance(variable, str) else ""


def _entry(name: str) -> ProviderEntry | None:
    from agent_cli.settings import known_providers

    return next((e for e in known_providers() if e.provider.name == name), None)


def _table_rows(settings: Settings) -> list[Row]:
    """The tables: rules, hooks, agents, prices and the commands' environment."""
    from agent_cli import paths

    user = str(paths.user_config_file())
    project = str(paths.project_config_file(settings.workspace))
    rows = []
    if settings.allow:
        rows.append(Row("rules.allow", list(settings.allow), user))
    if settings.deny:
        both = paths.project_config_file(settings.workspace).is_file()
        rows.append(Row("rules.deny", list(settings.deny), f"{user}, {project}" if both else user))
    for hooks in (settings.hooks, settings.project_hooks):
        for event, entries in hooks.items():
            for hook in entries:
                rows.append(Row(f"hooks.{event}", hook.command, hook.source))
    for agent_id, agent in settings.agents.items():
        rows.append(Row(f"agents.{agent_id}", _masked_agent(agent), user))
    for model, price in settings.prices.items():
        dollars = {"input": price.input, "output": price.output}
        rows.append(Row(f"prices.{model}", dollars, "config file"))
    policy = settings.shell_environment
    if policy != type(policy)():
        shown = {
            "inherit": policy.inherit,
            "ignore_default_excludes": policy.ignore_default_excludes,
            "exclude": list(policy.exclude),
            "include_only": list(policy.include_only),
            "set": {name: MASK for name in policy.set},  # a value may be a token
        }
        rows.append(Row("shell_environment", shown, "config file"))
    return rows


def _masked_agent(agent: Mapping[str, Any]) -> dict[str, Any]:
    shown = dict(agent)
    env = agent.get("env")
    if isinstance(env, Mapping):
        shown["env"] = {
            name: MASK if any(word in name.upper() for word in SECRET_WORDS) else value
            for name, value in env.items()
        }
    return shown


def _as_json(settings: Settings, rows: list[Row]) -> dict[str, Any]:
    return {
        "workspace": str(settings.workspace),
        "files": _files(settings.workspace),
        "settings": {
            row.key: {
                "value": row.value,
                "from": row.source,
                **({"when_unset": row.unset} if row.unset else {}),
            }
            for row in rows
        },
        "warnings": list(settings.warnings),
    }


def _print_rows(settings: Settings, rows: list[Row]) -> None:
    """A table; the two config files are named once above it and by label in it."""
    from rich.console import Console
    from rich.table import Table

    files = _files(settings.workspace)
    labels = {file["path"]: f"{name} file" for name, file in files.items()}
    console = Console(highlight=False, markup=False)  # titles and values are text, not markup
    console.print(f"workspace     {settings.workspace}")
    for name, file in files.items():
        state = "" if file["exists"] else "  (does not exist)"
        console.print(f"{name + ' file':<13} {file['path']}{state}")
    console.print()
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("SETTING", no_wrap=True, style="cyan")
    table.add_column("VALUE", overflow="fold", ratio=3)
    table.add_column("FROM", overflow="fold", style="dim", ratio=2)
    for row in rows:
        shown = f"({row.unset})" if row.unset else _text(row.value)
        source = row.source
        for path, label in labels.items():
            source = source.replace(path, label)
        table.add_row(row.key, shown, source)
    console.print(table)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "(none)"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_text(v)}" for k, v in value.items())
    return str(value)


# --------------------------------------------------------------------- path


def path(as_json: JSON = False, cwd: CWD = None) -> None:
    """Print the user config file and the project config file, and whether each exists."""

    def action() -> int:
        files = _files(workspace_from(cwd))
        if as_json:
            print(json.dumps(files, indent=2))
            return 0
        for name, file in files.items():
            state = "exists" if file["exists"] else "does not exist"
            print(f"{name + ':':<9} {file['path']}  ({state})")
        return 0

    raise typer.Exit(guarded(False, action))


def _files(workspace: Path) -> dict[str, dict[str, Any]]:
    from agent_cli import paths

    user, project = paths.user_config_file(), paths.project_config_file(workspace)
    return {
        "user": {"path": str(user), "exists": user.is_file()},
        "project": {"path": str(project), "exists": project.is_file()},
    }


# --------------------------------------------------------------------- edit


def edit(cwd: CWD = None) -> None:
    """Open the user config file in $VISUAL or $EDITOR (made from a template if missing).

    Afterwards the file is read again: a mistake is reported at once.
    """

    def action() -> int:
        from agent_cli import paths
        from agent_cli.settings import load_settings

        file = paths.user_config_file()
        editor = _editor(file)
        if not file.exists():
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(template(), encoding="utf-8")
            print(f"Created {file} from a template (every line a comment).")
        try:
            status = subprocess.run([*editor, str(file)], check=False).returncode
        except OSError as e:
            raise UsageError(
                f"The editor {editor[0]!r} could not be started ({e.strerror or e}) — "
                "set VISUAL or EDITOR to an editor that is installed."
            ) from e
        if status != 0:
            print(f"agent: the editor exited with status {status}.", file=sys.stderr)
            return 1
        settings = load_settings(workspace_from(cwd))  # a bad file: ConfigError, exit 2
        for warning in settings.warnings:
            print(f"agent: {warning}", file=sys.stderr)
        print(f"{file} is valid.")
        return 0

    raise typer.Exit(guarded(False, action))


def _editor(file: Path) -> list[str]:
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or ""
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise UsageError(f"The editor command {command!r} cannot be parsed ({e}) — fix it.") from e
    if not words:
        raise UsageError(
            f"No editor is set — set VISUAL or EDITOR (for example EDITOR=nano), or edit {file} "
            "yourself."
        )
    return words


def template() -> str:
    """The user config file as first written: every key, commented out, with its default."""
    from agent_cli import settings as s

    return f"""\
# agent's user settings. Precedence: command-line flags > environment >
# the project's .agent/config.toml > this file > defaults.
# Remove the leading "# " of a line to set it. `agent config show` shows the result.

# model = "gpt-4o"              # default: the provider's default_model, else the server's first
# provider = "openai"           # a [providers.NAME] entry or a preset: {", ".join(s.PRESETS)}
# mode = "{s.DEFAULT_MODE}"                  # ask, auto, read-only or full
# max_rounds = {s.DEFAULT_MAX_ROUNDS}
# connect_timeout = {s.DEFAULT_CONNECT_TIMEOUT:g}          # seconds
# read_timeout = {s.DEFAULT_READ_TIMEOUT:g}            # seconds of silence in a stream
# theme = ""                    # a TUI theme; empty: the default
# reduce_motion = false         # no spinners or animation in the TUI
# notify = true                 # a notification or bell when a run needs you

# [providers.work]              # the key goes in with `agent providers add work`, not here
# kind = "openai"               # {", ".join(s.PROVIDER_KINDS)}
# base_url = "https://llm.example.com/v1"
# models = ["big", "small"]
# default_model = "big"
# context_window = 128000
# api_key_env = "WORK_API_KEY"  # read the key from this variable
# headers = {{ "X-Team" = "tools" }}

# [rules]
# allow = ["exec_shell_command(pytest *)", "edit_file(src/**)"]   # this file only
# deny = ["exec_shell_command(rm *)", "write_file(secrets/**)"]

# [shell_environment]         # what commands and MCP servers get of your environment
# inherit = "all"               # all, core or none
# exclude = ["AWS_*"]           # on top of names with KEY, SECRET, TOKEN or PASSWORD
# set = {{ CI = "1" }}

# [subagents]
# max_depth = {s.DEFAULT_SUBAGENT_DEPTH}                 # 0 turns the task tool off
# max_rounds = {s.DEFAULT_SUBAGENT_ROUNDS}

# [prices."gpt-4o"]             # dollars per million tokens
# input = 2.5
# output = 10
"""
