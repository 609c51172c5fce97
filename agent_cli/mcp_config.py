"""`mcp.json`: the MCP servers of the user and of the workspace, and workspace trust.

Two files in the common `{"mcpServers": {NAME: {...}}}` format: the user's
(`config_dir()/mcp.json`) and the workspace's (`.agent/mcp.json`); a
workspace entry replaces a user entry of the same name. The workspace file is
used only once the person said yes to it: a cloned repository must not start
programs by itself. A yes is recorded per workspace and per file content
(`data_dir()/mcp-trust.json`, never in the repository), so a file that
changed is asked about again. How to ask is the front end's business; this
module only records the answer.

A file that does not parse or has a bad entry is an error naming the file,
the line or the server, and the key — never a silent fallback.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agent_cli import paths
from agent_cli.errors import ConfigError
from agent_cli.tools.mcp import DEFAULT_CALL_TIMEOUT_MS, OAuthSettings, ServerConfig

FILE_NAME = "mcp.json"
TRUST_FILE = "mcp-trust.json"
HTTP_TYPES = ("http", "streamable-http", "streamableHttp", "streamable_http")
KNOWN_KEYS = frozenset(
    {"type", "command", "args", "env", "cwd", "timeout_ms", "url", "headers", "sandbox", "network"}
    | {"allow", "deny", "disabled", "description", "oauth"}
)
OAUTH_KEYS = frozenset(
    {"client_id", "client_secret_env", "client_metadata_url", "callback_port"}
    | {"token_endpoint_auth_method"}
)
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")

__all__ = [
    "ServerConfig",
    "add_server",
    "is_trusted",
    "load_servers",
    "pending_trust",
    "read_file",
    "remove_server",
    "trust",
    "user_file",
    "workspace_file",
]


def user_file() -> Path:
    return paths.config_dir() / FILE_NAME


def workspace_file(workspace: Path) -> Path:
    return workspace / ".agent" / FILE_NAME


# ------------------------------------------------------------------ reading


def load_servers(
    workspace: Path, *, trusted: Callable[[Path], bool]
) -> tuple[list[ServerConfig], list[str]]:
    """The servers to use here (disabled ones included, marked) and warnings.

    `trusted(file)` is asked only when the workspace file has servers; it may
    ask the person (and call `trust`). When it says no, the file is ignored
    and a warning says so.
    """
    servers, warnings = read_file(user_file(), "user")
    chosen = {s.name: s for s in servers}
    local = workspace_file(workspace)
    found, more = read_file(local, "workspace")
    if found:
        if trusted(local):
            warnings += more
            chosen.update((s.name, s) for s in found)
        else:
            names = ", ".join(s.name for s in found)
            warnings.append(
                f"{local} was ignored: this workspace's MCP servers ({names}) are not trusted "
                "yet. Start agent on a terminal here to be asked about them."
            )
    return list(chosen.values()), warnings


def pending_trust(workspace: Path) -> tuple[Path, list[ServerConfig]] | None:
    """The workspace file and its servers when there are servers not yet trusted.

    For a front end that asks in its own way before calling `load_servers`.
    """
    local = workspace_file(workspace)
    found, _ = read_file(local, "workspace")
    if found and not is_trusted(workspace, local):
        return local, found
    return None


def read_file(file: Path, source: str) -> tuple[list[ServerConfig], list[str]]:
    """The entries of one `mcp.json` ([] when it does not exist), and warnings."""
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], []
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{file} could not be read ({e}) — fix or remove it.") from e
    if not text.strip():
        return [], []
    try:
        data = json.loads(text, object_pairs_hook=_refuse_repeats)
    except json.JSONDecodeError as e:
        raise ConfigError(
            f"{file}, line {e.lineno}, column {e.colno}: not valid JSON ({e.msg}) — fix it."
        ) from e
    except _Repeated as e:
        raise ConfigError(
            f"{file}{_where(text, e.key)}: {e.key!r} is given twice in one object (only one "
            "would be used) — keep one."
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f'{file}: expected a JSON object with "mcpServers" — fix it.')
    warnings = [
        f'{file}: unknown key {key!r} ignored (only "mcpServers" is read).'
        for key in data
        if key != "mcpServers"
    ]
    entries = data.get("mcpServers", {})
    if not isinstance(entries, dict):
        raise ConfigError(f'{file}: "mcpServers" must be an object of servers by name — fix it.')
    servers = []
    for name, entry in entries.items():
        server, unknown = _entry(file, source, name, entry)
        servers.append(server)
        warnings += [f"{file}: server {name!r}: unknown key {key!r} ignored." for key in unknown]
    return servers, warnings


class _Repeated(ValueError):
    """A key given twice in one JSON object: json.loads would keep the last without a word."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _refuse_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _Repeated(key)
        data[key] = value
    return data


def _where(text: str, key: str) -> str:
    """Where the repeat is: the line of the second of just two, else every line with the key."""
    pattern = re.escape(json.dumps(key)) + r"\s*:"
    lines = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(pattern, text)]
    if len(lines) == 2:
        return f", line {lines[1]}"
    unique = sorted(set(lines))
    if len(unique) == 1:
        return f", line {unique[0]}"
    return ", lines " + ", ".join(map(str, unique)) if unique else ""  # written with escapes


def _entry(file: Path, source: str, name: str, entry: Any) -> tuple[ServerConfig, list[str]]:
    def bad(key: str, what: str) -> ConfigError:
        return ConfigError(f"{file}: server {name!r}: {key!r} must be {what} — fix it.")

    if not name.strip():
        raise ConfigError(f"{file}: a server has an empty name — give it a name.")
    if not isinstance(entry, dict):
        raise ConfigError(f"{file}: server {name!r} must be an object — fix it.")
    kind = entry.get("type")
    if kind is not None and kind not in ("stdio", "sse") and kind not in HTTP_TYPES:
        raise bad("type", '"stdio", "http" or "sse"')
    if ("command" in entry) == ("url" in entry):
        raise ConfigError(
            f'{file}: server {name!r} needs either "command" (a program) or "url" (Streamable '
            "HTTP), not both or neither — fix it."
        )
    remote = (*HTTP_TYPES, "sse")
    if (kind == "stdio" and "url" in entry) or (kind in remote and "command" in entry):
        raise bad("type", f"consistent with {'command' if 'command' in entry else 'url'!r}")
    strings = _strings(entry, "args", bad)
    timeout = entry.get("timeout_ms", DEFAULT_CALL_TIMEOUT_MS)
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0:
        raise bad("timeout_ms", "a positive whole number of milliseconds")
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        raise bad("disabled", "true or false")
    url = entry.get("url", "")
    if "url" in entry and (not isinstance(url, str) or not url.startswith(("http://", "https://"))):
        raise bad("url", "an http:// or https:// address")
    command = entry.get("command", "")
    if "command" in entry and (not isinstance(command, str) or not command.strip()):
        raise bad("command", "a program to run")
    cwd = entry.get("cwd", "")
    if not isinstance(cwd, str):
        raise bad("cwd", "a folder")
    sandboxed, network = entry.get("sandbox", False), entry.get("network", False)
    if not isinstance(sandboxed, bool) or not isinstance(network, bool):
        raise bad("sandbox" if not isinstance(sandboxed, bool) else "network", "true or false")
    if sandboxed and "url" in entry:
        raise bad("sandbox", 'left out for a "url" server (only a stdio server runs here)')
    oauth, unknown = _oauth(entry, bad)
    if oauth is not None and "url" not in entry:
        raise bad("oauth", 'left out for a "command" server (OAuth is for "url" servers)')
    server = ServerConfig(
        name=name,
        command=command,
        args=strings,
        env=_mapping(entry, "env", bad),
        cwd=cwd,
        timeout_ms=timeout,
        url=url,
        headers=_mapping(entry, "headers", bad),
        allow=_strings(entry, "allow", bad),
        deny=_strings(entry, "deny", bad),
        disabled=disabled,
        sandbox=sandboxed,
        network=network,
        source=source,
        file=file,
        sse=kind == "sse",
        oauth=oauth,
    )
    return server, [k for k in entry if k not in KNOWN_KEYS] + unknown


def _oauth(
    entry: dict, bad: Callable[[str, str], ConfigError]
) -> tuple[OAuthSettings | None, list[str]]:
    """An entry's `"oauth"` object, and its unknown keys (named `oauth.KEY`)."""
    if "oauth" not in entry:
        return None, []
    value = entry["oauth"]
    if not isinstance(value, dict):
        raise bad("oauth", 'an object, e.g. {"client_id": "…", "client_secret_env": "VAR"}')
    for key in (
        "client_id",
        "client_secret_env",
        "client_metadata_url",
        "token_endpoint_auth_method",
    ):
        if not isinstance(value.get(key, ""), str):
            raise bad(f"oauth.{key}", "a string")
    secret_env = value.get("client_secret_env", "")
    if secret_env and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", secret_env):
        raise bad("oauth.client_secret_env", "the name of an environment variable")
    metadata_url = value.get("client_metadata_url", "")
    if metadata_url and not metadata_url.startswith("https://"):
        raise bad("oauth.client_metadata_url", "an https:// address")
    port = value.get("callback_port", 0)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise bad("oauth.callback_port", "a port number (1-65535)")
    method = value.get("token_endpoint_auth_method", "")
    if method and method not in AUTH_METHODS:
        raise bad("oauth.token_endpoint_auth_method", " or ".join(f'"{m}"' for m in AUTH_METHODS))
    if method.startswith("client_secret") and not secret_env:
        raise bad("oauth.client_secret_env", f'set (a "{method}" client sends a secret)')
    settings = OAuthSettings(
        client_id=value.get("client_id", ""),
        client_secret_env=secret_env,
        client_metadata_url=metadata_url,
        callback_port=port,
        token_endpoint_auth_method=method,
    )
    return settings, [f"oauth.{k}" for k in value if k not in OAUTH_KEYS]


def _strings(entry: dict, key: str, bad: Callable[[str, str], ConfigError]) -> tuple[str, ...]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad(key, "a list of strings")
    return tuple(value)


def _mapping(entry: dict, key: str, bad: Callable[[str, str], ConfigError]) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise bad(key, 'an object of strings, e.g. {"NAME": "value"}')
    return dict(value)


# -------------------------------------------------------------------- trust


def _trust_file() -> Path:
    return paths.data_dir() / TRUST_FILE


def _digest(file: Path) -> str | None:
    try:
        return hashlib.sha256(file.read_bytes()).hexdigest()
    except OSError:
        return None


def _key(file: Path) -> str:
    return str(file.resolve())


def _read_trust() -> dict[str, dict[str, str]]:
    try:
        data = json.loads(_trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # no record, or a broken one: nothing is trusted, so the person is asked
    return data if isinstance(data, dict) else {}


def is_trusted(workspace: Path, file: Path) -> bool:
    """Whether the person said yes to `file`, as it is now, in this workspace."""
    digest = _digest(file)
    record = _read_trust().get(str(workspace.resolve()), {})
    return digest is not None and isinstance(record, dict) and record.get(_key(file)) == digest


def trust(workspace: Path, file: Path) -> None:
    """Record a yes for `file` as it is now (its content's hash), in this workspace."""
    digest = _digest(file)
    if digest is None:
        raise ConfigError(f"{file} could not be read, so it cannot be trusted.")
    data = _read_trust()
    record = data.setdefault(str(workspace.resolve()), {})
    record[_key(file)] = digest
    _write_json(_trust_file(), data)


# ------------------------------------------------------------------ writing


def add_server(name: str, entry: Mapping[str, Any]) -> Path:
    """Add or replace `name` in the user's file, keeping every other entry; returns the file."""
    file = user_file()
    data = _user_data(file)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f'{file}: "mcpServers" must be an object of servers by name — fix it.')
    _entry(file, "user", name, dict(entry))  # refuse to write what would not read back
    servers[name] = dict(entry)
    _write_json(file, data)
    return file


def remove_server(name: str) -> bool:
    """Remove `name` from the user's file, keeping every other entry; False if absent."""
    file = user_file()
    data = _user_data(file)
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or name not in servers:
        return False
    del servers[name]
    _write_json(file, data)
    return True


def _user_data(file: Path) -> dict[str, Any]:
    read_file(file, "user")  # a broken file is reported, never overwritten
    try:
        data = json.loads(file.read_text(encoding="utf-8") or "{}")
    except FileNotFoundError:
        data = {}
    return data


def _write_json(file: Path, data: Any) -> None:
    """Write whole to a temporary file and rename it: a crash leaves the old version."""
    file.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{file.name}.", dir=file.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, ensure_ascii=False)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, file)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
