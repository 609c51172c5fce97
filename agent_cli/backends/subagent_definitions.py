"""Sub-agent definitions: Markdown files naming a focused helper the model may start.

`NAME.md` in the user config folder's `agents/` or in the workspace's
`.agent/agents/` (the workspace's wins by name). Front matter (read with the
skills' parser) then the helper's instructions, which join its system prompt:

    ---
    name: reviewer
    description: Reviews a change for bugs and missing tests.
    tools: [read_file, grep_search, file_glob_search]
    mode: read-only
    model: gpt-4.1-mini
    ---
    You review changes. Report each problem with its file and line.

`name` defaults to the file's name and must be it; `description` is required
(the model chooses by it); `tools` (tool names) limits what the helper is
offered, all of the conversation's when absent; `mode` is `read-only` (the
default), `ask` or `full`, and is only ever lowered by the conversation's mode
at each call, so a definition shipped in a cloned repository cannot give
itself more than the person allowed; `model` is a model of the same provider.
A file that cannot be used is left out with a warning.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent_cli import paths
from agent_cli.policy.modes import STRICTNESS
from agent_cli.tools.skills import FrontMatterError, parse_front_matter

Source = Literal["user", "workspace"]

SUFFIX = ".md"
FILE_CAP = 256 * 1024
DESCRIPTION_CAP = 1024  # the description goes into the task tool's description every round
MODES = STRICTNESS  # the modes a definition may name
DEFAULT_MODE = "read-only"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


@dataclass(frozen=True)
class Definition:
    name: str
    description: str
    prompt: str  # joins the helper's system prompt; "" for the general helper
    tools: tuple[str, ...] | None = None  # None: every tool the conversation has
    mode: str = DEFAULT_MODE
    model: str = ""  # "": the conversation's model
    path: Path | None = None
    source: Source | None = None


GENERAL = Definition("general", "A general helper with the conversation's tools.", "")


@dataclass(frozen=True)
class Definitions:
    """The definitions one workspace sees, and the files left out."""

    all: tuple[Definition, ...]
    warnings: tuple[str, ...] = ()

    def get(self, name: str) -> Definition | None:
        return next((d for d in self.all if d.name == name), None)


def definition_roots(workspace: Path) -> list[tuple[Source, Path]]:
    """Where definitions come from, in precedence order (later wins by name)."""
    return [
        ("user", paths.config_dir() / "agents"),
        ("workspace", workspace / ".agent" / "agents"),
    ]


def discover(workspace: Path, roots: list[tuple[Source, Path]] | None = None) -> Definitions:
    found: dict[str, Definition] = {}
    warnings: list[str] = []
    for source, root in roots if roots is not None else definition_roots(workspace):
        for file in _files(root, warnings):
            try:
                definition = load_definition(file, source)
            except _Skip as e:
                warnings.append(f"skipped {file}: {e}")
                continue
            found[definition.name] = definition
    return Definitions(tuple(sorted(found.values(), key=lambda d: d.name)), tuple(warnings))


class _Skip(Exception):
    """Why one definition file is left out; becomes a warning."""


def load_definition(file: Path, source: Source) -> Definition:
    try:
        if file.stat().st_size > FILE_CAP:
            raise _Skip(f"it is larger than {FILE_CAP // 1024} KiB")
        text = file.read_bytes().decode("utf-8-sig")
    except OSError as e:
        raise _Skip(f"it could not be read ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise _Skip("it is not UTF-8 text") from None
    try:
        fields, body = parse_front_matter(
            text, ("name", "description", "mode", "model"), lists=("tools",)
        )
    except FrontMatterError as e:
        raise _Skip(f"{e} — see `agent subagents --help` for the format") from None
    name = str(fields.get("name") or file.stem)
    if name != file.stem:
        raise _Skip(f"its name {name!r} is not its file's name {file.stem!r}")
    if not _NAME.fullmatch(name):
        raise _Skip(f"its name {name!r} is not letters, digits, '-' and '_' (≤ 64 chars)")
    description = str(fields.get("description", ""))
    if not description:
        raise _Skip("its front matter has no 'description'")
    if len(description) > DESCRIPTION_CAP:
        raise _Skip(f"its description is longer than {DESCRIPTION_CAP} characters")
    mode = str(fields.get("mode") or DEFAULT_MODE)
    if mode not in MODES:
        raise _Skip(f"its mode {mode!r} is not one of {', '.join(MODES)}")
    tools = fields.get("tools")
    return Definition(
        name=name,
        description=description,
        prompt=body,
        tools=tuple(tools) if isinstance(tools, list) else None,
        mode=mode,
        model=str(fields.get("model", "")),
        path=file,
        source=source,
    )


def _files(root: Path, warnings: list[str]) -> list[Path]:
    try:
        with os.scandir(root) as entries:
            names = sorted(
                e.name
                for e in entries
                if e.name.endswith(SUFFIX) and not e.name.startswith(".") and e.is_file()
            )
    except FileNotFoundError:
        return []
    except OSError as e:
        warnings.append(f"skipped the sub-agents folder {root}: {e.strerror or e}")
        return []
    return [root / name for name in names]
