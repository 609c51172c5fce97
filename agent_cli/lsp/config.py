"""Which language servers there are: known ones found on PATH, and `[lsp.NAME]` tables.

Known servers need no config: each is used when its program is on PATH (only
PATH: a program inside the workspace, such as `node_modules/.bin`, could be
the repository's own). A `[lsp.NAME]` table changes a known server (`files`,
`root_markers`, `init_options`, `settings`, `enabled = false`) or adds one
(`command` and `files` needed). `lsp = false`, or `enabled = false` in
`[lsp]`, turns them all off (the settings themselves: `options.py`).

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
from typing import Any, NamedTuple

__all__ = ["KNOWN", "Found", "ServerConfig", "find_servers", "language_of", "merged"]


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


def merged(base: ServerConfig | None, name: str, entry: Mapping[str, Any]) -> ServerConfig:
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
