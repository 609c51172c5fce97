"""The transcript a conversation carries when another agent takes it over (SPEC §11).

An agent that takes over mid-way has none of the earlier context, so its
first prompt starts with this: what was asked and answered, which files were
changed (and how much), which commands ran and how they exited. It is text,
capped; when too long the oldest entries go first, the first request stays.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from agent_cli.engine.items import AssistantItem, Item, SummaryItem, ToolItem, UserItem
from agent_cli.tools.diffs import line_changes

TRANSCRIPT_CAP = 24_000  # characters: a few thousand tokens, small beside any context window
ENTRY_CAP = 1_500  # one message or answer, so a pasted log cannot crowd out the rest
HEADER = (
    "[Hand-off] You are taking over a conversation another agent worked on in this "
    "workspace. What happened so far:"
)
FOOTER = "[End of the earlier work. Continue from where it stands.]"

_COMMAND_KINDS = ("exec_shell_command", "execute")
_PATH_KEYS = ("path", "file_path", "filePath", "file")


def transcript(items: Sequence[Item], cap: int = TRANSCRIPT_CAP) -> str:
    """A compact account of `items` for another agent; "" when there is nothing to carry."""
    # A sub-agent's items are its own business; its answer is in its `task` call's result.
    items = _from_latest_summary([item for item in items if not item.parent])
    entries: list[str] = []
    files: dict[str, _FileWork] = {}
    for item in items:
        if isinstance(item, SummaryItem):
            entries.append("Summary of the work before: " + _clip(item.text))
        elif isinstance(item, UserItem):
            entries.append("User: " + _clip(item.text))
        elif isinstance(item, AssistantItem) and item.text.strip():
            entries.append("Assistant: " + _clip(item.text))
        elif isinstance(item, ToolItem):
            entry = _tool_entry(item, files)
            if entry:
                entries.append(entry)
    if not entries:
        return ""
    if files:
        changed = "; ".join(f"{path} ({work})" for path, work in files.items())
        entries.append("Files changed: " + changed)
    return _fit([HEADER, *entries, FOOTER], cap)


def _from_latest_summary(items: Sequence[Item]) -> Sequence[Item]:
    for index in range(len(items) - 1, -1, -1):
        if isinstance(items[index], SummaryItem):
            return items[index:]
    return items


class _FileWork:
    def __init__(self) -> None:
        self.changes = 0
        self.added = 0
        self.removed = 0

    def count(self, diff: str) -> None:
        self.changes += 1
        added, removed = line_changes(diff)
        self.added += added
        self.removed += removed

    def __str__(self) -> str:
        times = "once" if self.changes == 1 else f"{self.changes} times"
        return f"changed {times}, +{self.added} −{self.removed} lines"


def _tool_entry(item: ToolItem, files: dict[str, _FileWork]) -> str:
    if item.state not in ("done", "error", "denied"):
        return ""
    title = item.title or item.tool
    if item.state == "denied":
        return f"Not done (refused): {title}"
    if item.tool in _COMMAND_KINDS:
        code = item.command_exit()
        outcome = "failed" if item.is_error else "ran"
        if code is not None:
            outcome = f"exit code {code}"
        return f"Command: {_clip(_command(item) or title, 200)} → {outcome}"
    if item.diff and not item.is_error:
        path = item.file or _path(item) or title
        files.setdefault(path, _FileWork()).count(item.diff)
        return ""  # summed up once, under "Files changed"
    if item.is_error:
        return f"Failed: {title}"
    return ""  # reads and searches: the next agent can repeat them if it needs to


def _command(item: ToolItem) -> str:
    args = _arguments(item)
    command = args.get("command")
    return command if isinstance(command, str) else ""


def _path(item: ToolItem) -> str:
    args = _arguments(item)
    return next((args[key] for key in _PATH_KEYS if isinstance(args.get(key), str)), "")


def _arguments(item: ToolItem) -> dict:
    try:
        value = json.loads(item.args) if item.args.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _clip(text: str, cap: int = ENTRY_CAP) -> str:
    text = text.strip()
    return text if len(text) <= cap else text[: cap - 1] + "…"


def _fit(lines: list[str], cap: int) -> str:
    """Join, dropping the oldest entries after the first request until it fits."""
    text = "\n".join(lines)
    if len(text) <= cap:
        return text
    head, first, rest, foot = lines[0], lines[1], lines[2:-1], lines[-1]
    budget = cap - len(head) - len(first) - len(foot) - 80
    kept: list[str] = []
    for line in reversed(rest):
        if budget - len(line) - 1 < 0:
            break
        kept.append(line)
        budget -= len(line) + 1
    dropped = len(rest) - len(kept)
    note = f"[… {dropped} earlier entries left out]"
    return "\n".join([head, first, note, *reversed(kept), foot])[:cap]
