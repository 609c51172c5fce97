"""The slash commands' names and the shape of their replies: what the TUI's first frame
needs (completion, the app's reply handling) without the Session, tools and store that
`frontends.interactive`, which answers them, imports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NamedTuple

from agent_cli.policy.mode_names import MODES

if TYPE_CHECKING:
    from agent_cli.media import Prompt

# Folders `@path` completion never lists files from: tools', caches and builds.
MENTION_SKIPPED_FOLDERS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", "build", "dist",
     "target", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox", ".cache",
     ".hypothesis", ".idea", ".next", ".gradle"}
)  # fmt: skip

Action = Literal[
    "",
    "quit",
    "clear",
    "new",
    "switched",
    "theme",
    "pick_session",
    "pick_model",
    "pick_agent",
    "pick_shell",
    "pick_rewind",
    "rewound",  # `argument` is the rewound message's text, back in the input to edit
    "pick_theme",
    "pick_mode",
    "pick_skill",
    "pick_mcp",
    "send",  # `argument` is a message to send (a prompt command's expansion)
    "copy",
]


class Reply(NamedTuple):
    text: str  # Markdown for the person
    level: Literal["info", "warn", "error"] = "info"
    action: Action = ""
    argument: str = ""  # e.g. the theme name for "theme"
    # Of "send": the message as a prompt command made it (an MCP prompt's images, and
    # which words of it may mention what to attach), `argument` its text.
    prompt: Prompt | None = None

    def message(self) -> str | Prompt:
        """The message of a "send"."""
        return self.prompt if self.prompt is not None else self.argument


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    usage: str = ""


COMMANDS: tuple[Command, ...] = (
    Command("help", "list the commands and keys"),
    Command("mode", "show or switch the mode", f"/mode [{'|'.join(MODES)}]"),
    Command("plan", "plan mode: read, then approve a plan (or show the plan)"),
    Command("model", "show or switch the model", "/model [NAME]"),
    Command("new", "start a new conversation"),
    Command("sessions", "list this folder's conversations, or resume one", "/sessions [ID]"),
    Command("compact", "summarise older items to free context", "/compact [FOCUS]"),
    Command("clear", "clear the screen (the conversation is kept)"),
    Command("agent", "hand the conversation to another agent", "/agent [ID]"),
    Command("skills", "list the skills, or switch one on or off", "/skills [on|off NAME]"),
    Command("mcp", "list the MCP servers, or restart one", "/mcp [restart NAME]"),
    Command("diff", "show the workspace's git diff"),
    Command("tasks", "list the scheduled tasks and how each last ran"),
    Command("shells", "list the background commands, or end one", "/shells [kill ID]"),
    Command("undo", "revert the agent's last file changes in this conversation"),
    Command("copy", "copy the last answer to the clipboard"),
    Command("rewind", "take an earlier message and what followed back, to edit", "/rewind [N]"),
    Command("fork", "go on in a copy of this conversation (the original is kept)"),
    Command("init", "ask the agent to write or update the project's AGENTS.md", "/init [FOCUS]"),
    Command("theme", "show or switch the theme", "/theme [NAME]"),
    Command("quit", "leave"),
)
