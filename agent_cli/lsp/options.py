"""The `lsp` settings as the config files give them, read into one small value.

Kept apart from `config.py` (the servers themselves) because the settings read
it at every start: nothing here builds a class at import but one NamedTuple.
`lsp = false`, or `enabled = false` in `[lsp]`, turns language servers off;
`settle_time` is how long an edit waits for what they say about it,
`start_timeout` how long one may take to start; each `[lsp.NAME]` table
changes a known server or adds one (see `config.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from typing import Protocol

    from agent_cli.lsp.config import ServerConfig

    class Checker(Protocol):
        """The settings reader's type checks: failing with the file, the line and the key."""

        def check(self, key: str, value: Any, expected: type | tuple[type, ...]) -> Any: ...

        def error(self, key: str, problem: str) -> Exception: ...


__all__ = ["DEFAULT_SETTLE_TIME", "DEFAULT_START_TIMEOUT", "LspSettings", "read_lsp"]

DEFAULT_SETTLE_TIME = 1.5
"""Seconds an edit waits at most for the servers' diagnostics of it."""
DEFAULT_START_TIMEOUT = 10.0
"""Seconds a server may take to start and answer `initialize`."""
_NO_TABLES: Mapping[str, Mapping[str, Any]] = {}


class LspSettings(NamedTuple):
    """On or off, the times, and the `[lsp.NAME]` tables as given (the project's are used
    only once the person trusted its file)."""

    enabled: bool = True
    settle_time: float = DEFAULT_SETTLE_TIME
    start_timeout: float = DEFAULT_START_TIMEOUT
    user: Mapping[str, Mapping[str, Any]] = _NO_TABLES
    project: Mapping[str, Mapping[str, Any]] = _NO_TABLES

    def configs(self, project_trusted: bool = False) -> list[ServerConfig]:
        """The servers as configured: the known ones changed by the user's tables (then
        the project's, once trusted), and the ones the tables add."""
        from agent_cli.lsp.config import KNOWN, merged

        if not self.enabled:
            return []
        servers = {config.name: config for config in KNOWN}
        layers = [self.user, self.project] if project_trusted else [self.user]
        for layer in layers:
            for name, entry in layer.items():
                servers[name] = merged(servers.get(name), name, entry)
        return list(servers.values())

    def project_programs(self) -> list[tuple[str, str]]:
        """What the project's tables would start, as (what, command) for the trust question."""
        import shlex

        from agent_cli.lsp.config import KNOWN

        known = {config.name: config for config in KNOWN}
        programs = []
        for name, entry in self.project.items():
            base = known.get(name)
            command = entry.get("command") or (base.command if base else ())
            programs.append((f"language server {name}", shlex.join(command)))
        return programs


_OPTION_KEYS: dict[str, type | tuple[type, ...]] = {
    "enabled": bool,
    "settle_time": (int, float),
    "start_timeout": (int, float),
}
_SERVER_KEYS: dict[str, type | tuple[type, ...]] = {
    "command": list,
    "files": list,
    "root_markers": list,
    "init_options": dict,
    "settings": dict,
    "language": str,
    "enabled": bool,
}


def read_lsp(
    bad: Checker, value: Any, source: str
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """`lsp = false`, or an `[lsp]` table: its options, and its `[lsp.NAME]` tables."""
    if isinstance(value, bool):
        return {"enabled": value}, {}
    bad.check("lsp", value, (bool, dict))
    from agent_cli.lsp.config import KNOWN

    options: dict[str, Any] = {}
    servers: dict[str, dict[str, Any]] = {}
    known = {config.name for config in KNOWN}
    for key, entry in value.items():
        where = f"lsp.{key}"
        if isinstance(entry, dict):
            servers[key] = _read_server(bad, where, entry, key in known) | {"source": source}
        elif key in _OPTION_KEYS:
            options[key] = bad.check(where, entry, _OPTION_KEYS[key])
            if key != "enabled" and options[key] <= 0:
                raise bad.error(where, "must be more than 0")
        else:
            raise bad.error(
                where,
                "is not a language-server setting (use enabled, settle_time, start_timeout, "
                "or a [lsp.NAME] table)",
            )
    return options, servers


def _read_server(bad: Checker, where: str, entry: dict[str, Any], known: bool) -> dict[str, Any]:
    for key, setting in entry.items():
        if key not in _SERVER_KEYS:
            raise bad.error(
                f"{where}.{key}",
                "is not a language-server setting (use command, files, root_markers, "
                "init_options, settings, language or enabled)",
            )
        bad.check(f"{where}.{key}", setting, _SERVER_KEYS[key])
        if isinstance(setting, list):
            for part in setting:
                bad.check(f"{where}.{key}", part, str)
    if "command" in entry and not entry["command"]:
        raise bad.error(f"{where}.command", "is empty: give the program and its arguments")
    enabled = entry.get("enabled", True)
    if not known and enabled and not (entry.get("command") and entry.get("files")):
        raise bad.error(where, "needs a command and files (it is not a known server)")
    return dict(entry)
