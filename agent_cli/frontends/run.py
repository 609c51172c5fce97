"""`agent run`: one conversation run to its end, printed as text, JSON or stream-JSON.

Each printer is only a subscriber of the Session's events. Text goes to
stdout as it arrives; notices and tool lines go to stderr, so a script can
pipe the answer alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any, TextIO

from agent_cli.engine.approval import Decision
from agent_cli.engine.backend import RunResult, StopReason
from agent_cli.engine.events import (
    ApprovalRequested,
    Delta,
    ElicitationRequested,
    Event,
    ItemAdded,
    ItemUpdated,
    NoticeEvent,
    PlanUpdated,
)
from agent_cli.engine.items import (
    AssistantItem,
    Item,
    NoticeItem,
    ToolItem,
    item_to_json,
    plan_to_json,
)
from agent_cli.engine.session import Session
from agent_cli.errors import UsageError
from agent_cli.frontends.plan_text import SYMBOLS, checklist, progress
from agent_cli.media import Prompt
from agent_cli.tools.plan import Plan

EXIT_CODES = {
    StopReason.ANSWERED: 0,
    StopReason.STOPPED: 130,
}
# Runs ending in a limit rather than an error: their notice is a warning (an error's
# notice is shown even with --quiet).
UNSAID_WHEN_QUIET = (StopReason.ROUND_LIMIT, StopReason.REPEATED_FAILURE)
NO_TERMINAL_REASON = "There is no terminal to ask the person on, so changes are refused."
NO_TERMINAL_FORM = "`agent run` has no terminal to ask the person on"
DIAGNOSTICS_SHOWN = 5  # lines of an edit's diagnostics printed on stderr (the model reads more)

Approver = Callable[[ApprovalRequested], None]
READER_GONE = (
    "The output's reader went away before the answer ended (`| head`?), so the run was "
    "stopped; it is saved — agent run --continue goes on from it."
)


class ReaderGone:
    """The reader of stdout went away (`agent run ... | head`): nobody reads the rest.

    As SIGPIPE ends other tools, the first broken pipe stops the run, which is
    then saved as stopped rather than failing on every later write: stdout is
    pointed at /dev/null.
    """

    def __init__(self, stop: Callable[[], None]) -> None:
        self.stop = stop
        self.happened = False

    def __call__(self) -> None:
        if self.happened:
            return
        self.happened = True
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        self.stop()


class _Flusher:
    """Flushes a stream once per event-loop turn, not once per delta.

    The deltas of one network read are handled in one turn, so the person
    still sees text as it arrives, at a fraction of the system calls.
    """

    def __init__(self, stream: TextIO, gone: ReaderGone) -> None:
        self.stream = stream
        self.gone = gone
        self.pending = False

    def soon(self) -> None:
        if not self.pending:
            self.pending = True
            asyncio.get_running_loop().call_soon(self.now)

    def now(self) -> None:
        self.pending = False
        try:
            self.stream.flush()
        except BrokenPipeError:
            self.gone()


class TextPrinter:
    """The answer on stdout as it streams; tool lines and notices on stderr."""

    def __init__(
        self, out: TextIO, err: TextIO, quiet: bool, gone: ReaderGone, plan_mode: bool = False
    ) -> None:
        self.out, self.err, self.quiet, self.gone = out, err, quiet, gone
        self.plan_mode = plan_mode  # the plan is the answer: printed on stdout at the end
        self._flush = _Flusher(out, gone)
        self._ends_with_newline = True
        self._wrote_text = False
        self._shown: dict[str, str] = {}
        self._nested: set[str] = set()  # sub-agents' answers: their work, not the answer

    def __call__(self, event: Event) -> None:
        try:
            if type(event) is Delta:
                if event.text and event.item not in self._nested:
                    self._write(event.text)
            elif type(event) is ItemAdded and isinstance(event.item, AssistantItem):
                if event.item.parent:
                    self._nested.add(event.item.id)
                elif self._wrote_text:
                    self._write("\n" if self._ends_with_newline else "\n\n")
            elif type(event) is ItemUpdated and isinstance(event.item, ToolItem):
                self._tool_line(event.item)
            elif type(event) is NoticeEvent and (not self.quiet or event.level == "error"):
                self._line(f"agent: {event.text}")
            elif type(event) is PlanUpdated and not (self.quiet or self.plan_mode):
                self._plan(event.plan)
        except BrokenPipeError:
            self.gone()

    def close(self) -> None:
        try:
            if not self._ends_with_newline:
                self.out.write("\n")
            self.out.flush()
        except BrokenPipeError:
            self.gone()

    def _write(self, text: str) -> None:
        self.out.write(text)
        if not self._flush.pending:
            self._flush.soon()
        self._wrote_text = True
        self._ends_with_newline = text[-1] == "\n"

    def _tool_line(self, item: ToolItem) -> None:
        """One line when a call starts, and one more if it ends denied or in error (or
        with what language servers and checks said after an edit)."""
        if self.quiet or item.state not in ("running", "denied", "error", "done"):
            return
        if item.state == "done" and not item.diagnostics:
            return
        if self._shown.get(item.id) == item.state:
            return
        self._shown[item.id] = item.state
        indent = "  " if item.parent else ""  # a sub-agent's call, under its task's line
        if item.state == "running":
            rules = " + ".join(item.rule.splitlines())  # a compound line's rules, one a line
            allowed = f"  (allowed by {rules})" if rules else ""
            self._line(f"{indent}• {item.title or item.tool}{allowed}")
        elif item.state == "done":
            from agent_cli.lsp.diagnostics import lines

            for line in lines(item.diagnostics, DIAGNOSTICS_SHOWN):
                self._line(f"{indent}  {line}")
        else:
            reason = item.result.splitlines()[0] if item.result else item.state
            self._line(f"{indent}✗ {item.title or item.tool}: {reason}")

    def _plan(self, plan: Plan) -> None:
        """The plan whenever it changes, one line a step, on stderr like the tool lines."""
        lines = [f"{progress(plan)}:"]
        lines += [f"  {SYMBOLS[step.status]} {step.step}" for step in plan.steps]
        self._line("\n".join(lines))

    def final_plan(self, plan: Plan) -> None:
        """In plan mode the plan is the answer: a Markdown checklist on stdout, after the text."""
        try:
            if self._wrote_text:
                self._write("\n" if self._ends_with_newline else "\n\n")
            self._write(f"## Plan\n\n{checklist(plan)}\n")
        except BrokenPipeError:
            self.gone()

    def _line(self, text: str) -> None:
        if not self._ends_with_newline and self._wrote_text:
            self._write("\n")
        self._flush.now()  # the answer so far, before the line about it
        self.err.write(text + "\n")
        self.err.flush()


class StreamJsonPrinter:
    """One JSON object per line per event (SPEC §6), then a `result` line."""

    def __init__(self, out: TextIO, gone: ReaderGone) -> None:
        self.out, self.gone = out, gone
        self._flush = _Flusher(out, gone)

    def __call__(self, event: Event) -> None:
        line = json.dumps(event.to_json(), ensure_ascii=False, default=str)
        try:
            self.out.write(line + "\n")
        except BrokenPipeError:
            self.gone()
        self._flush.soon()

    def result(self, summary: dict[str, Any]) -> None:
        self.out.write(json.dumps({"type": "result", **summary}, ensure_ascii=False) + "\n")


def summary(session: Session, result: RunResult, first_item: int) -> dict[str, Any]:
    """The `--output json` object: {conversation, answer, items, usage, rounds, stopped_reason}."""
    items: list[Item] = session.conversation.items[first_item:]
    answers = (i for i in reversed(items) if isinstance(i, AssistantItem) and not i.parent)
    answer = next((i.text for i in answers if i.text), "")
    data: dict[str, Any] = {
        "conversation": session.conversation.id,
        "answer": answer,
        "items": [item_to_json(i) for i in items],
        "usage": result.usage._asdict(),
        "rounds": result.rounds,
        "stopped_reason": result.reason.value,
    }
    if result.error:
        data["error"] = result.error
    if session.conversation.plan is not None:
        data["plan"] = plan_to_json(session.conversation.plan)
    return data


class Refusals:
    """Answers every approval "no" at once when nobody can be asked, and counts them;
    declines a server's form (the run says so in a notice)."""

    def __init__(self) -> None:
        self.count = 0
        self.outside = 0  # of them, commands the sandbox stopped: not run again outside it

    def __call__(self, event: Event) -> None:
        if type(event) is ApprovalRequested:
            request = event.request
            if request.outside:
                self.outside += 1
            else:
                self.count += 1
            request.resolve(Decision("no", NO_TERMINAL_REASON))
        elif type(event) is ElicitationRequested:
            event.request.decline_unasked(NO_TERMINAL_FORM)


async def run_once(
    session: Session,
    prompt: str | Prompt,
    output: str,
    quiet: bool,
    approver: Approver | None,
    compact: bool = False,
    messages: AsyncIterator[str] | None = None,
) -> int:
    """Run one message (after compacting, if asked); print per `output`; return the exit code.

    `messages`: more of them as they come (`--input-format stream-json`), each steered
    into the run going on or sent when it has ended; the end is when they end."""
    out, err = sys.stdout, sys.stderr
    first_item = len(session.conversation.items)
    printer: TextPrinter | StreamJsonPrinter | None = None
    gone = ReaderGone(session.stop)
    plan_mode = session.mode == "plan"  # headless: the plan is printed, no card
    if output == "text":
        printer = TextPrinter(out, err, quiet, gone, plan_mode)
    elif output == "stream-json":
        printer = StreamJsonPrinter(out, gone)
    # Removed when this run is said: what the caller adds to the session afterwards
    # (a scheduled run's own notice) is the caller's to print.
    listening = []
    if printer is not None:
        listening.append(session.events.subscribe(printer))
    refusals = Refusals()
    listening.append(session.events.subscribe(approver or refusals))  # type: ignore[arg-type]
    if output == "json" and not quiet:
        listening.append(session.events.subscribe(_notices_to(err)))

    loop = asyncio.get_running_loop()
    interrupts = _Interrupts(session)
    loop.add_signal_handler(signal.SIGINT, interrupts)
    try:
        result = await session.compact() if compact else None
        if messages is not None:
            from agent_cli.frontends.stream_input import converse

            assert isinstance(prompt, str), "stream-json input takes no --image"
            result = await converse(session, prompt, messages) or result
            if result is None:
                raise UsageError("stdin ended before its first message — nothing was run.")
        elif prompt and (result is None or result.reason is StopReason.ANSWERED):
            result = await session.send(prompt)
        assert result is not None, "a prompt or a compaction is required"
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        await session.aclose()
    try:
        texts = []
        if refusals.count:
            texts.append(
                f"{refusals.count} change(s) were refused: there is no terminal to ask on. "
                "Use --mode full or --yes to allow changes in this run."
            )
        if refusals.outside:
            texts.append(
                f"{refusals.outside} command(s) the sandbox stopped were not run outside it: "
                "there is no terminal to ask on. Allow them with a rule, or use --sandbox off."
            )
        for text in texts:
            if isinstance(printer, StreamJsonPrinter):
                printer(NoticeEvent(text, "warn"))
            else:
                err.write(f"agent: {text}\n")
        if isinstance(printer, TextPrinter):
            plan = session.conversation.plan
            if plan_mode and plan is not None and result.reason is StopReason.ANSWERED:
                printer.final_plan(plan)
            printer.close()
        data = summary(session, result, first_item)
        if isinstance(printer, StreamJsonPrinter):
            printer.result(data)
        elif output == "json":
            out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        out.flush()
    except BrokenPipeError:
        gone()
    finally:
        for stop_listening in listening:
            stop_listening()
    if gone.happened:
        with contextlib.suppress(BrokenPipeError):
            err.write(f"agent: {READER_GONE}\n")
        return 1
    if quiet and output == "text" and result.reason in UNSAID_WHEN_QUIET:
        # The notice saying why was a warning, which --quiet hides; an exit of 1
        # still owes its one sentence.
        said = _last_notice(session.conversation.items[first_item:])
        if said:
            err.write(f"agent: {said}\n")
    return EXIT_CODES.get(result.reason, 1)


def _last_notice(items: list[Item]) -> str:
    notices = (i for i in reversed(items) if isinstance(i, NoticeItem) and not i.parent)
    return next((i.text for i in notices), "")


def _notices_to(err: TextIO) -> Callable[[Event], None]:
    def show(event: Event) -> None:
        if type(event) is NoticeEvent:
            err.write(f"agent: {event.text}\n")

    return show


class _Interrupts:
    """The first Ctrl-C stops the run cleanly; a second one leaves at once."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.count = 0

    def __call__(self) -> None:
        self.count += 1
        if self.count == 1:
            # Said at once: another agent may take up to 10 s to honour the stop.
            sys.stderr.write("agent: stopping… press Ctrl-C again to leave at once.\n")
            self.session.stop()
        else:
            raise SystemExit(130)
