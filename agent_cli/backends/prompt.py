"""The system prompt (SPEC §4).

Built once per message and reused for every round of it, byte for byte, so a
server's prompt cache keeps working; the conversation after it only grows.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import NamedTuple

AGENTS_MD = "AGENTS.md"
AGENTS_MD_CAP = 8 * 1024

_MODES = {
    "ask": "ask — reads run at once; every change (an edit, a command that is not "
    "read-only, an MCP tool) waits for the person's yes, and may be declined.",
    "read-only": "read-only — you may read and run read-only commands; no change is allowed.",
    "full": "full — reads and changes run without asking.",
}

_BASE = """\
You are agent, a coding agent working in the person's project from their terminal.

Working directory (the workspace): {workspace}
Platform: {platform}
Date: {today}
Mode: {mode}

How to work:
- Look before you change: read the files involved and search the workspace instead of guessing.
- Every path is relative to the workspace; tools cannot reach outside it.
- Make the smallest change that does what was asked, in the project's existing style.
- After changing code, check it (run the tests or the program) when you can.
- When a tool call fails or is declined, read why and adjust; do not repeat the same call.
- Answer in Markdown, briefly: say what you did and what the person should know next.
"""


class SkillLine(NamedTuple):
    name: str
    description: str


def system_prompt(
    workspace: Path,
    mode: str,
    skills: Sequence[SkillLine] = (),
    today: date | None = None,
) -> str:
    text = _BASE.format(
        workspace=workspace,
        platform=f"{platform.system()} {platform.machine()}",
        today=(today or date.today()).isoformat(),
        mode=_MODES.get(mode, mode),
    )
    if skills:
        lines = "\n".join(f"- {s.name}: {s.description}" for s in skills)
        text += (
            f"\nSkills (read one's instructions with use_skill when it fits the task):\n{lines}\n"
        )
    agents_md = read_agents_md(workspace)
    if agents_md:
        text += f"\nThe project's {AGENTS_MD} says:\n\n{agents_md}\n"
    return text


def read_agents_md(workspace: Path) -> str:
    """The first 8 KiB of AGENTS.md at the workspace root (a whole UTF-8 text), if any."""
    path = workspace / AGENTS_MD
    try:
        if not path.is_file() or path.resolve().parent != workspace.resolve():
            return ""  # a link leading out of the workspace is not the project's
        with path.open("rb") as f:
            data = f.read(AGENTS_MD_CAP)
    except OSError:
        return ""
    return data.decode("utf-8", "ignore").strip()
