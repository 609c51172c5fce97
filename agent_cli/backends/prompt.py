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

from agent_cli import paths

AGENTS_MD = "AGENTS.md"
AGENTS_MD_CAP = 8 * 1024
PROMPT_CAP = 4000
"""Characters of the system prompt apart from AGENTS.md and the tool definitions (SPEC §4)."""
MIN_DESCRIPTION = 40
"""Characters of a skill's description worth keeping; below this, names only."""
SKILLS_HEADER = "\nSkills (read one's instructions with use_skill when it fits the task):\n"

_MODES = {
    "ask": "ask — reads run at once; every change (an edit, a command that is not "
    "read-only, an MCP tool) waits for the person's yes, and may be declined.",
    "auto": "auto — reads, edits in the workspace and commands (in a sandbox: no network, "
    "writes only in the workspace and /tmp) run at once; MCP tools and anything that must "
    "leave the sandbox wait for the person's yes.",
    "read-only": "read-only — you may read and run read-only commands; no change is allowed.",
    "full": "full — reads and changes run without asking (commands may run in a sandbox).",
    "plan": "plan — you may read and run read-only commands; no change is allowed yet. "
    "Investigate the request, then end with a plan: call update_plan with its steps (all "
    "pending) and answer with a short summary of the approach and anything to decide. The "
    "person reviews the plan, then carries it out in another mode.",
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
- For work of several steps, keep a plan with update_plan and mark steps done as you go.
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
        text += _skills_section(skills, PROMPT_CAP - len(text))
    own = read_agents_md(paths.config_dir(), inside=False)
    if own:
        text += f"\nThe person's own {AGENTS_MD} (for every project) says:\n\n{own}\n"
    agents_md = read_agents_md(workspace)
    if agents_md:
        text += f"\nThe project's {AGENTS_MD} says:\n\n{agents_md}\n"
    return text


def _skills_section(skills: Sequence[SkillLine], room: int) -> str:
    """The switched-on skills in at most `room` characters: whole descriptions when they
    fit, else each cut to the same length, else names only and how many were left out
    (`use_skill` with an unknown name answers with every name)."""
    room -= len(SKILLS_HEADER) + 1  # the prompt stays strictly under the cap

    def cut(text: str, width: int) -> str:
        return text if len(text) <= width else text[: width - 1].rstrip() + "…"

    def described(width: int) -> str:
        return "".join(f"- {s.name}: {cut(s.description, width)}\n" for s in skills)

    # The widest cut that fits: the section only grows with the width, so a binary search.
    low, high = MIN_DESCRIPTION, max(len(s.description) for s in skills)
    if len(described(low)) <= room:
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if len(described(middle)) <= room else (low, middle - 1)
        return SKILLS_HEADER + described(low)

    def more(count: int) -> str:
        return f"- and {count} more (use_skill with any name lists them)\n" if count else ""

    lines, used = [], 0
    for index, skill in enumerate(skills):
        line = f"- {skill.name}\n"
        if used + len(line) + len(more(len(skills) - index - 1)) > room:
            lines.append(more(len(skills) - index))
            break
        lines.append(line)
        used += len(line)
    return SKILLS_HEADER + "".join(lines)


def read_agents_md(folder: Path, inside: bool = True) -> str:
    """The first 8 KiB of AGENTS.md in `folder` (a whole UTF-8 text), if any. `inside`: a
    workspace's, whose link leading out of it is not the project's."""
    path = folder / AGENTS_MD
    try:
        if not path.is_file() or (inside and path.resolve().parent != folder.resolve()):
            return ""
        with path.open("rb") as f:
            data = f.read(AGENTS_MD_CAP)
    except OSError:
        return ""
    return data.decode("utf-8", "ignore").strip()
