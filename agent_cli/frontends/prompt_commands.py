"""Slash commands that are prompts: one registry over the places they come from.

A prompt command's text is only a message for the model. `/NAME args` becomes
that message with `$ARGUMENTS`, `$1`, `$2`… filled in — nothing else: no shell
expansion, no `!`-execution, no file inclusion (an `@path` in it is attached
as in any prompt). The places, each a `CommandSource`, in the order a name is
claimed: the built-in commands (never shadowed), the person's own command
files (`<config dir>/commands/*.md`), the project's (`.agent/commands/*.md`),
the skills (`/skill-name`), and whatever a front end adds later (MCP prompts).

The person's files win over the project's on purpose: a cloned repository
must not be able to take over a command the person relies on. Each shadowed
name is said once.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agent_cli.errors import ConfigError
from agent_cli.tools.skills import FrontMatterError, Skills, parse_front_matter

if TYPE_CHECKING:
    from agent_cli.media import Prompt
    from agent_cli.tools.mcp import McpServers
    from agent_cli.tools.mcp_prompts import McpPrompt

COMMANDS_FOLDER = "commands"
COMMAND_FILE_CAP = 64 * 1024  # a command is a prompt, not a data file
DESCRIPTION_SHOWN = 120  # characters of a body's first line used when there is no description
FIELDS = ("description", "argument-hint")
FORMAT_HINT = (
    "a command file is Markdown, optionally starting with '---', 'description: ...', "
    "'argument-hint: ...' and '---'"
)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# What /init sends (its argument is appended): the edit goes through the usual approval.
INIT_PROMPT = """\
Write or update AGENTS.md at the root of this workspace: the instructions a coding agent \
needs to work in this repository.

First look: the README, the build, test and lint configuration (pyproject.toml, \
package.json, Makefile, CI workflows…), the layout of the source and the tests, and any \
AGENTS.md, CLAUDE.md, .cursorrules or CONTRIBUTING already there (keep what is still true).

Then write a short document (at most about 150 lines) saying: what the project is; the \
exact commands to set up, build, run all the tests and one test, and lint; the layout and \
where new code and tests go; the conventions the code follows that a glance would miss \
(style, naming, errors, tests); what a newcomer is likely to get wrong. Be specific to this \
repository, with no generic advice. Change no file but AGENTS.md."""
_LINE = re.compile(r"/(\S+)\s*(.*)", re.DOTALL)
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9][0-9]?)")


@dataclass(frozen=True)
class PromptCommand:
    """One `/NAME` that expands to a message. `problem` says why it cannot be used (a bad
    file: invoking it says so, naming the file)."""

    name: str
    description: str
    argument_hint: str = ""
    origin: str = ""  # "user", "project", "skill", or a source's own label
    path: Path | None = None
    body: str = ""
    problem: str = ""


class CommandSource(Protocol):
    """A place prompt commands come from."""

    def commands(self, warnings: list[str]) -> Sequence[PromptCommand]:
        """The commands there now (may read files: blocking); problems go to `warnings`."""
        ...

    async def expand(self, command: PromptCommand, arguments: str) -> str | Prompt:
        """The message `/NAME arguments` stands for (a Prompt when it brings images); an
        AgentError when it cannot be made."""
        ...


def fill(body: str, arguments: str) -> str:
    """`body` with `$ARGUMENTS` (all of `arguments`) and `$1`, `$2`… (its words; quotes
    group words, as a shell would split them, but nothing is run or expanded) filled in,
    in one pass: text in the arguments is never read as a placeholder. A body with no
    placeholder gets the arguments appended, so they are never lost."""
    arguments = arguments.strip()
    try:
        words = shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words
        words = arguments.split()

    def value(match: re.Match[str]) -> str:
        key = match.group(1)
        if key == "ARGUMENTS":
            return arguments
        index = int(key) - 1
        return words[index] if index < len(words) else ""

    if _PLACEHOLDER.search(body) is None:
        return f"{body}\n\n{arguments}" if arguments else body
    return _PLACEHOLDER.sub(value, body)


def read_command_file(path: Path, origin: str) -> PromptCommand:
    """The command a Markdown file defines; one with a `problem` when it cannot be used."""
    name = path.stem
    try:
        if path.stat().st_size > COMMAND_FILE_CAP:
            raise FrontMatterError(f"it is larger than {COMMAND_FILE_CAP // 1024} KiB")
        text = path.read_bytes().decode("utf-8-sig")
        if "\x00" in text:
            raise FrontMatterError("it is a binary file, not text")
        if text.startswith("---"):
            fields, body = parse_front_matter(text, FIELDS)
        else:
            fields, body = {}, text.strip()
    except FrontMatterError as e:
        return PromptCommand(name, "(cannot be used: see /help)", "", origin, path, "", str(e))
    except (OSError, UnicodeDecodeError) as e:
        why = "it is not UTF-8 text" if isinstance(e, UnicodeDecodeError) else str(e)
        return PromptCommand(name, "(cannot be used: see /help)", "", origin, path, "", why)
    if not body:
        return PromptCommand(name, "(empty)", "", origin, path, "", "it has no text to send")
    description = str(fields.get("description") or "") or _first_line(body)
    hint = str(fields.get("argument-hint") or "")
    return PromptCommand(name, description, hint, origin, path, body)


def _first_line(body: str) -> str:
    line = body.strip().splitlines()[0].strip().lstrip("#").strip()
    return line if len(line) <= DESCRIPTION_SHOWN else line[: DESCRIPTION_SHOWN - 1] + "…"


class CommandFiles:
    """`*.md` files directly in one folder, each a command named after its file.

    `confine_to`: a project's folder — a file (or the folder) that is a link
    leading outside it is refused, so a cloned repository cannot make `/x`
    send the person's private files to the model."""

    def __init__(self, folder: Path, origin: str, confine_to: Path | None = None) -> None:
        self.folder = folder
        self.origin = origin
        self.confine_to = confine_to

    def commands(self, warnings: list[str]) -> list[PromptCommand]:
        try:
            files = sorted(p for p in self.folder.iterdir() if p.suffix == ".md")
        except OSError:
            return []  # no folder: no commands
        found = []
        for path in files:
            if not _NAME.fullmatch(path.stem):
                warnings.append(
                    f"skipped the command file {path}: its name is not a command name "
                    "(letters, digits, '-', '_', '.')"
                )
                continue
            if self.confine_to is not None and not _inside(path, self.confine_to):
                warnings.append(f"skipped the command file {path}: it leads outside the project")
                continue
            if not path.is_file():
                continue
            command = read_command_file(path, self.origin)
            if command.problem:
                warnings.append(f"the command file {path} cannot be used: {command.problem}")
            found.append(command)
        return found

    async def expand(self, command: PromptCommand, arguments: str) -> str:
        return fill(command.body, arguments)


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


class SkillCommands:
    """Each switched-on skill as `/skill-name [request]`: its instructions, then the request."""

    def __init__(self, skills: Skills) -> None:
        self.skills = skills

    def commands(self, warnings: list[str]) -> list[PromptCommand]:
        enabled = self.skills.enabled()
        return [PromptCommand(s.name, s.description, "[request]", "skill") for s in enabled]

    async def expand(self, command: PromptCommand, arguments: str) -> str:
        result = self.skills.use(command.name)
        if result.is_error:
            raise ConfigError(result.text)
        text = f"Use the skill {command.name} for this.\n\n{result.text.strip()}"
        return f"{text}\n\nThe request: {arguments.strip()}" if arguments.strip() else text


# The running MCP servers (started first when `start`), and what starting them said.
Served = Callable[[bool], Awaitable[tuple["McpServers | None", list[str]]]]


class McpPromptCommands:
    """Each MCP server's prompts as `/server:prompt args…` (tools/mcp_prompts.py), from a
    listing kept between loads: completion never waits for a server. `load` lists them
    again when a server said they changed (notifications/prompts/list_changed), and when
    asked to start the servers (a `/server:prompt` not listed yet)."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self._listed: list[McpPrompt] | None = None
        self._notices: list[str] = []

    async def load(self, start: bool = False) -> bool:
        """List the prompts when due; whether there is anything new to read from here."""
        from agent_cli.tools.mcp_prompts import prompts

        servers, notices = await self.served(start)
        self._notices += notices
        if servers is None:
            return bool(notices)
        if self._listed is None or start or servers.take_changed("prompts"):
            self._listed = await prompts(servers)
            return True
        return bool(notices)

    def commands(self, warnings: list[str]) -> list[PromptCommand]:
        warnings += self._notices
        self._notices = []
        found = []
        for prompt in self._listed or ():
            if not _NAME.fullmatch(prompt.server) or not _NAME.fullmatch(prompt.name):
                warnings.append(
                    f"the MCP prompt {prompt.name!r} of {prompt.server!r} is not offered as a "
                    "command: its name is not a command name (letters, digits, '-', '_', '.')"
                )
                continue
            hint = " ".join(n if required else f"[{n}]" for n, required in prompt.arguments)
            origin = f"MCP server {prompt.server}"
            found.append(PromptCommand(prompt.command, prompt.description, hint, origin))
        return found

    async def expand(self, command: PromptCommand, arguments: str) -> str | Prompt:
        from agent_cli.tools.mcp_prompts import fetch, parse_arguments

        prompt = next(p for p in self._listed or () if p.command == command.name)
        servers, _ = await self.served(False)
        if servers is None:
            raise ConfigError(f"The MCP server {prompt.server!r} is not running: try /mcp.")
        fetched = await fetch(servers, prompt, parse_arguments(prompt, arguments))
        return fetched if fetched.images else fetched.text


def file_sources(workspace: Path, config_dir: Path) -> list[CommandSource]:
    """The person's command files, then the project's (the first to claim a name keeps it)."""
    return [
        CommandFiles(config_dir / COMMANDS_FOLDER, "user"),
        CommandFiles(workspace / ".agent" / COMMANDS_FOLDER, "project", confine_to=workspace),
    ]


class CommandRegistry:
    """Every prompt command one front end offers, by name; `reserved` names are built-ins'.

    `refresh` reads the sources again (blocking: files); the listing is kept
    between refreshes for completion, which must not read files per key."""

    def __init__(self, sources: Iterable[CommandSource] = (), reserved: Iterable[str] = ()) -> None:
        self.sources: list[CommandSource] = list(sources)
        self.reserved = set(reserved)
        self._table: dict[str, tuple[PromptCommand, CommandSource]] = {}
        self._said: set[str] = set()
        self._unsaid: list[str] = []

    def add(self, source: CommandSource) -> None:
        """Another source (MCP prompts), after the others; read at the next `refresh`."""
        self.sources.append(source)

    def reserve(self, names: Iterable[str]) -> None:
        """More built-in names, which no prompt command may take."""
        self.reserved.update(names)

    async def load(self, start: bool = False, files: bool = True) -> None:
        """Read the sources again: the servers' prompts (their servers started first when
        `start`), then the files (in a thread: they are read blocking) — with `files=False`,
        only when the servers gave something new (the files were read a moment ago)."""
        new = False
        for source in self.sources:
            if isinstance(source, McpPromptCommands):
                new = await source.load(start) or new
        if files or new:
            await asyncio.to_thread(self.refresh)

    def refresh(self) -> None:
        table: dict[str, tuple[PromptCommand, CommandSource]] = {}
        warnings: list[str] = []
        for source in self.sources:
            for command in source.commands(warnings):
                where = _where(command)
                if command.name in self.reserved:
                    warnings.append(f"{where} is not used: `/{command.name}` is a built-in command")
                elif command.name in table:
                    kept = _where(table[command.name][0])
                    warnings.append(f"{where} is not used: {kept} has the name `/{command.name}`")
                else:
                    table[command.name] = (command, source)
        self._table = table
        for warning in warnings:
            if warning not in self._said:
                self._said.add(warning)
                self._unsaid.append(warning)

    def take_warnings(self) -> list[str]:
        """What is wrong with the commands that was not said yet (each is said once)."""
        unsaid, self._unsaid = self._unsaid, []
        return unsaid

    def warnings(self) -> list[str]:
        """Everything wrong, said or not (for /help)."""
        return sorted(self._said)

    def commands(self) -> list[PromptCommand]:
        return sorted((command for command, _ in self._table.values()), key=lambda c: c.name)

    def get(self, name: str) -> PromptCommand | None:
        found = self._table.get(name)
        return found[0] if found else None

    async def expand(self, name: str, arguments: str) -> Prompt:
        """The message `/name arguments` stands for (its images, and what its arguments
        mention: `Prompt.mentions`); ConfigError naming the file when its file cannot be
        used; KeyError when there is no such command."""
        command, source = self._table[name]
        if command.problem:
            raise ConfigError(
                f"The command file {command.path} cannot be used: {command.problem} — fix it "
                f"({FORMAT_HINT})."
            )
        from agent_cli.media import Prompt

        expanded = await source.expand(command, arguments)
        if isinstance(expanded, str):
            expanded = Prompt(expanded)
        return replace(expanded, mentions=arguments)  # not the file's or the server's own


def _where(command: PromptCommand) -> str:
    if command.path is not None:
        return f"the {command.origin} command file {command.path}"
    return f"the {command.origin} `/{command.name}`"


def line_of(text: str) -> tuple[str, str] | None:
    """(name, arguments) of a `/name args` text, or None when it is not one."""
    match = _LINE.match(text.strip())
    return (match.group(1), match.group(2).strip()) if match else None


async def expand_text(registry: CommandRegistry, text: str) -> str | Prompt:
    """`text` as the message of the prompt command it names (`/name args`), or as it is
    when it names none (a path like `/etc/hosts is wrong` stays a prompt)."""
    parsed = line_of(text)
    if parsed is None or registry.get(parsed[0]) is None:
        return text
    return await registry.expand(*parsed)
