"""What a finished call came to, in a few words for its collapsed card: `exit 5` for a
command that failed, `120 lines` for a read, `+3 −1` for an edit.

A command that ran and exited non-zero is not an error of the tool (the model reads its
output and exit code like any other), but the person must not see a green tick for it:
`failed` says to show it as failed. No Textual here: any front end may use it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from agent_cli.engine.items import ToolItem
from agent_cli.tools.diffs import line_changes

COMMAND_TOOLS = ("exec_shell_command",)
_LONG_LINE = re.compile(r"^\[\.\.\. line \d+ is longer than \d+ bytes and was cut;", re.MULTILINE)
_TRUNCATED = re.compile(r"^\[\.\.\. truncated: showing lines (\d+)–(\d+) of (\d+);", re.MULTILINE)


class Outcome(NamedTuple):
    text: str  # "" when there is nothing to add to the state
    failed: bool = False


def outcome(item: ToolItem) -> Outcome:
    """The words for a call that has finished (its state is "done")."""
    if item.state != "done":
        return Outcome("")
    if item.tool in COMMAND_TOOLS:
        code = item.command_exit()
        if code:
            return Outcome(f"exit {code}", failed=True)
        return Outcome("")
    if item.diff:
        return Outcome(diff_counts(item.diff))
    if item.tool == "read_file":
        return Outcome(read_lines(item.result))
    return Outcome("")


def diff_counts(diff: str) -> str:
    """`+added −removed` of a unified diff (its file headers not counted)."""
    added, removed = line_changes(diff)
    return f"+{added} −{removed}"


def read_lines(result: str) -> str:
    """How many lines a read_file result holds ("" for an empty or binary file)."""
    cut = _TRUNCATED.search(result)
    if cut is not None:
        first, last, total = cut.groups()
        return f"lines {first}–{last} of {total}"
    if not result or result.endswith(("not shown.", "(0 bytes).")):
        return ""
    if _LONG_LINE.search(result):
        return "1 line (cut)"
    count = result.count("\n") + (0 if result.endswith("\n") else 1)
    return f"{count} line" + ("" if count == 1 else "s")
