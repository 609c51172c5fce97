"""`agent providers list|add|rm`: model services and their keys (SPEC §2, §13).

The entry (kind, base URL, models) goes into the user's config file as a
`[providers.NAME]` table; the key goes into the credentials file, never into
the config file, and never onto a command line: it is asked with a hidden
prompt, or read from stdin with `--key-stdin` for scripts.

The config file is the person's: `add` and `rm` change only the one table
(and its sub-tables), keeping every other line and comment as it was, and
write the file atomically. A table written some other way (inline, dotted
keys) is left alone with a message saying to edit it by hand.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from agent_cli.commands.common import guarded, start_debug_log
from agent_cli.errors import ConfigError, UsageError

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TABLE_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(?:#.*)?$")
DEBUG_HELP = "Write a debug log; show tracebacks."
KEY_PROMPT = "API key for {name} (hidden; Enter for none): "


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="providers",
        help="Model services: list them (presets included), add one with its key, remove one.",
        epilog="Examples: agent providers · agent providers add work --kind openai "
        "--base-url https://llm.example.com/v1 --model big · agent providers rm work",
        invoke_without_command=True,
        no_args_is_help=False,
    )
    group.callback()(_default)
    group.command("list", epilog="Examples: agent providers list · agent providers list --json")(
        list_providers
    )
    group.command(
        "add",
        epilog="Examples: agent providers add openrouter · "
        "agent providers add work --kind openai --base-url https://llm.example.com/v1 "
        "--model big --model small · "
        "pass show llm | agent providers add work --base-url URL --key-stdin",
    )(add)
    group.command("rm", epilog="Examples: agent providers rm work")(remove)
    app.add_typer(group)


def _default(context: typer.Context) -> None:
    """Model services: with no subcommand, list them."""
    if context.invoked_subcommand is None:
        list_providers()


# --------------------------------------------------------------------- list


def list_providers(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per provider.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help=DEBUG_HELP)] = False,
) -> None:
    """Each provider: name, kind, base URL, models, and whether it has a key (never the key)."""

    def action() -> int:
        from agent_cli.settings import known_providers

        if debug:
            start_debug_log()
        for entry in known_providers():
            provider = entry.provider
            origin = "preset" if entry.preset else "config"
            if entry.preset and entry.configured:
                origin = "preset, config"
            row = {
                "name": provider.name,
                "kind": provider.kind,
                "base_url": provider.base_url,
                "models": list(provider.models),
                "default_model": provider.default_model,
                "has_key": bool(entry.key_source),
                "key_from": entry.key_source,
                "origin": origin,
            }
            print(json.dumps(row) if as_json else _line(row))
        return 0

    raise typer.Exit(guarded(debug, action))


def _line(row: dict[str, Any]) -> str:
    key = f"key: {row['key_from']}" if row["has_key"] else "no key"
    models = ", ".join(row["models"]) or "(the server's)"
    return (
        f"{row['name']:<12} {row['kind']:<17} {row['base_url']}\n"
        f"{'':<12} models: {models}  ·  {key}  ·  {row['origin']}"
    )


# ---------------------------------------------------------------------- add


def add(
    name: Annotated[str, typer.Argument(help="The provider's name (a preset's name to use it).")],
    kind: Annotated[
        str | None,
        typer.Option(help="openai, anthropic or openai-responses (a preset's own by default)."),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="The API's address, e.g. https://llm.example.com/v1.")
    ] = None,
    model: Annotated[
        list[str] | None, typer.Option("--model", help="A model it offers (repeatable).")
    ] = None,
    default_model: Annotated[
        str | None, typer.Option(help="The model to use (default: the first --model).")
    ] = None,
    key_stdin: Annotated[
        bool, typer.Option("--key-stdin", help="Read the key from stdin (for scripts).")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help=DEBUG_HELP)] = False,
) -> None:
    """Add (or replace) a provider: its entry in your config file, its key in the credentials file.

    The key is asked with a hidden prompt (or read from stdin with --key-stdin); it is never
    a command-line argument, so it never shows in a process listing or shell history.
    """

    def action() -> int:
        if debug:
            start_debug_log()
        entry = _entry(name, kind, base_url, model or [], default_model)
        key = _read_key(name, key_stdin)
        return _add(name, entry, key)

    raise typer.Exit(guarded(debug, action))


def _entry(
    name: str, kind: str | None, base_url: str | None, models: list[str], default: str | None
) -> dict[str, Any]:
    from agent_cli.settings import PRESETS, PROVIDER_KINDS

    if not NAME.fullmatch(name):
        raise UsageError(
            f"{name!r} is not a usable provider name — use letters, digits, '_', '-' or '.'."
        )
    preset = PRESETS.get(name)
    kind = kind or (preset.kind if preset else "openai")
    if kind not in PROVIDER_KINDS:
        raise UsageError(f"--kind {kind!r} is not known — use {', '.join(PROVIDER_KINDS)}.")
    base_url = (base_url or (preset.base_url if preset else "")).strip().rstrip("/")
    if not base_url:
        raise UsageError(
            f"{name!r} is not a preset, so it needs --base-url (e.g. https://llm.example.com/v1)."
        )
    if not base_url.lower().startswith(("http://", "https://")):
        raise UsageError(f"--base-url {base_url!r} is not an http(s) address — fix it.")
    entry: dict[str, Any] = {"kind": kind, "base_url": base_url}
    if models:
        entry["models"] = list(dict.fromkeys(models))
    if default or models:
        entry["default_model"] = default or models[0]
    return entry


def _read_key(name: str, from_stdin: bool) -> str | None:
    """The key from stdin or a hidden prompt; None for none (a local server needs none)."""
    if from_stdin:
        key = sys.stdin.read().strip() if sys.stdin is not None else ""
        if not key:
            raise UsageError("--key-stdin was given but stdin was empty — pipe the key in.")
        return key
    if sys.stdin is None or not sys.stdin.isatty():
        return None  # nobody to ask; said in the summary
    import getpass

    try:
        key = getpass.getpass(KEY_PROMPT.format(name=name), stream=sys.stderr)
    except (EOFError, KeyboardInterrupt):
        raise KeyboardInterrupt from None
    return key.strip() or None


def _add(name: str, entry: dict[str, Any], key: str | None) -> int:
    from agent_cli import credentials, paths

    config = paths.user_config_file()
    replaced = write_provider_table(config, name, entry)
    verb = "Replaced" if replaced else "Added"
    print(f"{verb} the provider {name!r} in {config}.")
    if key is not None:
        print(f"Stored its key in {credentials.set_key(name, key)} (readable by you only).")
    elif credentials.has_key(name):
        print("Kept its stored key.")
    else:
        print("No key stored (a local server needs none; give one with --key-stdin).")
    print(
        f"Use it with: agent --provider {name}   ·   list its models: agent models "
        f"--provider {name}"
    )
    return 0


# ----------------------------------------------------------------------- rm


def remove(
    name: Annotated[str, typer.Argument(help="The provider to remove (see agent providers).")],
    debug: Annotated[bool, typer.Option("--debug", help=DEBUG_HELP)] = False,
) -> None:
    """Remove a provider's table from your config file and its stored key."""

    def action() -> int:
        from agent_cli import credentials, paths

        if debug:
            start_debug_log()
        config = paths.user_config_file()
        table = remove_provider_table(config, name)
        key = credentials.remove_key(name)
        if not table and not key:
            raise UsageError(
                f"There is no provider {name!r} in {config} and no key stored for it — see "
                "agent providers list."
            )
        done = [f"its table from {config}"] if table else []
        done += ["its stored key"] if key else []
        print(f"Removed the provider {name!r}: {' and '.join(done)}.")
        return 0

    raise typer.Exit(guarded(debug, action))


# ------------------------------------------------------- the config file writer


def write_provider_table(path: Path, name: str, entry: dict[str, Any]) -> bool:
    """Put `[providers.NAME]` with `entry` into the TOML file at `path`; True if it replaced one.

    Keys of an existing table that `entry` does not set (context_window, headers,
    api_key_env) are kept; every line outside the table is kept as it was.
    """
    text, data = _read(path)
    old = data.get("providers", {}).get(name)
    lines, found = _without_table(text, name)
    if old is not None and not found:
        raise _hand_edit(path, name)
    merged = {**(old or {}), **entry}
    body = "".join(lines).rstrip("\n")
    block = _render_table(name, merged)
    new_text = f"{body}\n\n{block}" if body else block
    _check_and_write(path, new_text, data, name, merged)
    return old is not None


def remove_provider_table(path: Path, name: str) -> bool:
    """Remove `[providers.NAME]` (and its sub-tables) from `path`; False if it was not there."""
    text, data = _read(path)
    if name not in data.get("providers", {}):
        return False
    lines, found = _without_table(text, name)
    if not found:
        raise _hand_edit(path, name)
    _check_and_write(path, "".join(lines).rstrip("\n") + "\n", data, name, None)
    return True


def _read(path: Path) -> tuple[str, dict[str, Any]]:
    import tomllib

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "", {}
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"Config file {path} could not be read: {e} — fix or remove it.") from e
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(
            f"Config file {path} is not valid TOML: {e} — fix it first; it was not changed."
        ) from e


def _without_table(text: str, name: str) -> tuple[list[str], bool]:
    """The file's lines minus `[providers.NAME]` and `[providers.NAME.*]` tables; and
    whether there was one. Comment lines at the end of a dropped table stay, with the
    table that follows (they usually describe it)."""
    result: list[str] = []
    dropping = found = False
    pending: list[str] = []  # comments at the end of the dropped table so far
    for line in text.splitlines(keepends=True):
        header = _TABLE_HEADER.match(line)
        parts = _split_key(header.group(1)) if header else []
        if parts:  # a table header (a line of a multi-line array is not one)
            starts = parts[:2] == ["providers", name]
            if dropping and not starts:
                result.extend(pending)
            dropping, found, pending = starts, found or starts, []
        if not dropping:
            result.append(line)
        elif line.lstrip().startswith("#"):
            pending.append(line)
        elif line.strip():
            pending = []
    return result, found


def _split_key(dotted: str) -> list[str]:
    """`providers."llama.cpp".headers` → ["providers", "llama.cpp", "headers"]."""
    import tomllib

    try:
        data = tomllib.loads(f"[{dotted}]\n")
    except tomllib.TOMLDecodeError:
        return []
    parts: list[str] = []
    while isinstance(data, dict) and len(data) == 1:
        key = next(iter(data))
        parts.append(key)
        data = data[key]
    return parts


def _render_table(name: str, entry: dict[str, Any]) -> str:
    lines = [f"[providers.{_key(name)}]"]
    lines += [f"{_key(key)} = {_value(value)}" for key, value in entry.items()]
    return "\n".join(lines) + "\n"


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _string(value: str) -> str:
    # A JSON string without ASCII escaping is a valid TOML basic string.
    return json.dumps(value, ensure_ascii=False)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items())
        return "{" + pairs + "}" if not pairs else "{ " + pairs + " }"
    raise UsageError(f"Cannot write {value!r} to a config file.")


def _check_and_write(
    path: Path, text: str, before: dict[str, Any], name: str, expected: dict[str, Any] | None
) -> None:
    """Write only a file that parses and says what was meant — this table as `expected`,
    everything else as `before` — atomically, keeping the file's mode."""
    import tomllib

    try:
        after = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise _hand_edit(path, name) from None
    if _without(after, name) != _without(before, name) or (
        after.get("providers", {}).get(name) != expected
    ):
        raise _hand_edit(path, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _without(data: dict[str, Any], name: str) -> dict[str, Any]:
    providers = {k: v for k, v in data.get("providers", {}).items() if k != name}
    return {**data, "providers": providers}


def _hand_edit(path: Path, name: str) -> ConfigError:
    return ConfigError(
        f"The provider {name!r} is written in {path} in a way this command cannot change safely "
        f"(not as a [providers.{name}] table) — edit that file by hand."
    )
