"""Approval cards asked inline on the terminal: `agent run` in `ask` mode, and the line REPL.

The card (the diff with colour, or the command and its folder) is drawn with
Rich on stderr, so a piped stdout keeps only the answer; the answer is read
with prompt-toolkit. Answers: yes, no (+ a reason), always (a rule and its
scope), hunks (an edit's hunks to keep), edit (in $EDITOR), mode.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from agent_cli.engine.approval import ApprovalRequest, Decision, Scope
from agent_cli.engine.events import ApprovalRequested, Event
from agent_cli.policy.modes import MODES, reads_only, switched_to

SCOPES: dict[str, Scope] = {"c": "conversation", "p": "project", "e": "everywhere"}


class InlineApprover:
    """A subscriber that asks the person about each approval request, one at a time."""

    def __init__(self, set_mode: Callable[[str], None], on_interrupt: Callable[[], None]) -> None:
        self.set_mode = set_mode
        self.on_interrupt = on_interrupt
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()

    def __call__(self, event: Event) -> None:
        if type(event) is ApprovalRequested:
            task = asyncio.ensure_future(self._ask(event.request))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _ask(self, request: ApprovalRequest) -> None:
        async with self._lock:
            if request.done:
                return
            try:
                decision = await self._card(request)
            except (KeyboardInterrupt, EOFError):
                decision = Decision("no", "The person interrupted the run.")
                self.on_interrupt()
            except Exception as exc:  # an unanswered request would hang the run for good
                print(
                    f"agent: the approval card failed ({exc}); the call is refused.",
                    file=sys.stderr,
                )
                decision = Decision("no", "The approval card failed, so nothing was done.")
            request.resolve(decision)

    async def _card(self, request: ApprovalRequest) -> Decision:
        console = _console()
        _show(console, request)
        options = "[y]es  [n]o  [a]lways  "
        if request.kind == "edit":
            options += "[h]unks  [e]dit  "
        options += "[m]ode"
        while True:
            answer = (await _prompt(f"Allow? {options}: ")).strip().lower()[:1]
            if answer == "y":
                return Decision("yes")
            if answer == "n":
                reason = await _prompt("Reason for the model (Enter for none): ")
                return Decision("no", reason.strip())
            if answer == "a":
                return await self._always(request)
            if answer == "h" and request.kind == "edit":
                decision = await _hunks(console, request)
                if decision is not None:
                    return decision
            if answer == "e" and request.kind == "edit":
                decision = await _edit(console, request)
                if decision is not None:
                    return decision
            if answer == "m":
                mode = (await _prompt(f"Mode ({', '.join(MODES)}): ")).strip()
                if mode in MODES:
                    self.set_mode(mode)
                    if mode == "full":
                        return Decision("yes")
                    if reads_only(mode):
                        return Decision("no", switched_to(mode))

    async def _always(self, request: ApprovalRequest) -> Decision:
        from agent_cli.policy.rules import NO_RULE, Rule, split_rules

        suggested = split_rules(request.suggested_rule)
        offer = suggested[0] if len(suggested) == 1 else f"these {len(suggested)} rules"
        if len(suggested) > 1:  # a compound line: one rule per simple command, all kept
            print("Every command of the line must match one of these rules:", file=sys.stderr)
            print("".join(f"  {rule}\n" for rule in suggested), end="", file=sys.stderr)
        elif not suggested:
            print(NO_RULE, file=sys.stderr)
            offer = "allowing it once"
        while True:
            typed = (await _prompt(f"Rule (Enter for {offer}): ")).strip()
            if not typed and not suggested:
                return Decision("yes")
            try:
                for rule in split_rules(typed) or suggested:
                    Rule.parse(rule)
                break
            except ValueError as exc:
                print(f"{exc}.", file=sys.stderr)  # the loop would fail on a rule it cannot read
        scope_key = (await _prompt("Scope: [c]onversation  [p]roject  [e]verywhere: ")).strip()
        scope = SCOPES.get(scope_key[:1].lower(), "conversation")
        return Decision("always", rule=typed or request.suggested_rule, scope=scope)


def _console():  # -> rich.console.Console, imported only when a card is shown
    from rich.console import Console

    return Console(file=sys.stderr, highlight=False)


def _show(console, request: ApprovalRequest) -> None:
    from rich.panel import Panel
    from rich.syntax import Syntax
    from rich.text import Text

    item = request.item
    body: Text | Syntax
    if request.kind == "command":
        body = Text.assemble(("$ ", "bold"), (request.command, "bold cyan"), f"\nin {request.cwd}")
        if request.outside:
            body.append(f"\nThe sandbox stopped it: {request.outside}.", "bold yellow")
            body.append("\nRun it again outside the sandbox, unconfined?")
    elif request.diff:
        body = Syntax(request.diff, "diff", theme="ansi_dark", word_wrap=True)
    else:
        body = Text(item.args or "{}")
    # An MCP tool's readOnlyHint is the server's claim: shown, never trusted (SPEC §8).
    title = f"{item.title or item.tool}" + (f"  [{item.mcp_label}]" if item.mcp else "")
    console.print(Panel(body, title=title, title_align="left", border_style="yellow"))


async def _prompt(message: str) -> str:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.output import create_output

    session: PromptSession[str] = PromptSession(output=create_output(stdout=sys.stderr))
    # handle_sigint=False: otherwise prompt-toolkit removes the event loop's SIGINT
    # handler when the card closes, and Ctrl-C no longer stops the run.
    return await session.prompt_async(message, handle_sigint=False)


async def _hunks(console, request: ApprovalRequest) -> Decision | None:
    """Ask which hunks to keep; None (back to the card) if the diff has none to pick."""
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    try:
        hunks = [h for f in PatchSet(request.diff) for h in f]
    except UnidiffParseError:
        hunks = []
    if not hunks:
        console.print("This change has no hunks to pick from; answer another way.")
        return None
    for number, hunk in enumerate(hunks, 1):
        console.print(f"[bold]hunk {number}[/bold] {hunk.section_header or ''}".rstrip())
        console.print(str(hunk).rstrip(), markup=False, highlight=False)
    typed = await _prompt(f"Hunks to apply (e.g. 1,3; 1-{len(hunks)}): ")
    keep = _parse_numbers(typed, len(hunks))
    if not keep:
        return Decision("no", "The person accepted none of the hunks.")
    if len(keep) == len(hunks):
        return Decision("yes")  # all of them: a plain yes, not "only some"
    return Decision("yes", hunks=tuple(n - 1 for n in keep))


def _parse_numbers(text: str, most: int) -> list[int]:
    chosen: set[int] = set()
    for part in text.replace(" ", "").split(","):
        low, _, high = part.partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            chosen.update(range(int(low), int(high or low) + 1))
    return sorted(n for n in chosen if 1 <= n <= most)


async def _edit(console, request: ApprovalRequest) -> Decision | None:
    """Open the proposed result in $EDITOR; accept the person's version."""
    proposed = request.proposed
    if proposed is None:
        return None
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    suffix = Path(request.item.file or "file.txt").suffix
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"proposed{suffix}"
        path.write_text(proposed, encoding="utf-8")
        try:
            command = [*shlex.split(editor), str(path)]
            code = await asyncio.to_thread(subprocess.call, command)
        except (OSError, ValueError) as exc:
            console.print(
                f"The editor {editor!r} could not be started ({exc}); set $VISUAL or $EDITOR, "
                "or answer another way.",
                markup=False,
            )
            return None
        if code != 0:
            console.print(f"The editor exited with {code}; nothing was accepted.")
            return None
        try:
            return Decision("yes", edited=path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            console.print("The edited file is not UTF-8 text; nothing was accepted.")
            return None
