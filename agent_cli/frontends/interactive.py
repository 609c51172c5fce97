"""What the interactive front ends share: the current session and the slash commands.

The TUI and the line REPL only render and read keys; everything a slash
command does lives here, once, so both behave the same. A command answers
with a `Reply` (Markdown text for the person, and an optional action the
front end carries out, like quitting or clearing the screen).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from agent_cli.engine.items import AssistantItem, Conversation, UserItem
from agent_cli.engine.session import Session
from agent_cli.engine.store import Store
from agent_cli.errors import AgentError, UsageError
from agent_cli.frontends import rewinding
from agent_cli.frontends.own_command import OwnCommands
from agent_cli.frontends.plan_text import checklist
from agent_cli.frontends.prompt_commands import (
    INIT_PROMPT,
    CommandRegistry,
    PromptCommand,
    fill,
    line_of,
)
from agent_cli.frontends.rewinding import RewindOffer
from agent_cli.frontends.slash import (  # noqa: F401  (they are named here too)
    COMMANDS,
    MENTION_SKIPPED_FOLDERS,
    Action,
    Command,
    Reply,
)
from agent_cli.policy.modes import MODES, MODES_TEXT
from agent_cli.providers.base import ModelInfo
from agent_cli.settings import Price

if TYPE_CHECKING:
    from agent_cli.engine.resources import ResourceSource

NOT_YET = "`{name}` is not available yet in this version."

LATER: set[str] = set()  # commands whose back ends are not built yet


class ModelRoute(Protocol):
    """The built-in agent's provider and model (wiring's `Route`)."""

    @property
    def label(self) -> str: ...

    async def connect(self) -> None: ...

    async def models(self) -> list[ModelInfo]: ...

    async def switch(self, name: str) -> ModelInfo: ...

    def context_window(self) -> int | None: ...

    def served_window(self) -> Awaitable[int | None]: ...


class AgentChoice(NamedTuple):
    id: str
    name: str
    missing: tuple[str, ...]  # programs not on PATH; empty when it can start
    install: str = ""


class AgentChoices(Protocol):
    """The agents a conversation may be handed to (wiring knows the catalog)."""

    def choices(self) -> Sequence[AgentChoice]: ...

    def check(self, agent: str) -> None:
        """Raise an AgentError saying what to do when `agent` cannot be used."""
        ...


class Listing(NamedTuple):
    rows: list[tuple[str, ...]]
    warnings: list[str]


class Workbench(Protocol):
    """What the slash commands show or change that the Session does not own: the
    workspace's MCP servers, skills, git diff and checkpoints, the scheduled tasks
    (wiring's `Bench`). The blocking ones are called in a thread."""

    def mcp_servers(self) -> Listing:
        """(name, how it starts, which file, its breaker's state) per server; raises
        AgentError on a bad file."""
        ...

    def restart_mcp(self, name: str) -> str:
        """Reset the server's breaker (its next call starts it); what to say of it."""
        ...

    def skills(self) -> Listing:
        """(name, "on"|"off", where from, what it is for) per skill."""
        ...

    def switch_skill(self, name: str, on: bool) -> str:
        """Switch a skill on or off (blocking); what to say of it. Raises AgentError when
        there is no such skill."""
        ...

    def tasks(self) -> list[str]:
        """One line per scheduled task, or one line saying the file cannot be read."""
        ...

    def diff(self) -> str | None:
        """The workspace's `git diff HEAD` (blocking); None when it is not a repository."""
        ...

    def undo(self, conversation: str) -> str:
        """Restore the files of the conversation's newest checkpoint (blocking); what was done."""
        ...

    def branch(self) -> tuple[str, bool] | None:
        """(branch, dirty) for the status line (blocking); None when not a repository."""
        ...

    def first_change(self, conversation: str, turns: Collection[str]) -> str | None:
        """The label of the first change made in one of `turns` (blocking); None: none was."""
        ...

    def restore_before(self, conversation: str, turns: Collection[str]) -> str:
        """Restore the files to before the first change made in one of `turns` (blocking);
        what was done."""
        ...

    def copy_checkpoints(self, conversation: str, to: str) -> str:
        """Give a fork the checkpoints of the conversation it copies (blocking); "" when
        done, else what undo cannot do in it."""
        ...


class Questions:
    """Yes/no questions the agent needs a person for (may a workspace's own MCP servers
    or hooks run?), answered by whichever front end attaches; "no" while none has."""

    def __init__(self) -> None:
        self.answer: Callable[[str], Awaitable[bool]] | None = None

    async def ask(self, question: str) -> bool:
        return await self.answer(question) if self.answer is not None else False


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
    route: ModelRoute | None = None
    agents: AgentChoices | None = None
    prices: Callable[[str], Price | None] = lambda _model: None
    questions: Questions = field(default_factory=Questions)
    bench: Workbench | None = None
    # "no sandbox" when commands run unconfined, else "" (it may start bwrap once: call it
    # off the UI thread).
    unconfined: Callable[[], str] = lambda: ""
    # Prompt commands (command files, skills, MCP prompts); built-in names always win.
    commands: CommandRegistry = field(default_factory=CommandRegistry)
    # Lists the MCP servers' prompts early, where starting the servers asks nothing (wiring).
    warm_commands: Callable[[], Awaitable[None]] | None = None
    # The MCP servers' resources, for `@server:` completion (the Session reads them).
    resources: ResourceSource | None = None
    # After /rewind: what the files could be restored to, for the front end to offer.
    rewind_offer: RewindOffer | None = None
    # The `!command` running now (Ctrl+C stops it), and what they gave for the next message.
    own: OwnCommands = field(default_factory=OwnCommands)

    def __post_init__(self) -> None:
        self.commands.reserve(c.name for c in COMMANDS)

    def command_list(self) -> list[Command]:
        """The built-in commands, then the prompt commands (as last read), for completion."""
        return [*COMMANDS, *(_as_command(c) for c in self.commands.commands())]

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
        name, argument = line_of(line) or ("", "")
        command = next((c for c in COMMANDS if c.name == name), None)
        if command is not None and command.name in LATER:
            return Reply(NOT_YET.format(name=f"/{command.name}"), "warn")
        try:
            if command is None:
                return await self._prompt_command(name, argument, line)
            return await getattr(self, f"_{command.name}")(argument)
        except AgentError as e:
            return Reply(str(e), "error")

    async def load_commands(self) -> None:
        """Fill the prompt commands the first frame did not wait for (MCP servers' prompts)
        and say what went wrong; a front end calls it once it is on screen."""
        if self.warm_commands is not None:
            await self.warm_commands()

    async def _prompt_command(self, name: str, argument: str, line: str) -> Reply:
        """`/name args` of a command file, a skill, an MCP prompt or another source: the
        message it stands for, to send; the working agent's own command goes to it as it is."""
        await self.commands.load()  # a file added meanwhile counts
        if self.commands.get(name) is None and ":" in name:  # `/server:prompt`: start them
            await self.commands.load(start=True)
        said = "\n\n".join(self.commands.take_warnings())
        if self.commands.get(name) is not None:
            message = await self.commands.expand(name, argument)
            return Reply(said, "warn", "send", message.text, prompt=message)
        if any(own == name for own, _ in self.session.agent_commands):
            return Reply(said, "warn", action="send", argument=line.strip())
        known = ", ".join(f"/{c.name}" for c in self.command_list())
        unknown = f"Unknown command `/{name}`. The commands are: {known}."
        return Reply("\n\n".join(filter(None, [said, unknown])), "warn")

    async def _help(self, _argument: str) -> Reply:
        lines = ["| command | what it does |", "|---|---|"]
        usages = ((c.usage or "/" + c.name).replace("|", "\\|") for c in COMMANDS)
        lines += [f"| `{u}` | {c.summary} |" for u, c in zip(usages, COMMANDS, strict=True)]
        await self.commands.load()
        lines += self._prompt_help()
        keys = (
            "\n\nKeys: Enter sends; Ctrl+J, or `\\` then Enter, adds a line; Up/Down walk the "
            "history; `@` completes a file; `!command` runs it in the workspace; Ctrl+G opens "
            "the input in $EDITOR; Ctrl+C stops a run, and pressed twice when idle quits; "
            "`/copy` puts the last answer on the clipboard. In the TUI, Shift+Enter also adds "
            "a line; Ctrl+F searches the conversation; PageUp/PageDown scroll it (Home/End "
            "too when the input is empty, Ctrl+Home/Ctrl+End always); a paste of more than 10 "
            "lines shows as `[pasted text #1, N lines]` and is sent whole (Ctrl+O shows it in "
            "the input); on a card reached with Tab, Enter opens it and `c` copies its output (a "
            "click opens it and leaves the focus in the input); Ctrl+C copies selected text; "
            "typing always goes to the input; Shift+Tab moves the focus "
            "back (Tab forward, when the input is empty); Esc twice in an empty input opens "
            "`/rewind`."
            "\n\nWhile a run goes, the input stays live: Enter steers (the run reads the message "
            "at its next round), Tab queues it (sent when the run ends; Tab still completes when "
            "a completion menu is open); what waits is shown above the input. In the TUI, Esc "
            "stops the run as Ctrl+C does, wherever the focus is (on an approval card it is the "
            "card's no); in an empty input, Up takes the last waiting message back to edit and "
            "Esc drops it first. A stop puts what waited back in the input. On a dumb terminal "
            "(`--plain`, TERM=dumb) what you type during a run is not echoed: it is the next "
            "prompt's text."
        )
        extra = self.session.agent_commands
        if extra:
            agent = self.session.conversation.agent
            keys += f"\n\n{agent}'s own commands (sent to it as a message):\n"
            keys += "\n".join(f"- `/{name}` — {description}" for name, description in extra)
        return Reply("\n".join(lines) + keys)

    def _prompt_help(self) -> list[str]:
        """The prompt commands' table, marking where each comes from, and what is wrong."""
        self.commands.take_warnings()  # said here, in full
        commands = self.commands.commands()
        lines = []
        if commands:
            lines += ["", "Prompt commands (each sends its text as your message):", ""]
            for c in commands:
                usage = f"/{c.name} {c.argument_hint}".strip()
                lines.append(f"- `{usage}` — {_cell(c.description)} ({c.origin})")
        lines += [f"\n{warning}." for warning in self.commands.warnings()]
        return lines

    async def _mode(self, argument: str) -> Reply:
        if not argument:
            return Reply(
                f"The mode is `{self.session.mode}`. Switch with `/mode {'|'.join(MODES)}`.",
                action="pick_mode",
            )
        if argument not in MODES:
            return Reply(f"Unknown mode `{argument}` — use {MODES_TEXT}.", "warn")
        self.session.set_mode(argument)
        return Reply(f"Mode switched to `{argument}`; the next call reads it.")

    async def _plan(self, _argument: str) -> Reply:
        plan = self.session.conversation.plan
        if self.session.mode == "plan":
            if plan is None:
                return Reply("In plan mode; there is no plan yet. Say what to plan.")
            return Reply(f"In plan mode. The plan:\n\n{checklist(plan)}")
        self.session.set_mode("plan")
        return Reply(
            "Plan mode: the agent reads and runs only read-only commands, then ends with a "
            "plan for you to approve, carry out in a mode you pick, or edit first."
        )

    async def _model(self, argument: str) -> Reply:
        conversation = self.session.conversation
        if conversation.agent != "builtin":
            return Reply(f"`{conversation.agent}` chooses its own model.", "warn")
        if self.route is None:
            return Reply(f"The model is `{conversation.model}`.")
        if argument:
            if self.session.running:
                return Reply("A run is going on — stop it first (Ctrl+C).", "warn")
            listed = [model.id for model in await self.route.models()]
            await self.route.switch(argument)
            await self.session.switch_model(self.route.label)
            window = self.route.context_window()
            said = f" (context window {window:,} tokens)" if window else ""
            text = f"Model switched to `{conversation.model}`{said}, from the next message."
            if listed and argument not in listed:
                unlisted = f"The server does not list `{argument}`: the next message may fail."
                return Reply(f"{text} {unlisted} `/model` shows the ones it lists.", "warn")
            return Reply(text)
        models = await self.route.models()
        lines = [f"The model is `{conversation.model or self.route.label}`. {self.usage_text()}"]
        if models:
            lines += ["", "| model | context window |", "|---|---|"]
            for model in models:
                shown = f"{model.context_window:,}" if model.context_window else "—"
                lines.append(f"| `{model.id}` | {shown} |")
            lines.append("\nSwitch with `/model NAME`.")
        return Reply("\n".join(lines), action="pick_model" if models else "")

    def usage_text(self) -> str:
        """This conversation's token totals, and their cost when the model has a price."""
        conversation = self.session.conversation
        usage = conversation.usage
        text = f"This conversation used {usage.input_tokens:,} input and "
        text += f"{usage.output_tokens:,} output tokens"
        price = self.prices(conversation.model)
        if price is not None:
            text += f", about ${price.cost(usage.input_tokens, usage.output_tokens):.4f}"
        return text + "."

    async def _agent(self, argument: str) -> Reply:
        current = self.session.conversation.agent
        if self.agents is None:
            return Reply(f"This conversation is worked by `{current}`.")
        if not argument:
            lines = [f"This conversation is worked by `{current}`.", ""]
            lines += ["| agent | name | state |", "|---|---|---|", "| `builtin` | agent | ready |"]
            for choice in self.agents.choices():
                state = "ready" if not choice.missing else f"missing {', '.join(choice.missing)}"
                lines.append(f"| `{choice.id}` | {choice.name} | {state} |")
            lines.append(
                "\nHand the conversation over with `/agent ID`: the new agent gets a "
                "transcript of the work so far with your next message."
            )
            return Reply("\n".join(lines), action="pick_agent")
        if self.session.running:
            return Reply("A run is going on — stop it first (Ctrl+C).", "warn")
        if argument == current:
            return Reply(f"`{current}` already works this conversation.")
        if argument != "builtin":
            self.agents.check(argument)
        await self.session.switch_agent(argument)
        if argument == "builtin" and self.route is not None:
            await self.session.switch_model(self.route.label)
        return Reply(f"`{argument}` works this conversation from the next message.")

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
            session = self.make_session(conversation)
            session.set_mode(self.session.mode)
            self._switch(session)
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

    async def _mcp(self, argument: str) -> Reply:
        bench = self._bench("/mcp")
        verb, _, name = argument.strip().partition(" ")
        if verb == "restart" and name.strip():
            return Reply(await asyncio.to_thread(bench.restart_mcp, name.strip()))
        servers = await asyncio.to_thread(bench.mcp_servers)
        if not servers.rows:
            text = "No MCP servers are configured. Add one with `agent mcp add NAME -- CMD ARGS`."
            return Reply("\n\n".join([text, *servers.warnings]))
        lines = ["| server | how | from | state |", "|---|---|---|---|"]
        rows = servers.rows
        lines += [f"| `{n}` | `{how}` | {where} | {state} |" for n, how, where, state in rows]
        lines += [f"\n{w}" for w in servers.warnings]
        lines.append(
            "\nTheir tools: `agent mcp list`. One cooling down (it failed 3 times in a row) "
            "is called again after `/mcp restart NAME`."
        )
        return Reply("\n".join(lines), action="pick_mcp")

    async def _skills(self, argument: str) -> Reply:
        bench = self._bench("/skills")
        verb, _, name = argument.partition(" ")
        if argument and (verb not in ("on", "off") or not name.strip()):
            return Reply(
                "Use `/skills` to list them and `/skills on|off NAME` to switch one.", "warn"
            )
        if argument:
            return Reply(await asyncio.to_thread(bench.switch_skill, name.strip(), verb == "on"))
        skills = await asyncio.to_thread(bench.skills)
        if not skills.rows:
            return Reply("There are no skills.")
        lines = ["| skill | state | from | what it is for |", "|---|---|---|---|"]
        lines += [
            f"| `{name}` | {state} | {source} | {what} |"
            for name, state, source, what in skills.rows
        ]
        lines += [f"\n{w}" for w in skills.warnings]
        lines.append("\nSwitch one with `/skills on|off NAME` (or `agent skills enable|disable`).")
        return Reply("\n".join(lines), action="pick_skill")

    async def _tasks(self, _argument: str) -> Reply:
        lines = await asyncio.to_thread(self._bench("/tasks").tasks)
        if not lines:
            return Reply('No scheduled tasks. Add one: `agent tasks add "PROMPT" --daily 09:00`.')
        listed = "\n".join(f"- {line}" for line in lines)
        return Reply(f"{listed}\n\nManage them with `agent tasks list|run|disable|rm`.")

    async def _shells(self, argument: str) -> Reply:
        shells = self.session.shells
        jobs = shells.all() if shells is not None else []
        verb, _, job_id = argument.partition(" ")
        if argument and (verb != "kill" or not job_id.strip()):
            return Reply("Use `/shells` to list them and `/shells kill ID` to end one.", "warn")
        if shells is None or not jobs:
            return Reply("No background commands have run in this session.")
        if argument:
            job = shells.get(job_id)
            if job is None:
                known = ", ".join(f"`{j.id}`" for j in jobs)
                return Reply(f"There is no background command `{job_id.strip()}`: {known}.", "warn")
            await shells.kill(job)
            return Reply(f"`{job.id}` ended: {job.state}.")
        lines = ["| id | state | command | last lines |", "|---|---|---|---|"]
        for job in jobs:
            last = "<br>".join(_cell(line) for line in job.last_lines()) or "—"
            lines.append(f"| `{job.id}` | {job.state} | `{_cell(job.command)}` | {last} |")
        lines.append("\nEnd one with `/shells kill ID`.")
        running = any(not job.exited for job in jobs)
        return Reply("\n".join(lines), action="pick_shell" if running else "")

    async def _clear(self, _argument: str) -> Reply:
        return Reply("", action="clear")

    async def _diff(self, _argument: str) -> Reply:
        diff = await asyncio.to_thread(self._bench("/diff").diff)
        if diff is None:
            return Reply("This folder is not a git repository, so there is no diff to show.")
        return Reply(f"```diff\n{diff}\n```" if diff else "No changes against git's HEAD.")

    async def _undo(self, _argument: str) -> Reply:
        bench = self._bench("/undo")
        if self.session.running:
            return Reply("A run is going on — stop it first (Ctrl+C).", "warn")
        done = await asyncio.to_thread(bench.undo, self.session.conversation.id)
        # The model's picture of the files is out of date: it reads this with the next message.
        self.session.notice(f"/undo: {done}.", for_model=True)
        return Reply("")

    async def _copy(self, _argument: str) -> Reply:
        answer = last_answer(self.session.conversation)
        if not answer:
            return Reply("There is no answer to copy yet.", "warn")
        lines = answer.count("\n") + 1
        said = f"Copied the last answer ({lines} line{'s' if lines > 1 else ''}) to the clipboard."
        return Reply(said, action="copy", argument=answer)

    async def _rewind(self, argument: str) -> Reply:
        """`/rewind`: the earlier messages, numbered; `/rewind N` (or an item id): take
        message N and what followed out, its text back in the input (see `RewindOffer`)."""
        self.rewind_offer = None
        points = self.session.rewind_points()
        if not points:
            return Reply("There is no message to rewind to yet.")
        if not argument:
            return Reply(rewinding.listing(points), action="pick_rewind")
        if argument.isdigit() and not 1 <= int(argument) <= len(points):
            return Reply(
                f"There is no message {argument}: `/rewind` lists 1–{len(points)}.", "warn"
            )
        chosen = points[int(argument) - 1].id if argument.isdigit() else argument
        rewound = self.session.rewind(chosen)
        turns = rewinding.rewound_turns(rewound)
        if self.bench is not None and turns:  # what the files could go back to
            conversation = self.session.conversation.id
            label = await asyncio.to_thread(self.bench.first_change, conversation, turns)
            if label is not None:
                self.rewind_offer = RewindOffer(conversation, turns, label)
        first = rewound.items[0]
        text = first.text if isinstance(first, UserItem) else ""
        said = rewinding.rewound_text(rewound, self.bench is not None)
        return Reply(said, action="rewound", argument=text)

    async def restore_files(self) -> Reply:
        """Take up the offer of the last rewind: the files as they were before its changes."""
        offer, self.rewind_offer = self.rewind_offer, None
        if offer is None or self.bench is None:
            return Reply("There is nothing to restore.", "warn")
        try:
            done = await asyncio.to_thread(
                self.bench.restore_before, offer.conversation, offer.turns
            )
        except AgentError as e:
            return Reply(str(e), "error")
        return Reply(done)

    async def _fork(self, _argument: str) -> Reply:
        original = self.session.conversation
        copy = self.session.fork()
        warning = ""
        if self.bench is not None:
            warning = await asyncio.to_thread(self.bench.copy_checkpoints, original.id, copy.id)
        session = self.make_session(copy)
        session.set_mode(self.session.mode)
        self._switch(session)
        said = (
            f"Forked: you are now in `{copy.id}`, a copy of this conversation. The original "
            f"`{original.id}` is kept as it was (`/sessions {original.id}` goes back)."
        )
        return Reply("\n\n".join(filter(None, [said, warning])), action="switched")

    async def _init(self, argument: str) -> Reply:
        return Reply("", action="send", argument=fill(INIT_PROMPT, argument))

    async def _theme(self, argument: str) -> Reply:
        return Reply("", action="theme", argument=argument)

    async def _quit(self, _argument: str) -> Reply:
        return Reply("", action="quit")

    def _bench(self, command: str) -> Workbench:
        if self.bench is None:
            raise UsageError(f"`{command}` is not available in this front end.")
        return self.bench

    def _switch(self, session: Session) -> None:
        self.session = session
        self.own.context.clear()  # the output of `!command`s was for the conversation left
        for listener in self.on_switch:
            listener(session)


def _as_command(command: PromptCommand) -> Command:
    hint = f"/{command.name} {command.argument_hint}" if command.argument_hint else ""
    marked = " (project)" if command.origin == "project" else ""
    return Command(command.name, command.description + marked, hint)


def last_answer(conversation: Conversation) -> str:
    """The newest answer of the agent itself (not a sub-agent's), as Markdown."""
    for item in reversed(conversation.items):
        if isinstance(item, AssistantItem) and not item.parent and item.text.strip():
            return item.text.strip()
    return ""


def _cell(text: str) -> str:
    """One line of text that cannot break a Markdown table row."""
    line = " ".join(text.split())
    return (line if len(line) <= 80 else line[:79] + "…").replace("|", "\\|").replace("`", "'")
