"""Which language servers there are: known ones found on PATH, and `[lsp.NAME]` tables.

Known servers need no config: each is used when its program is on PATH (only
PATH: a program inside the workspace, such as `node_modules/.bin`, could be
the repository's own). A `[lsp.NAME]` table changes a known server (`files`,
`root_markers`, `init_options`, `settings`, `enabled = false`) or adds one
(`command` and `files` needed). `lsp = false`, or `enabled = false` in
`[lsp]`, turns them all off; `settle_time` is how long an edit waits for what
the servers say about it, `start_timeout` how long a server may take to start.

A project file's `[lsp.NAME]` tables start programs, so they are used only
after the person trusted that file (as for its hooks and checks).
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple, Protocol

__all__ = [
    "DEFAULT_SETTLE_TIME",
    "DEFAULT_START_TIMEOUT",
    "KNOWN",
    "Found",
    "LspSettings",
    "ServerConfig",
    "find_servers",
    "language_of",
    "read_lsp",
]

DEFAULT_SETTLE_TIME = 1.5
"""Seconds an edit waits at most for the servers' diagnostics of it."""
DEFAULT_START_TIMEOUT = 10.0
"""Seconds a server may take to start and answer `initialize`."""


@dataclass(frozen=True, eq=True)
class ServerConfig:
    """How to start one language server and which files it is for."""

    name: str
    command: tuple[str, ...]
    files: tuple[str, ...]  # file-name patterns ("*.py")
    root_markers: tuple[str, ...] = ()  # a folder holding one of these is a project's root
    init_options: Mapping[str, Any] | None = field(default=None, hash=False)
    settings: Mapping[str, Any] | None = field(default=None, hash=False)  # its configuration
    language: str = ""  # the languageId sent; "" chooses by the file's suffix
    source: str = "known"  # "known", or the config file it comes from
    enabled: bool = True
    unless: str = ""  # a known server left out when this other one is found

    def matches(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.files)


PYTHON = ("*.py", "*.pyi")
PYTHON_ROOTS = ("pyproject.toml", "pyrightconfig.json", "setup.py", "setup.cfg")
KNOWN: tuple[ServerConfig, ...] = (
    ServerConfig("ruff", ("ruff", "server"), PYTHON, ("pyproject.toml", "ruff.toml", ".ruff.toml")),
    ServerConfig("basedpyright", ("basedpyright-langserver", "--stdio"), PYTHON, PYTHON_ROOTS),
    ServerConfig(
        "pyright", ("pyright-langserver", "--stdio"), PYTHON, PYTHON_ROOTS, unless="basedpyright"
    ),
    ServerConfig(
        "typescript",
        ("typescript-language-server", "--stdio"),
        ("*.ts", "*.tsx", "*.js", "*.jsx", "*.mjs", "*.cjs", "*.mts", "*.cts"),
        ("tsconfig.json", "jsconfig.json", "package.json"),
    ),
    ServerConfig("gopls", ("gopls",), ("*.go",), ("go.work", "go.mod")),
    ServerConfig("rust-analyzer", ("rust-analyzer",), ("*.rs",), ("Cargo.toml",)),
    ServerConfig(
        "clangd",
        ("clangd",),
        ("*.c", "*.h", "*.cc", "*.cpp", "*.cxx", "*.hpp", "*.hh", "*.hxx"),
        ("compile_commands.json", "compile_flags.txt", ".clangd"),
    ),
)
"""Servers used without config when their program is on PATH, in this order."""

LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
}


def language_of(config: ServerConfig, path: Path) -> str:
    """The languageId of a file for a server: the configured one, else by its suffix."""
    return config.language or LANGUAGES.get(path.suffix.lower(), path.suffix.lstrip(".") or "text")


@dataclass(frozen=True)
class LspSettings:
    """The `lsp` settings: on or off, the times, and the `[lsp.NAME]` tables as given."""

    enabled: bool = True
    settle_time: float = DEFAULT_SETTLE_TIME
    start_timeout: float = DEFAULT_START_TIMEOUT
    user: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    project: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # after a yes

    def configs(self, project_trusted: bool = False) -> list[ServerConfig]:
        """The servers as configured: the known ones changed by the user's tables (then
        the project's, once trusted), and the ones the tables add."""
        if not self.enabled:
            return []
        servers = {config.name: config for config in KNOWN}
        layers = [self.user, self.project] if project_trusted else [self.user]
        for layer in layers:
            for name, entry in layer.items():
                servers[name] = _merged(servers.get(name), name, entry)
        return list(servers.values())

    def project_programs(self) -> list[tuple[str, str]]:
        """What the project's tables would start, as (what, command) for the trust question."""
        import shlex

        known = {config.name: config for config in KNOWN}
        programs = []
        for name, entry in self.project.items():
            base = known.get(name)
            command = entry.get("command") or (base.command if base else ())
            programs.append((f"language server {name}", shlex.join(command)))
        return programs


def _merged(base: ServerConfig | None, name: str, entry: Mapping[str, Any]) -> ServerConfig:
    values: dict[str, Any] = {}
    for key in ("command", "files", "root_markers"):
        if key in entry:
            values[key] = tuple(entry[key])
    for key in ("init_options", "settings", "language", "enabled"):
        if key in entry:
            values[key] = entry[key]
    values["source"] = entry.get("source", "config")
    if base is None:
        return ServerConfig(name=name, **values)
    return replace(base, unless="", **values)


class Found(NamedTuple):
    """A configured server and its program on PATH ("" when it is not found)."""

    config: ServerConfig
    program: str


def find_servers(configs: Sequence[ServerConfig], path: str | None = None) -> list[Found]:
    """Each enabled server with where its program is; `unless` ones left out when the
    server they name is found. `path`: the PATH to search (the process's by default)."""
    search = os.environ.get("PATH", os.defpath) if path is None else path
    found = {
        config.name: Found(config, shutil.which(config.command[0], path=search) or "")
        for config in configs
        if config.enabled and config.command
    }
    return [
        entry
        for entry in found.values()
        if not (
            entry.config.unless and found.get(entry.config.unless, Found(entry.config, "")).program
        )
    ]


# ------------------------------------------------------------------ config files


class Checker(Protocol):
    """The settings reader's type checks: failing with the file, the line and the key."""

    def check(self, key: str, value: Any, expected: type | tuple[type, ...]) -> Any: ...

    def error(self, key: str, problem: str) -> Exception: ...


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
    if (
        not known
        and entry.get("enabled", True)
        and not (entry.get("command") and entry.get("files"))
    ):
        raise bad.error(where, "needs a command and files (it is not a known server)")
    return dict(entry)
