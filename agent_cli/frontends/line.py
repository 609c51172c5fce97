"""`agent --plain`: the line REPL (SPEC §1, §12), for terminals Textual cannot host.

The person types at a prompt-toolkit prompt (history per workspace, `/command`
and fuzzy `@path` completion); a run's events are printed as they come, the
answer raw as it streams, each block of it drawn again as Markdown in its place
once complete (on a capable terminal, see `render.Printer`); the rest with Rich.
While a run goes the prompt stays live below its output (`patch_stdout` prints
above it, whole lines only: the line being streamed is shown in the prompt until
it is whole, as the prompt would draw over it): Enter steers (the run reads the
message at its next round), Tab queues (a run of its own after this one; Tab
still completes when a completion menu is open), Ctrl-C stops the run; what
waits is shown on lines of the prompt above its input, and what a stop gives
back unsent is the next prompt's text. Approval cards are the shared
`InlineApprover`, fed one request at a time (see `_Approvals`); the live prompt
steps aside while one is asked. A dumb terminal has no live prompt: what is typed
during a run is read unechoed (`TypeAhead`) and is the next prompt's text.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, completion_is_selected, has_completions
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import History
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.patch_stdout import patch_stdout
from prompt_toolkit.utils import is_dumb_terminal
from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from agent_cli.engine.approval import DENY, ApprovalRequest
from agent_cli.engine.backend import RunResult
from agent_cli.engine.elicitation import ElicitationRequest
from agent_cli.engine.events import ApprovalRequested, ElicitationRequested, Event, RunFinished
from agent_cli.engine.pending import PendingChanged
from agent_cli.engine.session import Session
from agent_cli.errors import AgentError
from agent_cli.frontends import render
from agent_cli.frontends.inline_approval import InlineApprover
from agent_cli.frontends.inline_form import ask_form
from agent_cli.frontends.interactive import (
    COMMANDS,
    MENTION_SKIPPED_FOLDERS,
    MODES,
    Command,
    Interactive,
)
from agent_cli.frontends.own_command import OwnCommand
from agent_cli.frontends.plan_text import PlanAnswer, card_due, checklist, edit_text, implement
from agent_cli.frontends.resource_completion import (
    resource_candidates,
    server_candidates,
    split_query,
)
from agent_cli.frontends.tui.history import History as KeptHistory
from agent_cli.frontends.tui.history import history_file
from agent_cli.frontends.type_ahead import TypeAhead
from agent_cli.media import Prompt
from agent_cli.tools.mcp_forms import CANCEL

if TYPE_CHECKING:
    from agent_cli.frontends.resource_completion import Listing

log = logging.getLogger(__name__)

WALK_LIMIT = 5000  # files listed for `@path` completion; a bigger tree is cut (breadth first)
COMPLETIONS_SHOWN = 50
KIND_LABELS = {"steer": "steer", "queue": "queued"}
PENDING_SHOWN = 60  # characters of a waiting message shown above the live prompt
STEP_ASIDE_SECONDS = 0.01  # how often a prompt that must step aside is asked again
OWN_WHILE_RUNNING = "A run is going on: run `!command`s once it has ended (or stop it: Ctrl-C)."
MENTION = re.compile(r"(?:^|\s)@([^\s@]*)$")


def workspace_files(root: Path, limit: int = WALK_LIMIT) -> list[str]:
    """Files under `root` as relative POSIX paths, breadth first, skipping tool folders.

    Breadth first so a cut-off tree still lists the top-level files one
    mentions most; links to folders are not followed (they may lead out).
    """
    found: list[str] = []
    folders: deque[str] = deque([""])
    visited = 0  # folders count too: a sparse, huge tree must not make the walk slow
    while folders and len(found) < limit and visited < limit:
        folder = folders.popleft()
        visited += 1
        try:
            with os.scandir(root / folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in MENTION_SKIPPED_FOLDERS and not entry.name.endswith(
                        ".egg-info"
                    ):
                        folders.append(f"{folder}{entry.name}/")
                elif entry.is_file():
                    found.append(f"{folder}{entry.name}")
                    if len(found) >= limit:
                        break
    return found


def match_span(query: str, text: str) -> int | None:
    """The length of the shortest stretch of `text` holding `query` in order, or None."""
    best: int | None = None
    start = text.find(query[0])
    while start != -1:
        end = start
        for char in query[1:]:
            end = text.find(char, end + 1)
            if end == -1:
                return best
        first = end  # walk back from the end for the tightest start
        for char in reversed(query[:-1]):
            first = text.rfind(char, start, first)
        span = end - first + 1
        best = span if best is None else min(best, span)
        start = text.find(query[0], first + 1)
    return best


def fuzzy_rank(query: str, candidates: Iterable[str]) -> list[str]:
    """Paths holding `query` as a subsequence (any case), most compact match first.

    Ties go to a match inside the file name, then to the shorter path.
    """
    if not query:
        return sorted(candidates, key=lambda p: (p.count("/"), p))
    wanted = query.lower()
    scored: list[tuple[int, bool, int, str]] = []
    for path in candidates:
        lowered = path.lower()
        span = match_span(wanted, lowered)
        if span is not None:
            in_name = match_span(wanted, lowered.rpartition("/")[2]) is not None
            scored.append((span, not in_name, len(path), path))
    scored.sort()
    return [path for *_, path in scored]


class PromptCompleter(Completer):
    """`/command` (and `/mode` arguments) at the start of the input; `@path` anywhere."""

    def __init__(
        self,
        workspace: Path,
        commands: Callable[[], Sequence[Command]] = lambda: COMMANDS,
        resources: Callable[[], Listing | None] = lambda: None,
    ) -> None:
        self.workspace = workspace
        self.commands = commands
        self.resources = resources  # the MCP servers' resources as last listed (`@server:`)
        self._files: list[str] | None = None

    def refresh(self) -> None:
        """Forget the file list: it is walked again, at most once per prompt."""
        self._files = None

    def files(self) -> list[str]:
        if self._files is None:
            self._files = workspace_files(self.workspace)
        return self._files

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterator[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and "\n" not in before:
            name, space, argument = before[1:].partition(" ")
            if not space:
                for command in self.commands():
                    if command.name.startswith(name):
                        yield Completion(
                            f"/{command.name}", -len(before), display_meta=command.summary
                        )
            elif name == "mode":
                for mode in MODES:
                    if mode.startswith(argument):
                        yield Completion(mode, -len(argument))
            return
        mention = MENTION.search(before)
        if mention is not None:
            query, listed = mention.group(1), self.resources()
            split = split_query(query, listed)
            found = resource_candidates(*split, listed or {}) if split else []
            for c in [*found, *server_candidates(query, listed)][:COMPLETIONS_SHOWN]:
                yield Completion(c.value[1:], -len(query), display=c.label, display_meta=c.meta)
            if split is not None:
                return  # `@server:` is no path
            for path in fuzzy_rank(query, self.files())[:COMPLETIONS_SHOWN]:
                yield Completion(path, -len(query))


class _Approvals:
    """Feeds approval requests to the `InlineApprover` one at a time, only while a run goes on.

    With parallel calls, a Ctrl-C on one card stops the run; the requests still
    queued must then not open cards of their own, which would fight the next
    REPL prompt for the keyboard. They are denied here instead.
    """

    def __init__(self, repl: LineRepl) -> None:
        self.repl = repl
        self.approver = InlineApprover(self._set_mode, repl.interrupt)
        self.queue: deque[ApprovalRequested | ElicitationRequested] = deque()
        self.current: ApprovalRequest | ElicitationRequest | None = None
        self.task: asyncio.Task[None] | None = None

    def __call__(self, event: Event) -> None:
        if type(event) is ApprovalRequested or type(event) is ElicitationRequested:
            self.queue.append(event)
            if self.task is None or self.task.done():
                self.task = asyncio.ensure_future(self._pump())
        elif type(event) is RunFinished:
            self.deny_all()

    def deny_all(self) -> None:
        for waiting in [self.current, *(e.request for e in self.queue)]:
            if isinstance(waiting, ElicitationRequest):
                waiting.resolve(CANCEL)
            elif waiting is not None:
                waiting.resolve(DENY)
        self.queue.clear()

    async def _pump(self) -> None:
        while self.queue:
            event = self.queue.popleft()
            request = event.request
            if request.done:
                continue
            if self.repl.stopping:
                if isinstance(request, ElicitationRequest):
                    request.resolve(CANCEL)
                else:
                    request.resolve(DENY)
                continue
            self.current = request
            await self.repl.pause_typing()  # one prompt at a time on the terminal
            self.repl.printer.end_line()  # the card (on stderr) comes after all of stdout
            if isinstance(request, ElicitationRequest):  # a server's form: asked in turn
                request.resolve(await ask_form(request))
            elif type(event) is ApprovalRequested:
                self.approver(event)
            await asyncio.wait([asyncio.ensure_future(request.wait())])
            self.current = None
            self.repl.resume_typing()
            self.repl.catch_sigint()  # the card's prompt-toolkit took SIGINT over

    def _set_mode(self, mode: str) -> None:
        self.repl.interactive.session.set_mode(mode)


class LineRepl:
    """Reads a line, runs it (or a slash command), prints what happens; until a quit."""

    def __init__(self, interactive: Interactive, console: Console | None = None) -> None:
        self.interactive = interactive
        self.console = console or Console(highlight=False)
        self.printer = render.Printer(self.console)
        self.approvals = _Approvals(self)
        resources = interactive.resources
        listed = resources.listed if resources is not None else lambda: None
        self.completer = PromptCompleter(interactive.workspace, interactive.command_list, listed)
        self._listing: asyncio.Task[None] | None = None  # the resources, listed again
        self.stopping = False
        self.presses = 0  # Ctrl-C presses in a row at an empty prompt
        self._detach: list[Callable[[], None]] = []
        self.queueing = False  # the line being accepted was sent with Tab
        self._draft = ""  # the next prompt's text, typed at the live prompt before it ended
        self._returned: list[str] = []  # messages a stop gave back: after the draft, next time
        self._typing: asyncio.Task[None] | None = None  # the live prompt while a run goes
        self._type_ahead: TypeAhead | None = None  # a dumb terminal's keys during a run
        self._prompting = False  # the live prompt is on screen (or about to be)
        self._next_line: str | None = None  # sent at the live prompt just as the run ended
        self._quitting = False  # /quit at the live prompt: leave once the run has stopped
        self._cards_done = asyncio.Event()  # set while no approval card holds the terminal
        self._live = False  # a run goes with the live prompt under its output
        self._patched: contextlib.AbstractContextManager[object] | None = None
        self._cards_done.set()
        self.prompt: PromptSession[str] = PromptSession(
            history=SharedHistory(interactive.workspace),
            completer=self.completer,
            complete_in_thread=True,
            complete_while_typing=True,
            multiline=True,
            key_bindings=self._keys(),
            prompt_continuation=lambda width, _line, _soft: " " * width,
        )

    async def run(self) -> int:
        self.interactive.on_switch.append(self._attach)
        self._attach(self.interactive.session)
        self.catch_sigint()
        loading: asyncio.Task[None] | None = None
        try:
            self._banner()
            for warning in self.interactive.commands.take_warnings():
                self.printer.print(render.notice(warning, "warn"))
            self._transcript()
            # The MCP servers' prompts and resources, for completion; what went wrong is
            # said at a command (or a mention).
            loading = asyncio.create_task(self._load_listings(self.interactive.load_commands()))
            loading.add_done_callback(_quietly)
            return await self._loop()
        finally:
            for task in (loading, self._listing):
                if task is not None:
                    task.cancel()
            self.interactive.on_switch.remove(self._attach)
            for detach in self._detach:
                detach()
            self.approvals.deny_all()
            if self.approvals.task is not None:
                self.approvals.task.cancel()
            with contextlib.suppress(NotImplementedError, RuntimeError):
                asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)

    async def _load_listings(self, loading: Awaitable[object]) -> None:
        """Wait for a listing; then complete again what is typed, which may want it now."""
        if await loading is not False:
            buffer = self.prompt.default_buffer
            if self.prompt.app.is_running and MENTION.search(buffer.document.text_before_cursor):
                buffer.start_completion(select_first=False)

    def _list_resources(self) -> None:
        """List the MCP resources again in the background when due (a server said they
        changed, or its servers started with the last message)."""
        resources = self.interactive.resources
        if resources is not None and (self._listing is None or self._listing.done()):
            self._listing = asyncio.create_task(self._load_listings(resources.refresh()))
            self._listing.add_done_callback(_quietly)

    def interrupt(self) -> None:
        """Stop the run or the `!command` (Ctrl-C as a signal, or pressed on an approval card)."""
        if self.interactive.own.running is not None:
            self.interactive.own.running.stop()
        elif self.interactive.session.running:
            self.stopping = True
            self.interactive.session.stop()

    def catch_sigint(self) -> None:
        """(Re)claim SIGINT: prompt-toolkit removes the loop's handler when its prompt ends."""
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self.interrupt)

    async def _loop(self) -> int:
        while True:
            try:
                self.completer.refresh()
                self._list_resources()
                mode = self.interactive.session.mode
                text, self._next_line = self._next_line, None
                if text is None:
                    draft = "\n".join(t for t in (self._draft, *self._returned) if t.strip())
                    self._draft, self._returned = "", []
                    asked: StyleAndTextTuples = [("bold", mode), ("", " › ")]
                    if draft and is_dumb_terminal():  # its prompt does not show the default
                        asked.append(("", draft))
                    text = await self.prompt.prompt_async(asked, default=draft, handle_sigint=False)
            except KeyboardInterrupt:
                self.presses += 1
                if self.presses >= 2:
                    return 0  # a way to leave, as in the TUI: nothing was interrupted
                self.console.print("Press Ctrl-C again to quit (or Ctrl-D, or /quit).", style="dim")
                continue
            except EOFError:
                return 0
            finally:
                self.catch_sigint()
            self.presses = 0
            if not text.strip():
                continue
            sent: str | Prompt = text
            if text.startswith("/"):
                action, sent = await self._command(text.strip())
                if action == "quit":
                    return 0
                if action != "send":
                    continue
            elif text.startswith("!") and sys.stdin.isatty():  # typed; piped text is a prompt
                await self._own(text.strip())
                continue
            reason = await self._send(sent)
            if self._quitting:
                return 0
            while card_due(self.interactive.session, reason):  # plan mode ended with a plan
                message = await self._plan_card()
                if message is None:
                    break
                reason = await self._send(message)

    async def _send(self, text: str | Prompt) -> str:
        """Run one message (and what is steered or queued meanwhile, typed at the live
        prompt); the reason the last run ended ("" when it could not start)."""
        self.stopping = False
        run = asyncio.ensure_future(
            self.interactive.session.send(self.interactive.own.message(text))
        )
        # Not from a pipe (its lines are messages in turn) nor on a dumb terminal (whose
        # prompt-toolkit prompt cannot be moved aside): there the run has the terminal, and
        # what is typed meanwhile is read unechoed, for the next prompt.
        live = sys.stdin.isatty() and not is_dumb_terminal()
        if live:
            self._live = True
            self._patch_output()
            # The live prompt shows the answer's partial line (it would draw over it).
            self.printer.live = render.LivePrompt(self._redraw_prompt, self._prompt_rows)
            self._typing = asyncio.ensure_future(self._type_while_running(run))
        try:
            if sys.stdin.isatty() and not live:
                self._type_ahead = TypeAhead(sys.stdin.fileno())
                self._type_ahead.start()
            return (await run).reason.value
        except AgentError as e:
            self.printer.print(render.notice(str(e), "error"))
        except Exception as e:  # the session reports run errors itself; a last guard
            log.exception("sending failed")
            self.printer.print(render.notice(f"The message could not be sent: {e}", "error"))
        finally:
            if not run.done():  # left before the run ended (it could not be watched)
                run.cancel()
            await self._end_typing()
            self._end_type_ahead()
            self.printer.end_line()
            self.printer.live = None
            self.approvals.deny_all()
            self._live = False
            self._unpatch_output()
        return ""

    def _patch_output(self) -> None:
        """Print the run's output above the live prompt (prompt-toolkit's `patch_stdout`)."""
        if self._patched is None:
            self._patched = patch_stdout(raw=True)
            self._patched.__enter__()

    def _unpatch_output(self) -> None:
        """Write out all the patched output holds, then print straight to the terminal.

        The patched output is written by a thread of its own, later: a card drawn
        meanwhile, or its question, could come before the answer or the diff
        printed just ahead of it. Closing it waits for that thread."""
        patched, self._patched = self._patched, None
        if patched is not None:
            patched.__exit__(None, None, None)

    async def _own(self, line: str) -> None:
        """`!command`: its output printed raw as it comes, then how it ended."""
        out = self.console.file
        ended = ["\n"]

        def show(text: str) -> None:
            out.write(text)
            out.flush()
            ended[0] = text[-1]

        commands = self.interactive.own
        busy = self.interactive.session.running
        own = commands.start(line, self.interactive.workspace, show, busy)
        if not isinstance(own, OwnCommand):
            self.printer.print(render.notice(own.replace("`", ""), "warn"))
            return
        self.printer.end_line()
        said, failed = await commands.run(own)
        if ended[0] != "\n":
            out.write("\n")
        self.printer.print(render.notice(said.replace("`", ""), "warn" if failed else "info"))

    async def _type_while_running(self, run: asyncio.Task[RunResult]) -> None:
        """The prompt while a run goes: each line typed is steered into it (Enter) or
        queued after it (Tab); it steps aside for approval cards."""
        session = self.interactive.session
        while not run.done():
            await self._cards_done.wait()
            if run.done():
                return
            draft, self._draft = self._draft, ""
            self.queueing, self._prompting = False, True
            try:
                text = await self.prompt.prompt_async(  # no rows kept free for a menu:
                    self._live_prompt,  # the answer has them (a menu takes its own)
                    default=draft,
                    handle_sigint=False,
                    reserve_space_for_menu=0,
                )
            except (KeyboardInterrupt, EOFError):
                continue
            finally:
                self._prompting = False
                self.prompt.app.erase_when_done = False
                self.catch_sigint()
            if not text.strip():
                continue  # the prompt stepped aside (its text is kept in `_draft`)
            if not session.running:  # the run ended as it was sent: the main loop sends it
                self._next_line = text
                return
            if text.startswith("/"):
                action, sent = await self._command(text.strip())
                if action == "quit":
                    self._quitting = True
                    self.interrupt()
                if action != "send":
                    continue
                message: str | Prompt = sent  # a command's: its `mentions` go with it
            else:
                if text.startswith("!"):
                    self.printer.print(render.notice(OWN_WHILE_RUNNING, "warn"))
                    continue
                message = text.strip()
            try:
                if self.queueing:
                    session.queue(message)
                else:
                    session.steer(message)
            except AgentError as e:
                self.printer.print(render.notice(str(e), "warn"))

    def _live_prompt(self) -> StyleAndTextTuples:
        """The prompt while a run goes: the answer's partial line (printed above once whole),
        a line for each message waiting, then `running »`."""
        parts: StyleAndTextTuples = []
        held, reasoning = self.printer.held
        if held:  # a line longer than half the screen: its end (it is printed whole)
            size = self.prompt.app.output.get_size()
            shown = held[-max(1, size.columns * (size.rows // 2)) :]
            parts.append(("italic" if reasoning else "", shown + "\n"))
        for message in self.interactive.session.pending.messages:
            first = message.text.strip().split("\n", 1)[0]
            shown = first if len(first) <= PENDING_SHOWN else first[: PENDING_SHOWN - 1] + "…"
            parts += [("bold", f"  {KIND_LABELS[message.kind]}: "), ("", shown + "\n")]
        return [*parts, ("bold", "running"), ("", " » ")]

    def _prompt_rows(self) -> int:
        """The rows the live prompt takes under the output: `running »` and what waits."""
        return 1 + len(self.interactive.session.pending.messages)

    def _redraw_prompt(self) -> None:
        if self.prompt.app.is_running:
            self.prompt.app.invalidate()

    def _step_aside(self) -> None:
        """End the live prompt, keeping what was typed in it for the next one."""
        app = self.prompt.app
        if app.is_running and app.future is not None and not app.future.done():
            self._draft = self.prompt.default_buffer.text
            app.erase_when_done = True  # leaves no `running »` line behind in the output
            app.exit(result="")

    async def _until_no_prompt(self, done: Callable[[], bool]) -> None:
        """Step the live prompt aside until `done()`; it may be starting just now."""
        while not done():
            self._step_aside()
            await asyncio.sleep(STEP_ASIDE_SECONDS)

    async def pause_typing(self) -> None:
        """An approval card needs the terminal: the live prompt steps aside until it is done,
        and what was printed before the card is on the screen before it."""
        self._cards_done.clear()
        if self._type_ahead is not None:  # the card reads its own keys, not those typed ahead
            self._type_ahead.stop()
        await self._until_no_prompt(lambda: not self._prompting)
        self._unpatch_output()
        await asyncio.sleep(0)  # its last writes may be waiting on the loop: let them go

    def resume_typing(self) -> None:
        if self._live:
            self._patch_output()
        self._cards_done.set()
        if self._type_ahead is not None:
            self._type_ahead.start()

    def _end_type_ahead(self) -> None:
        """The terminal as it was; what was typed during the run is the next prompt's."""
        ahead, self._type_ahead = self._type_ahead, None
        if ahead is not None:
            ahead.stop()
            self._draft = "\n".join(t for t in (self._draft, ahead.take()) if t)

    async def _end_typing(self) -> None:
        typing, self._typing = self._typing, None
        if typing is not None:
            self._cards_done.set()
            await self._until_no_prompt(typing.done)

    def _pending(self, event: Event) -> None:
        """What waits changed: the live prompt shows it; what a stop gave back is the next
        prompt's text."""
        if type(event) is not PendingChanged:
            return
        self._returned.extend(event.returned)
        if self.prompt.app.is_running:
            self.prompt.app.invalidate()

    async def _plan_card(self) -> str | None:
        """The plan card: implement in a mode (the message to send), edit first, or keep
        planning (None). Ctrl-C or Ctrl-D keeps planning too."""
        session = self.interactive.session
        plan = session.conversation.plan
        if plan is None:
            return None
        text, edited = checklist(plan), False
        choices = {"a": "ask", "u": "auto", "f": "full"}
        while True:
            shown = render.plan_view(plan) if not edited else render.reply(text, "info")
            self.printer.print(Panel(shown, title="The plan", title_align="left", style="cyan"))
            try:
                typed = await _ask_line(
                    "Implement in [a]sk, a[u]to or [f]ull mode, [e]dit it first, or [k]eep "
                    "planning? "
                )
            except (KeyboardInterrupt, EOFError):
                typed = "k"
            finally:
                self.catch_sigint()
            key = typed.strip().lower()[:1]
            if key in choices:
                return implement(session, PlanAnswer("implement", choices[key], text, edited))
            if key == "e":
                changed, problem = await asyncio.to_thread(edit_text, text)
                if changed is None:
                    self.printer.print(render.notice(f"Not edited: {problem}.", "warn"))
                else:
                    text, edited = changed, True
                continue
            if key in ("k", ""):
                self.printer.print(render.notice("Still in plan mode: say what to change."))
                return None

    async def _command(self, line: str) -> tuple[str, str | Prompt]:
        """Run a slash command; its action ("quit" to leave, "send" a prompt command's
        message) and that message (with its images, if it has some)."""
        try:
            reply = await self.interactive.handle(line)
        except Exception as e:
            log.exception("the command %s failed", line)
            self.printer.print(render.notice(f"{line.split()[0]} failed: {e}", "error"))
            return "", ""
        if reply.action == "quit":
            return "quit", ""
        if reply.action == "clear":
            self.console.clear()
        elif reply.action == "copy":
            self.console.file.write(osc52(reply.argument))
            self.console.file.flush()
        elif reply.action == "theme":
            self.printer.print(
                render.notice("Themes are for the TUI; the line REPL uses your terminal's colours.")
            )
        if reply.text:
            self.printer.print(render.reply(reply.text, reply.level))
        if reply.action == "switched":
            self._transcript()
        if reply.action == "pick_rewind":
            return await self._choose_rewind()
        if reply.action == "rewound":
            self._draft = reply.argument  # the message, back at the prompt to edit
            await self._offer_restore()
        return reply.action, reply.message()

    async def _choose_rewind(self) -> tuple[str, str | Prompt]:
        """After `/rewind`'s numbered list: which message to go back to (none: nothing)."""
        typed = await self._answer("Rewind to message number (Enter: none): ")
        if not typed.strip():
            self.printer.print(render.notice("Nothing was rewound."))
            return "", ""
        return await self._command(f"/rewind {typed.strip()}")

    async def _offer_restore(self) -> None:
        """After a rewind: restore the files to before the first change it took out?"""
        offer = self.interactive.rewind_offer
        if offer is None:
            return
        typed = await self._answer(
            f"Restore the files to before '{offer.label}', the first change since? [y/N] "
        )
        if typed.strip().lower().startswith("y"):
            reply = await self.interactive.restore_files()
            self.printer.print(render.reply(reply.text, reply.level))
        else:
            self.interactive.rewind_offer = None
            self.printer.print(render.notice("The files are left as they are."))

    async def _answer(self, question: str) -> str:
        """One line typed at a question ("" for Ctrl-C or Ctrl-D)."""
        try:
            return await _ask_line(question)
        except (KeyboardInterrupt, EOFError):
            return ""
        finally:
            self.catch_sigint()

    def _transcript(self) -> None:
        """A resumed conversation's last items, and its plan."""
        conversation = self.interactive.session.conversation
        if conversation.items:
            render.transcript(self.console, conversation.items)
        if conversation.plan is not None:
            self.console.print(render.plan_view(conversation.plan))

    def _attach(self, session: Session) -> None:
        """Listen to `session` (the first one, or the one /new or /sessions switched to)."""
        for detach in self._detach:
            detach()
        listeners = (self.printer, self.approvals, self._pending)
        self._detach = [session.events.subscribe(s) for s in listeners]

    def _banner(self) -> None:
        session = self.interactive.session
        workspace = str(self.interactive.workspace)
        home = str(Path.home())
        if workspace.startswith(home + os.sep):
            workspace = "~" + workspace[len(home) :]
        self.console.print(
            Text.assemble(
                ("agent", "bold"),
                f" · {workspace} · {session.conversation.model} · mode ",
                (session.mode, "bold"),
                (" · /help for commands, Ctrl-D to leave", "dim"),
            ),
            soft_wrap=True,  # one logical line, however narrow the terminal
        )

    async def _edit_input(self, buffer: Buffer) -> None:
        """Ctrl+G: the input in $VISUAL/$EDITOR, on the terminal the prompt gives up meanwhile;
        the edit comes back to the input."""

        def edit() -> str | None:
            edited, problem = edit_text(buffer.text, what="input", allow_empty=True)
            if edited is None:
                self.printer.print(render.notice(f"Not edited: {problem}.", "warn"))
            return edited

        edited = await run_in_terminal(edit)
        if edited is not None:
            buffer.text = edited
            buffer.cursor_position = len(edited)

    def _keys(self) -> KeyBindings:
        """Enter sends; Ctrl+J, `\\` then Enter, or Esc then Enter adds a line; Ctrl-C clears a
        line, or leaves."""
        keys = KeyBindings()

        @keys.add("enter", filter=completion_is_selected)
        def _take_completion(event: KeyPressEvent) -> None:
            event.current_buffer.complete_state = None

        @keys.add("enter", filter=~completion_is_selected)
        def _send(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if buffer.document.text_before_cursor.endswith("\\"):  # `\` then Enter: a new line
                buffer.delete_before_cursor(1)
                buffer.insert_text("\n")
                return
            buffer.validate_and_handle()

        # From a pipe, LF ends a line (prompt-toolkit's default); on a terminal it is Ctrl+J.
        @keys.add("c-j", filter=Condition(sys.stdin.isatty))
        @keys.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        @keys.add("c-g")
        def _edit(event: KeyPressEvent) -> None:
            event.app.create_background_task(self._edit_input(event.current_buffer))

        running = Condition(lambda: self.interactive.session.running)

        @keys.add("tab", filter=running & ~has_completions)
        def _queue(event: KeyPressEvent) -> None:
            if event.current_buffer.text.strip():
                self.queueing = True
                event.current_buffer.validate_and_handle()

        @keys.add("c-c")
        def _interrupt(event: KeyPressEvent) -> None:
            if self.interactive.session.running:
                self.interrupt()  # the prompt is live during a run: Ctrl-C is a key here
            elif event.current_buffer.text:
                self.presses = 0
                event.current_buffer.reset()
            else:
                event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

        return keys


def osc52(text: str) -> str:
    """The escape that puts `text` on the terminal's clipboard (over ssh too; in tmux with
    `set-clipboard on`)."""
    import base64

    return f"\x1b]52;c;{base64.b64encode(text.encode()).decode()}\a"


async def _ask_line(message: str) -> str:
    """One answer typed at a prompt of its own (no history, no completion)."""
    session: PromptSession[str] = PromptSession()
    return await session.prompt_async(message, handle_sigint=False)


class SharedHistory(History):
    """The TUI's history file for this workspace, so both front ends recall the same lines.

    The file (JSON lines) is the TUI's `History`; an unwritable data dir costs the
    history, not the REPL (it logs and goes on).
    """

    def __init__(self, workspace: Path) -> None:
        super().__init__()
        self.kept = KeptHistory(history_file(workspace))

    def load_history_strings(self) -> Iterable[str]:
        return reversed(self.kept.entries)  # prompt-toolkit wants the newest first

    def store_string(self, string: str) -> None:
        self.kept.add(string)


async def run_line(interactive: Interactive) -> int:
    """The REPL until /quit or Ctrl-D (0) or Ctrl-C twice at an empty prompt (130)."""
    return await LineRepl(interactive).run()


def _quietly(task: asyncio.Task[None]) -> None:
    """A background load that failed: the command that needs it says why, not this."""
    if not task.cancelled() and task.exception() is not None:
        log.debug("loading the prompt commands failed", exc_info=task.exception())
