"""Rich renderings of conversation items and a run's events, for the line REPL (and others).

Everything here returns Rich renderables or prints to a given Console, so the
caller decides where output goes. Rich honours NO_COLOR and dumb terminals by
itself; the escape codes written by hand (a finished call's line replacing its
`•` line, a finished block of an answer erased to be drawn again as Markdown) are
only sent to a capable terminal.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown
from rich.padding import Padding
from rich.segment import Segments
from rich.syntax import Syntax
from rich.text import Text

from agent_cli.engine.approval import ApprovalRequest
from agent_cli.engine.events import (
    ApprovalRequested,
    Delta,
    Event,
    ItemAdded,
    ItemUpdated,
    NoticeEvent,
    PlanUpdated,
    RunFinished,
)
from agent_cli.engine.items import AssistantItem, Item, NoticeItem, ToolItem, UserItem
from agent_cli.frontends.markdown_blocks import BlockEnds
from agent_cli.frontends.outcome import outcome
from agent_cli.frontends.plan_text import SYMBOLS, progress
from agent_cli.media import chips
from agent_cli.tools.plan import Plan
from agent_cli.tools.processes import strip_escapes

DIFF_LINES = 80  # a longer diff is cut, with a pointer to /diff
TRANSCRIPT_ITEMS = 20  # items shown when a conversation is resumed
TRANSCRIPT_TEXT_LINES = 30  # lines of one resumed assistant answer
NOTICE_STYLES = {"info": "cyan", "warn": "yellow", "error": "bold red"}
UP_AND_CLEAR = "\x1b[1A\r\x1b[2K"  # cursor to the line above, erased
MARKS = {"done": ("✓", "green"), "denied": ("✗", "yellow"), "error": ("✗", "red")}
STEP_STYLES = {"completed": "dim green", "in_progress": "bold cyan", "pending": ""}
DIAGNOSTIC_STYLES = {"error": "red", "warning": "yellow"}
DIAGNOSTICS_SHOWN = 5  # lines of an edit's diagnostics printed under it (the model reads more)
OUTPUT_TAIL = 5  # last lines of a command's output printed under its line
SHELL_TOOLS = ("exec_shell_command",)
# Text worth drawing again as Markdown once streamed: headings, lists, code, emphasis, tables.
MARKDOWN = re.compile(r"^\s{0,3}(#{1,6} |[-*+] |\d+[.)] |> |```|\|)|\*\*|__|`[^`\n]+`", re.M)
ROWS_KEPT = 2  # rows under a raw block that may not be counted on (the prompt's line)


@dataclass(frozen=True)
class LivePrompt:
    """A prompt that sits under the output while a run goes (the line REPL's)."""

    redraw: Callable[[], None]  # the partial line it shows has changed
    rows: Callable[[], int]  # the rows it takes under the output, besides that line


def tool_line(item: ToolItem, width: int) -> Text:
    """One line for a call: `• title` while it runs, `✓`/`✗ title: reason` when it ended.

    Cut to `width` so it never wraps: a caller may overwrite it in place.
    """
    title = item.title or item.tool
    if item.mcp:
        title += f"  [MCP: {item.mcp}]"
    said = outcome(item)  # a command that exited non-zero gets no green tick
    mark, style = ("✗", "red") if said.failed else MARKS.get(item.state, ("•", "cyan"))
    line = Text.assemble((mark, style), " ", (title, "bold"))
    if said.text:
        line.append(
            f" · {'failed · ' if said.failed else ''}{said.text}", "red" if said.failed else "dim"
        )
    if item.state in ("denied", "error"):
        reason = item.result.strip().splitlines()[0] if item.result.strip() else item.state
        line.append(f": {reason}", style="dim")
    if item.rule and item.state == "done":
        rules = " + ".join(item.rule.splitlines())  # the rules of a compound line, one a line
        line.append(f"  (allowed by {rules})", style="dim")
    line.no_wrap = True
    line.truncate(max(width - 1, 10), overflow="ellipsis")
    return line


def diagnostics_view(item: ToolItem, shown: int = DIAGNOSTICS_SHOWN) -> Text:
    """What language servers and checks said after an edit: errors red, warnings yellow,
    the ones there before the edit dim."""
    from agent_cli.lsp.diagnostics import ordered

    found = ordered(item.diagnostics)
    text = Text()
    for diagnostic in found[:shown]:
        style = "dim" if diagnostic.existing else DIAGNOSTIC_STYLES.get(diagnostic.severity, "")
        text.append(f"  {diagnostic.text()}\n", style=style)
    if len(found) > shown:
        text.append(f"  … and {len(found) - shown} more\n", style="dim")
    text.rstrip()
    return text


def diff_view(diff: str, limit: int = DIFF_LINES) -> RenderableType:
    """A unified diff with syntax colour, cut to `limit` lines."""
    lines = diff.rstrip("\n").splitlines()
    body = Syntax("\n".join(lines[:limit]), "diff", theme="ansi_dark", word_wrap=True)
    if len(lines) <= limit:
        return body
    more = Text(f"… {len(lines) - limit} more lines (/diff shows the whole diff)", style="dim")
    return Group(body, more)


def plan_view(plan: Plan) -> Text:
    """The plan as a checklist: done steps dim, the one in progress bold."""
    text = Text(progress(plan), style="bold")
    for step in plan.steps:
        style = STEP_STYLES[step.status]
        text.append("\n  ")
        text.append(f"{SYMBOLS[step.status]} {step.step}", style=style)
    if plan.explanation:
        text.append(f"\n  {plan.explanation}", style="dim italic")
    return text


def output_tail(item: ToolItem, lines: int = OUTPUT_TAIL) -> Text:
    """The last lines of a command's output, dim and indented, under its line."""
    result = strip_escapes(item.result)
    shown = [line for line in result.rstrip("\n").split("\n") if line.strip()][-lines:]
    text = Text("\n".join(f"  {line}" for line in shown), style="dim")
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text


def markdown_block(console: Console, block: str) -> Segments:
    """`block` drawn as Markdown, without the empty line Rich puts before a list or a quote
    drawn alone (the blank line between blocks is the printer's)."""
    lines = console.render_lines(Markdown(block.strip()), pad=False, new_lines=True)
    while lines and not "".join(segment.text for segment in lines[0]).strip("\n"):
        lines.pop(0)
    return Segments(segment for line in lines for segment in line)


def rows(text: str, width: int) -> int:
    """How many terminal rows `text` took when written raw at `width` columns."""
    lines = text.removesuffix("\n").split("\n")
    return sum(max(1, math.ceil(cell_len(line.expandtabs()) / max(width, 1))) for line in lines)


def notice(text: str, level: str = "info") -> Text:
    return Text(text, style=NOTICE_STYLES.get(level, "cyan"))


def reply(text: str, level: str) -> RenderableType:
    """A slash command's Markdown answer; warnings and errors in their colour."""
    if level == "info":
        return Markdown(text)
    return Markdown(text, style=NOTICE_STYLES.get(level, ""))


def transcript(console: Console, items: Sequence[Item], limit: int = TRANSCRIPT_ITEMS) -> None:
    """A compact view of a resumed conversation's last `limit` items."""
    shown = list(items)[-limit:]
    if len(items) > len(shown):
        console.print(Text(f"… {len(items) - len(shown)} earlier items", style="dim"))
    for item in shown:
        if isinstance(item, UserItem):
            console.print(Text.assemble(("› ", "bold magenta"), (item.text, "bold")))
            if item.images or item.attachments:  # chips, never the content
                console.print(Text("  " + " ".join(chips(item.images, item.attachments)), "dim"))
        elif isinstance(item, AssistantItem) and item.text.strip():
            lines = item.text.strip().splitlines()
            text = "\n".join(lines[:TRANSCRIPT_TEXT_LINES])
            if len(lines) > TRANSCRIPT_TEXT_LINES:
                text += f"\n\n*… {len(lines) - TRANSCRIPT_TEXT_LINES} more lines*"
            console.print(Markdown(text))
        elif isinstance(item, ToolItem):
            console.print(tool_line(item, console.width))
        elif isinstance(item, NoticeItem):
            console.print(notice(item.text, item.level))
    console.rule(style="dim")


class _Streamed:
    """The answer being streamed: all its text, and the raw part not drawn again yet."""

    def __init__(self, item: str) -> None:
        self.item = item
        self.streamed: list[str] = []
        self.open: list[str] = []  # the raw pieces on screen since the last block drawn
        self.blocks = BlockEnds()


class Printer:
    """Prints a run's events: the answer raw as it streams, everything else with Rich."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._at_line_start = True
        self._reasoning = False  # the last thing written was reasoning
        self._running_line: str | None = None  # the tool whose `•` line is the last line
        self._states: dict[str, str] = {}
        self._card_diffs: dict[str, str] = {}  # the diff each approval card already showed
        self._flush_pending = False
        self._overwrite = console.is_terminal and not console.is_dumb_terminal
        self._nested: set[str] = set()  # sub-agents' answers: shown as their calls, not text
        # The answer being streamed, with nothing printed after it yet: on a capable
        # terminal each of its blocks is drawn again as Markdown once it is complete.
        self._answer: _Streamed | None = None
        # Set while a live prompt sits under the output: a line is written once whole (the
        # prompt draws over a partial one); the partial line is shown by the prompt.
        self.live: LivePrompt | None = None
        self._held = ""  # the partial line held back meanwhile

    @property
    def held(self) -> tuple[str, bool]:
        """The partial line held back for the live prompt, and whether it is reasoning."""
        return self._held, self._reasoning

    def __call__(self, event: Event) -> None:
        if type(event) is Delta:
            if event.item in self._nested:
                return
            # The model's escape sequences never reach the terminal (the clipboard, cursor
            # moves over tool lines), nor the row count that erases a block to redraw it.
            if reasoning := strip_escapes(event.reasoning):
                self._answer = None
                self._write(reasoning, reasoning=True)
            if text := strip_escapes(event.text):
                self._stream_answer(event.item, text)
        elif type(event) is ItemAdded and isinstance(event.item, AssistantItem):
            if event.item.parent:
                self._nested.add(event.item.id)
            else:
                self.end_line()
        elif type(event) is ItemUpdated and isinstance(event.item, ToolItem):
            self._tool(event.item)
        elif type(event) is ItemUpdated and isinstance(event.item, AssistantItem):
            if not event.item.streaming:
                self._answered(event.item)
        elif type(event) is ApprovalRequested:
            request: ApprovalRequest = event.request
            self._card_diffs[request.item.id] = request.diff
        elif type(event) is NoticeEvent:
            self.print(notice(event.text, event.level))
        elif type(event) is PlanUpdated:
            self.print(plan_view(event.plan))
        elif type(event) is RunFinished:
            self.end_line()

    def print(self, renderable: RenderableType) -> None:
        self._answer = None
        self.end_line()
        self.console.print(renderable)

    def _stream_answer(self, item: str, text: str) -> None:
        """The answer raw as it streams; a block complete (a new one has begun after a blank
        line) is drawn again as Markdown in its place, the new one's start raw under it."""
        answer = self._answer
        if answer is None or answer.item != item:
            answer = self._answer = _Streamed(item)
        answer.streamed.append(text)
        end = answer.blocks.feed(text) if self._overwrite else 0
        if not end:
            answer.open.append(text)
            self._write(text)
            return
        shown = "".join(answer.open)
        done, rest = (shown + text)[:end], (shown + text)[end:]
        answer.open, answer.blocks = [rest], BlockEnds()
        answer.blocks.feed(rest)  # the new block's start: it ends no block of its own
        if self._redraw(shown, done, more=True):
            self._write(rest)
        else:  # left raw (plain text, or taller than the screen): the new block goes on
            self._write(text)

    def _answered(self, item: AssistantItem) -> None:
        """The answer has finished streaming: on a capable terminal, where it is still the
        last thing written, its last block is drawn as Markdown too."""
        answer, self._answer = self._answer, None
        if answer is None or answer.item != item.id or not self._overwrite:
            return
        if "".join(answer.streamed).strip() != strip_escapes(item.text).strip():
            return
        self.end_line()
        block = "".join(answer.open)
        self._redraw(block if block.endswith("\n") else block + "\n", block, more=False)

    def _redraw(self, shown: str, block: str, *, more: bool) -> bool:
        """Erase `shown` (the raw rows up to the cursor) and draw `block` there as Markdown,
        with a blank line after it if `more` follows; False when it is left raw: plain
        text, or scrolled past the top (it cannot be erased)."""
        if not MARKDOWN.search(block):
            return False
        below = ROWS_KEPT if self.live is None else self.live.rows() + 1
        if rows(shown, self.console.width) + below > self.console.height:
            return False  # its top has scrolled away: it cannot be erased
        if self.live is not None:  # the partial line is the prompt's, not on the screen
            shown, self._held = shown[: shown.rfind("\n") + 1], ""
        if shown:
            taken = rows(shown, self.console.width)
            up = taken if shown.endswith("\n") else taken - 1  # the cursor is on the last row
            self.console.file.write((f"\x1b[{up}A" if up else "") + "\r\x1b[J")
        self.console.print(markdown_block(self.console, block), end="")
        if more:
            self.console.file.write("\n")
        self._at_line_start = True
        self._flush()
        return True

    def end_line(self) -> None:
        """Finish a streamed line, so what follows starts on its own; flush now."""
        if self._held:
            self._write_lines(self._held + "\n", self._reasoning)
            self._held = ""
            if self.live is not None:
                self.live.redraw()
        elif not self._at_line_start:
            self.console.file.write("\n")
        self._at_line_start = True
        self._reasoning = False
        self._running_line = None
        self._flush()

    def _write(self, text: str, reasoning: bool = False) -> None:
        if self._reasoning != reasoning:
            self.end_line()
        self._reasoning = reasoning
        self._running_line = None
        if self.live is not None:
            whole, newline, self._held = (self._held + text).rpartition("\n")
            if newline:
                self._write_lines(whole + newline, reasoning)
            self._at_line_start = not self._held
            self.live.redraw()
            return
        self._write_lines(text, reasoning)
        self._at_line_start = text.endswith("\n")

    def _write_lines(self, text: str, reasoning: bool) -> None:
        if reasoning:
            self.console.print(Text(text, style="dim italic"), end="", soft_wrap=True)
            return
        self.console.file.write(text)
        if not self._flush_pending:  # once per event-loop turn, not once per token
            self._flush_pending = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_pending = False
        self.console.file.flush()

    def _tool(self, item: ToolItem) -> None:
        """`•` when a call starts; `✓`/`✗` when it ends, over the `•` line if it is the last."""
        if item.state not in ("running", "done", "denied", "error"):
            return
        if self._states.get(item.id) == item.state:
            return
        self._states[item.id] = item.state
        self._answer = None
        replace = self._running_line == item.id and self._overwrite
        self.end_line()
        if replace:
            self.console.file.write(UP_AND_CLEAR)
        line = tool_line(item, self.console.width - 2 if item.parent else self.console.width)
        self.console.print(Padding(line, (0, 0, 0, 2)) if item.parent else line)  # under its task
        if item.state == "running":
            self._running_line = item.id
        elif item.state == "done" and item.diff and self._card_diffs.get(item.id) != item.diff:
            self.console.print(diff_view(item.diff))
        if item.state == "done" and item.diagnostics:
            self.console.print(diagnostics_view(item))
        if item.state in ("done", "error") and item.tool in SHELL_TOOLS and item.result.strip():
            self.console.print(output_tail(item))
