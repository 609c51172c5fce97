"""What the interactive front ends share: the current session and the slash commands.

The TUI and the line REPL only render and read keys; everything a slash
command does lives here, once, so both behave the same. A command answers
with a `Reply` (Markdown text for the person, and an optional action the
front end carries out, like quitting or clearing the screen).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

from agent_cli.engine.items import Conversation
from agent_cli.engine.session import Session
from agent_cli.engine.store import Store
from agent_cli.errors import AgentError

MODES = ("ask", "read-only", "full")
# Folders `@path` completion never lists files from: tools', caches and builds.
MENTION_SKIPPED_FOLDERS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", "build", "dist",
     "target", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox", ".cache",
     ".hypothesis", ".idea", ".next", ".gradle"}
)  # fmt: skip
NOT_YET = "`{name}` is not available yet in this version."

Action = Literal["", "quit", "clear", "new", "switched", "theme", "pick_session"]


class Reply(NamedTuple):
    text: str  # Markdown for the person
    level: Literal["info", "warn", "error"] = "info"
    action: Action = ""
    argument: str = ""  # e.g. the theme name for "theme"


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    usage: str = ""


COMMANDS: tuple[Command, ...] = (
    Command("help", "list the commands and keys"),
    Command("mode", "show or switch the mode", "/mode [ask|read-only|full]"),
    Command("model", "show or switch the model", "/model [NAME]"),
    Command("new", "start a new conversation"),
    Command("sessions", "list this folder's conversations, or resume one", "/sessions [ID]"),
    Command("compact", "summarise older items to free context", "/compact [FOCUS]"),
    Command("clear", "clear the screen (the conversation is kept)"),
    Command("agent", "hand the conversation to another agent", "/agent [ID]"),
    Command("skills", "list the skills"),
    Command("mcp", "list the MCP servers"),
    Command("diff", "show the workspace's git diff"),
    Command("undo", "revert the agent's last file changes in this conversation"),
    Command("theme", "show or switch the theme", "/theme [NAME]"),
    Command("quit", "leave"),
)
LATER = {"agent"}


@dataclass
class Interactive:
    """Holds the current Session and answers slash commands for a front end.

    `make_session` builds a Session for a conversation (wiring knows how);
    `on_switch` listeners hear when /new or /sessions replaces the session,
    so a front end can subscribe to the new one's events.
    """

    session: Session
    store: Store | None
    make_session: Callable[[Conversation], Session]
    close: Callable[[], Awaitable[None]] | None = None
    on_switch: list[Callable[[Session], None]] = field(default_factory=list)

    async def aclose(self) -> None:
        """End the current session's run and release the provider."""
        await self.session.aclose()
        if self.close is not None:
            await self.close()

    @property
    def workspace(self) -> Path:
        return Path(self.session.conversation.workspace)

    async def handle(self, line: str) -> Reply:
        """Run one slash command line (it starts with "/")."""
        name, _, argument = line[1:].strip().partition(" ")
        argument = argument.strip()
        command = next((c for c in COMMANDS if c.name == name), None)
        if command is None:
            known = ", ".join(f"/{c.name}" for c in COMMANDS)
            return Reply(f"Unknown command `/{name}`. The commands are: {known}.", "warn")
        if command.name in LATER:
            return Reply(NOT_YET.format(name=f"/{command.name}"), "warn")
        handler = getattr(self, f"_{command.name}")
        try:
            return await handler(argument)
        except AgentError as e:
            return Reply(str(e), "error")

    async def _help(self, _argument: str) -> Reply:
        lines = ["| command | what it does |", "|---|---|"]
        usages = ((c.usage or "/" + c.name).replace("|", "\\|") for c in COMMANDS)
        lines += [f"| `{u}` | {c.summary} |" for u, c in zip(usages, COMMANDS, strict=True)]
        keys = (
            "\n\nKeys: Enter sends; Ctrl+J (or Esc then Enter) adds a line; Up/Down walk the "
            "history; `@` completes a file; Ctrl+C stops a run, and pressed twice when idle "
            "quits. In the TUI, Shift+Enter also adds a line and Ctrl+F searches the conversation."
        )
        return Reply("\n".join(lines) + keys)

    async def _mode(self, argument: str) -> Reply:
        if not argument:
            return Reply(
                f"The mode is `{self.session.mode}`. Switch with `/mode ask|read-only|full`."
            )
        if argument not in MODES:
            return Reply(f"Unknown mode `{argument}` — use ask, read-only or full.", "warn")
        self.session.set_mode(argument)
        return Reply(f"Mode switched to `{argument}`; the next call reads it.")

    async def _model(self, argument: str) -> Reply:
        current = self.session.conversation.model
        if not argument:
            return Reply(f"The model is `{current}`.")
        return Reply(
            "Switching models mid-conversation is not available yet in this version.", "warn"
        )

    async def _new(self, _argument: str) -> Reply:
        if self.session.running:
            return Reply("A run is going on — stop it first (Ctrl+C).", "warn")
        conversation = Conversation(workspace=str(self.workspace), mode=self.session.mode)
        self._switch(self.make_session(conversation))
        return Reply("A new conversation.", action="new")

    async def _sessions(self, argument: str) -> Reply:
        if self.store is None:
            return Reply("Conversations are not being saved in this session (--no-save).", "warn")
        if argument:
            if self.session.running:
                return Reply("A run is going on — stop it first (Ctrl+C).", "warn")
            conversation = self.store.load(argument)
            if conversation.workspace != str(self.workspace):
                return Reply(f"That conversation belongs to {conversation.workspace}.", "warn")
            conversation.mode = self.session.mode
            self._switch(self.make_session(conversation))
            return Reply(f"Resumed: {conversation.title or conversation.id}", action="switched")
        summaries = self.store.list(str(self.workspace))
        if not summaries:
            return Reply("There are no stored conversations in this folder yet.")
        from datetime import datetime

        lines = ["| id | title | items | updated |", "|---|---|---|---|"]
        for s in summaries[:20]:
            when = datetime.fromtimestamp(s.updated).strftime("%Y-%m-%d %H:%M")
            lines.append(f"| `{s.id}` | {s.title or '(untitled)'} | {s.items} | {when} |")
        return Reply(
            "\n".join(lines) + "\n\nResume one with `/sessions ID`.", action="pick_session"
        )

    async def _compact(self, argument: str) -> Reply:
        if self.session.running:
            return Reply("A run is going on — stop it first (Ctrl+C).", "warn")
        result = await self.session.compact(argument)
        if result.error:
            return Reply(result.error, "error")
        return Reply("")  # the session's own notice says what was compacted

    async def _mcp(self, _argument: str) -> Reply:
        from agent_cli import mcp_config

        try:
            configs, warnings = mcp_config.load_servers(
                self.workspace, trusted=lambda file: mcp_config.is_trusted(self.workspace, file)
            )
        except AgentError as e:
            return Reply(str(e), "error")
        if not configs:
            text = "No MCP servers are configured. Add one with `agent mcp add NAME -- CMD ARGS`."
            return Reply("\n\n".join([text, *warnings]))
        lines = ["| server | how | from |", "|---|---|---|"]
        for c in configs:
            how = c.url or " ".join([c.command, *c.args])
            lines.append(f"| `{c.name}` | `{how}` | {c.source} |")
        lines += [f"\n{w}" for w in warnings]
        lines.append("\nTheir tools and state: `agent mcp list`.")
        return Reply("\n".join(lines))

    async def _skills(self, _argument: str) -> Reply:
        from agent_cli.tools.skills import Skills

        skills = Skills.discover(self.workspace)
        if not skills.all:
            return Reply("There are no skills.")
        lines = ["| skill | state | from | what it is for |", "|---|---|---|---|"]
        for skill in skills.all:
            state = "on" if skills.is_enabled(skill.name) else "off"
            lines.append(f"| `{skill.name}` | {state} | {skill.source} | {skill.description} |")
        lines += [f"\n{w}" for w in skills.warnings]
        lines.append("\nSwitch one with `agent skills enable|disable NAME`.")
        return Reply("\n".join(lines))

    async def _clear(self, _argument: str) -> Reply:
        return Reply("", action="clear")

    async def _diff(self, _argument: str) -> Reply:
        import asyncio

        from agent_cli.git import workspace_diff

        diff = await asyncio.to_thread(workspace_diff, self.workspace)
        if diff is None:
            return Reply("This folder is not a git repository, so there is no diff to show.")
        return Reply(f"```diff\n{diff}\n```" if diff else "No changes against git's HEAD.")

    async def _undo(self, _argument: str) -> Reply:
        import asyncio

        from agent_cli.git import Checkpoints

        if self.session.running:
            return Reply("A run is going on — stop it first (Ctrl+C).", "warn")
        conversation = self.session.conversation.id
        restored = await asyncio.to_thread(Checkpoints(self.workspace).undo, conversation)
        return Reply(restored.summary(conversation))

    async def _theme(self, argument: str) -> Reply:
        return Reply("", action="theme", argument=argument)

    async def _quit(self, _argument: str) -> Reply:
        return Reply("", action="quit")

    def _switch(self, session: Session) -> None:
        self.session = session
        for listener in self.on_switch:
            listener(session)
