"""`agent sessions [list|show|export|fork|rm]`: the stored conversations (SPEC §1, §3).

An id may be shortened to any prefix that names one conversation. An id
that names none is a usage error (exit 2); a file that cannot be read is a
store error (exit 1) naming the file, which `rm` can still remove.
"""

from __future__ import annotations

import json
import re
import sys
import time
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent_cli.commands.common import guarded, start_debug_log, workspace_from

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.table import Table

    from agent_cli.engine.items import Conversation, Item
    from agent_cli.engine.store import Store, Summary

ID = Annotated[
    str, typer.Argument(metavar="ID", help="The conversation's id, or a unique start of it.")
]
CWD = Annotated[Path | None, typer.Option(help="List this folder's conversations.")]
ALL = Annotated[bool, typer.Option("--all", "-a", help="Every workspace's conversations.")]
JSON = Annotated[bool, typer.Option("--json", help="One JSON object a line, not a table.")]
DEBUG = Annotated[bool, typer.Option("--debug", help="Write a debug log; show tracebacks.")]
RESULT_LINES = 3  # lines of a tool's result under its line in a transcript
DIFF_LINES = 40  # lines of an edit's diff in a transcript
REASONING_LINES = 5


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="sessions",
        help="Stored conversations: list, show, export, fork or remove them.\n\n"
        "With no subcommand, lists this folder's conversations. An ID may be shortened to "
        "any unique start of it.",
        epilog="Examples: agent sessions · agent sessions --all · "
        "agent sessions show 20250101-120000-ab12cd · agent sessions show 2025 --json | jq · "
        "agent sessions rm 20250101-120000-ab12cd --yes",
        invoke_without_command=True,
        no_args_is_help=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    group.callback()(_default)
    group.command(
        "list",
        epilog="Examples: agent sessions list · agent sessions list --all · "
        "agent sessions list --json | jq -r .id",
    )(list_sessions)
    group.command(
        "show",
        epilog="Examples: agent sessions show 20250101-120000-ab12cd · "
        "agent sessions show 2025 | less -R · agent sessions show 2025 --json",
    )(show)
    group.command(
        "export",
        epilog="Examples: agent sessions export 20250101-120000-ab12cd > chat.md · "
        "agent sessions export 2025 --format json | jq .items",
    )(export)
    group.command(
        "fork",
        epilog="Examples: agent sessions fork 20250101-120000-ab12cd · "
        'agent run --resume $(agent sessions fork 2025 --quiet) "try it another way"',
    )(fork)
    group.command(
        "rm",
        epilog="Examples: agent sessions rm 20250101-120000-ab12cd · "
        "agent sessions rm 2025 --yes (no question; needed without a terminal)",
    )(remove)
    app.add_typer(group)


def _default(
    context: typer.Context,
    all_workspaces: ALL = False,
    as_json: JSON = False,
    cwd: CWD = None,
) -> None:
    """With no subcommand, list this folder's conversations."""
    if context.invoked_subcommand is not None:
        if all_workspaces or as_json or cwd is not None:
            print(
                f"agent: put the options after the subcommand "
                f"(agent sessions {context.invoked_subcommand} ...).",
                file=sys.stderr,
            )
            raise typer.Exit(2)
        return
    list_sessions(all_workspaces, as_json, cwd)


# --------------------------------------------------------------------- list


def list_sessions(
    all_workspaces: ALL = False, as_json: JSON = False, cwd: CWD = None, debug: DEBUG = False
) -> None:
    """List the stored conversations, newest first.

    A table of each one's id, title, agent, number of items and last update.
    """

    def action() -> int:
        if debug:
            start_debug_log()
        workspace = None if all_workspaces else str(workspace_from(cwd))
        summaries = _store().list(workspace)
        if as_json:
            for summary in summaries:
                print(json.dumps(summary._asdict(), ensure_ascii=False))
            return 0
        if not summaries:
            where = "anywhere" if workspace is None else f"for {workspace}"
            hint = "" if workspace is None else " (`agent sessions --all` lists every folder's)"
            print(f"No conversations are stored {where}{hint}.")
            return 0
        console = _console()
        if workspace is not None:
            console.print(_table(summaries))
            return 0
        # Every workspace: one table each, the most recently used first.
        folders = dict.fromkeys(s.workspace for s in summaries)
        for number, folder in enumerate(folders):
            console.print(("\n" if number else "") + _home_short(folder), style="bold")
            console.print(_table([s for s in summaries if s.workspace == folder]))
        return 0

    raise typer.Exit(guarded(debug, action))


def _table(summaries: list[Summary]) -> Table:
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    widest = max(len(s.id) for s in summaries)
    table.add_column("ID", no_wrap=True, style="cyan", min_width=widest)
    table.add_column("TITLE", overflow="ellipsis", no_wrap=True, ratio=1, min_width=12)
    table.add_column("AGENT", no_wrap=True)
    table.add_column("ITEMS", justify="right", no_wrap=True)
    table.add_column("UPDATED", no_wrap=True, min_width=len("2025-01-01 12:00"))
    now = time.time()
    for s in summaries:
        row = [s.id, s.title or "(untitled)", s.agent, str(s.items), when(s.updated, now)]
        table.add_row(*row)
    return table


def _home_short(folder: str) -> str:
    """A folder under the home folder as ~/..., as people write it."""
    home = str(Path.home())
    return "~" + folder[len(home) :] if folder == home or folder.startswith(home + "/") else folder


def when(timestamp: float, now: float) -> str:
    """A time as people say it: relative when recent, else the local date and time."""
    seconds = now - timestamp
    if 0 <= seconds < 60:
        return "just now"
    if 0 <= seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if 0 <= seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


# --------------------------------------------------------------------- show


def show(
    conversation_id: ID,
    as_json: Annotated[bool, typer.Option("--json", help="The stored JSON, whole.")] = False,
    debug: DEBUG = False,
) -> None:
    """Print a conversation's transcript.

    Prompts, answers (as Markdown), tool calls with a short result, and notices.
    """

    def action() -> int:
        if debug:
            start_debug_log()
        store = _store()
        path = _find(store, conversation_id)
        if as_json:
            from agent_cli.engine.store import read_stored

            print(json_text(read_stored(path)))
            return 0
        _print_transcript(_console(), store.load(path.stem))
        return 0

    raise typer.Exit(guarded(debug, action))


def _print_transcript(console: Console, conversation: Conversation) -> None:
    from rich.table import Table
    from rich.text import Text

    console.print(Text(conversation.title or "(untitled)", style="bold"))
    details = Table.grid(padding=(0, 2))
    details.add_column(style="dim", no_wrap=True)
    details.add_column(overflow="fold")
    usage = conversation.usage
    rows = [
        ("id", conversation.id),
        ("workspace", conversation.workspace),
        (
            "agent",
            conversation.agent + (f" · model {conversation.model}" if conversation.model else ""),
        ),
        ("mode", conversation.mode),
        ("items", _count(len(conversation.items), "item")),
        ("updated", when(conversation.updated, time.time())),
    ]
    if usage.input_tokens or usage.output_tokens:
        rows.append(("tokens", f"{usage.input_tokens:,} in, {usage.output_tokens:,} out"))
    for name, value in rows:
        details.add_row(name, value)
    console.print(details)
    console.rule(style="dim")
    for item in conversation.items:
        for renderable in _item(item, console.width):
            console.print(renderable)
    for rewound in conversation.rewound:  # kept by /rewind: shown, so they can be searched
        taken = when(rewound.time, time.time())
        console.rule(f"rewound {taken}: taken out of the conversation", style="dim")
        for item in rewound.items:
            for renderable in _item(item, console.width):
                console.print(renderable)
    console.rule(style="dim")


def _item(item: Item, width: int) -> list[RenderableType]:
    from rich.markdown import Markdown
    from rich.text import Text

    from agent_cli.engine.items import AssistantItem, NoticeItem, SummaryItem, ToolItem, UserItem
    from agent_cli.frontends import render

    if isinstance(item, UserItem):
        return [Text.assemble(("› ", "bold magenta"), (item.text, "bold")), Text()]
    if isinstance(item, AssistantItem):
        shown: list[RenderableType] = []
        if item.reasoning.strip():
            shown.append(Text(_cut(item.reasoning, REASONING_LINES), style="dim italic"))
        if item.text.strip():
            shown += [Markdown(item.text), Text()]
        return shown
    if isinstance(item, ToolItem):
        line = render.tool_line(item, width)
        if item.diff:
            return [line, _diff(item.diff)]
        if item.result.strip() and item.state == "done":
            return [line, Text(_indent(_cut(item.result, RESULT_LINES)), style="dim")]
        return [line]
    if isinstance(item, NoticeItem):
        return [render.notice(item.text, item.level)]
    if isinstance(item, SummaryItem):
        heading = Text(f"Summary of the {item.replaced} items before:", style="dim bold")
        return [heading, Markdown(item.text, style="dim"), Text()]
    return []


def _diff(diff: str) -> RenderableType:
    from rich.console import Group
    from rich.syntax import Syntax
    from rich.text import Text

    lines = diff.rstrip("\n").splitlines()
    body = Syntax("\n".join(lines[:DIFF_LINES]), "diff", theme="ansi_dark", word_wrap=True)
    if len(lines) <= DIFF_LINES:
        return body
    more = Text(f"  … {_count(len(lines) - DIFF_LINES, 'more line')} (--json has the whole diff)")
    return Group(body, more)


def _cut(text: str, limit: int) -> str:
    lines = text.strip().splitlines()
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join([*lines[:limit], f"… {_count(len(lines) - limit, 'more line')}"])


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


# ------------------------------------------------------------ export, fork


class Format(StrEnum):
    MARKDOWN = "markdown"
    JSON = "json"


def export(
    conversation_id: ID,
    output_format: Annotated[
        Format,
        typer.Option(
            "--format",
            "-f",
            help="markdown: a readable transcript; json: the stored conversation, whole.",
        ),
    ] = Format.MARKDOWN,
    debug: DEBUG = False,
) -> None:
    """Print a conversation to keep or share: a Markdown transcript, or its JSON.

    The Markdown has the messages, answers, tool calls with their diffs and exit
    codes, the notices, and what rewinds took out.
    """

    def action() -> int:
        if debug:
            start_debug_log()
        store = _store()
        path = _find(store, conversation_id)
        if output_format is Format.JSON:
            from agent_cli.engine.store import read_stored

            print(json_text(read_stored(path)))
            return 0
        from agent_cli.frontends.markdown_transcript import markdown

        sys.stdout.write(markdown(store.load(path.stem)))
        return 0

    raise typer.Exit(guarded(debug, action))


def fork(
    conversation_id: ID,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the new id.")] = False,
    debug: DEBUG = False,
) -> None:
    """Copy a conversation under a new id, to go on with it another way.

    The copy is independent of the original (its own file, attached files and
    checkpoints for undo); go on with it with `agent run --resume NEW_ID` or
    `/sessions NEW_ID`.
    """

    def action() -> int:
        if debug:
            start_debug_log()
        store = _store()
        conversation = store.load(_find(store, conversation_id).stem)
        copy = store.fork(conversation)
        from agent_cli.wiring import copy_checkpoints

        warning = copy_checkpoints(Path(conversation.workspace), conversation.id, copy.id)
        if warning:
            print(f"agent: {warning}", file=sys.stderr)
        if quiet:
            print(copy.id)
        else:
            print(
                f"Forked conversation {conversation.id} as {copy.id} — go on with it: "
                f'agent run --resume {copy.id} "..." (or /sessions {copy.id}).'
            )
        return 0

    raise typer.Exit(guarded(debug, action))


# ----------------------------------------------------------------------- rm


def remove(
    conversation_id: ID,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask first.")] = False,
    debug: DEBUG = False,
) -> None:
    """Remove a stored conversation (asks first, unless --yes)."""

    def action() -> int:
        from agent_cli.errors import StoreError, UsageError

        if debug:
            start_debug_log()
        store = _store()
        path = _find(store, conversation_id)
        try:
            described = f"{path.stem} ({_describe(store.load(path.stem))})"
        except StoreError:
            described = f"{path.stem} (its file cannot be read)"
        if not yes:
            if not sys.stdin.isatty():
                raise UsageError(
                    f"Not removing conversation {described} without a terminal to ask on "
                    "— pass --yes."
                )
            if not typer.confirm(f"Remove conversation {described}?", default=False):
                print("Nothing removed.")
                return 0
        store.remove(path.stem)
        print(f"Removed conversation {described}.")
        return 0

    raise typer.Exit(guarded(debug, action))


def _describe(conversation: Conversation) -> str:
    return f"“{conversation.title or 'untitled'}”, {_count(len(conversation.items), 'item')}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


# ------------------------------------------------------------------ shared


def json_text(data: object) -> str:
    """Indented JSON for a terminal: json escapes the C0 controls, this the C1 ones (a
    terminal obeys U+009B as an escape), so a stored text cannot drive the terminal."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return re.sub("[\x80-\x9f]", lambda found: f"\\u{ord(found[0]):04x}", text)


def _store() -> Store:
    from agent_cli import wiring

    return wiring.make_store()


def _find(store: Store, conversation_id: str) -> Path:
    """The conversation's file; an id that names none (or several) is a usage error."""
    from agent_cli.errors import StoreError, UsageError

    try:
        return store.find(conversation_id)
    except StoreError as e:
        raise UsageError(str(e)) from e


def _console() -> Console:
    from rich.console import Console

    return Console(highlight=False, markup=False)  # titles and values are text, not markup
