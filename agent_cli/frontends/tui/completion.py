"""What the input completes: workspace files after `@` (fuzzy), commands after `/`, an
MCP server's resources after `@server:` (frontends/resource_completion.py).

The file list comes from one capped walk of the workspace that skips the
folders no one means (`.git`, `node_modules`, virtualenvs, build output,
caches), done once in a thread. No Textual here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from agent_cli.frontends.resource_completion import (
    resource_candidates,
    server_candidates,
    split_query,
)
from agent_cli.frontends.slash import COMMANDS, MENTION_SKIPPED_FOLDERS, Command

if TYPE_CHECKING:
    from agent_cli.frontends.resource_completion import Listing

FILE_LIMIT = 20_000  # a walk stops here (a home folder started in by mistake)
SHOWN = 8  # candidates in the menu
_TOKEN = re.compile(r"(?:^|(?<=\s))@(\S*)$")


class Candidate(NamedTuple):
    value: str  # what replaces the token
    label: str  # what the menu shows
    runs: bool = False  # a command that takes no argument: Enter runs it at once
    spaced: bool = True  # a file's: taking it adds a space (a resource's value has its own)


class Token(NamedTuple):
    kind: str  # "file" or "command"
    start: int  # offset of the token in the line (its "@" or "/")
    query: str


def walk_files(root: Path, limit: int = FILE_LIMIT) -> list[str]:
    """Workspace-relative paths with "/" separators, shallow folders first, capped."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d for d in dirs if d not in MENTION_SKIPPED_FOLDERS and not d.endswith(".egg-info")
        )
        relative = os.path.relpath(folder, root)
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        for name in sorted(files):
            found.append(prefix + name)
            if len(found) >= limit:
                return found
    return found


def token_at(line: str) -> Token | None:
    """The token being completed, given the text of the line up to the cursor."""
    if line.startswith("/") and " " not in line:
        return Token("command", 0, line[1:])
    match = _TOKEN.search(line)
    if match:
        return Token("file", match.start(), match.group(1))
    return None


def fuzzy_score(query: str, path: str) -> int | None:
    """How well `query` matches `path` as a subsequence (higher is better), or None.

    Matches in the file name, at word starts and in runs score higher;
    shorter paths win ties.
    """
    if not query:
        return -len(path)
    lowered = path.lower()
    name_start = lowered.rfind("/") + 1
    score = 0
    position = -1
    previous = -2
    for char in query.lower():
        position = lowered.find(char, position + 1)
        if position < 0:
            return None
        if position == previous + 1:
            score += 5  # a run
        if position == 0 or lowered[position - 1] in "/._- ":
            score += 3  # a word start
        if position >= name_start:
            score += 2
        previous = position
    return score * 100 - len(path)


def file_candidates(query: str, files: Iterable[str], limit: int = SHOWN) -> list[Candidate]:
    scored = []
    for path in files:
        score = fuzzy_score(query, path)
        if score is not None:
            scored.append((score, path))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return [Candidate("@" + path, path) for _, path in scored[:limit]]


def mention_candidates(query: str, files: Iterable[str], listed: Listing | None) -> list[Candidate]:
    """What `@query` completes: a server's resources when it names one (`@docs:`); else the
    servers it begins (`@do`: `@docs:`), then the files."""
    split = split_query(query, listed)
    found = resource_candidates(*split, listed or {}) if split else []
    found += server_candidates(query, listed)
    shown = [Candidate(c.value, f"{c.label}  {c.meta}", spaced=False) for c in found]
    if split is not None:
        return shown[:SHOWN]
    return [*shown, *file_candidates(query, files)][:SHOWN]


def command_candidates(query: str, commands: Sequence[Command] = COMMANDS) -> list[Candidate]:
    matches = [c for c in commands if c.name.startswith(query)]
    if not matches:
        matches = [c for c in commands if fuzzy_score(query, c.name) is not None]
    return [Candidate(f"/{c.name} ", f"/{c.name}  {c.summary}", runs=not c.usage) for c in matches]
