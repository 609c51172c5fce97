"""The client side of ACP that an external agent calls back (SPEC §11).

Session updates go to the current prompt's `Turn`; permission requests are
the mode's to answer (`full` allows, `read-only` declines, `ask` shows our
approval card); `fs/read_text_file` and `fs/write_text_file` work inside the
workspace only, through the same `Workspace.resolve` as our own tools. Terminal
methods are not offered. Imported only once an external agent starts: it
imports the SDK.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from agent_cli.backends.acp_mapping import (
    CHANGE_KINDS,
    Turn,
    arguments,
    command_line,
    propose,
    read_text,
)
from agent_cli.engine.approval import ApprovalKind, ApprovalRequest, Decision
from agent_cli.engine.items import ToolItem
from agent_cli.policy.modes import reads_only
from agent_cli.tools.base import FileChange, ToolContext
from agent_cli.tools.diffs import unified_diff
from agent_cli.tools.files import apply_change, hunk_count, select_hunks
from agent_cli.tools.workspace import OutsideWorkspace, Workspace

if TYPE_CHECKING:
    from agent_cli.backends.loop import Checkpoint

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602  # a path outside the workspace: the request itself is wrong
REFUSED = -32603  # refused by the mode or the person, or it failed here
PARTIAL = (
    "the person accepted only part of this edit, or changed it, which cannot be done to an "
    "edit you make yourself; make just the change they want"
)

P = ParamSpec("P")
R = TypeVar("R")


def _answers(handler: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """An unexpected failure becomes a JSON-RPC error for the agent, logged at debug level
    (the SDK would log it on the root logger, which may reach the screen)."""

    @functools.wraps(handler)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await handler(*args, **kwargs)
        except RequestError:
            raise
        except Exception as e:
            log.debug("%s failed", handler.__name__, exc_info=True)
            raise RequestError(REFUSED, f"The client failed: {e}") from e

    return wrapper


class AgentClient:
    """What the agent may ask of us, for one agent process."""

    def __init__(
        self,
        workspace: Workspace,
        commands: list[tuple[str, str]],
        checkpoint: Checkpoint | None = None,
    ) -> None:
        self.workspace = workspace
        self.commands = commands  # the agent's own, kept for /help (filled in place)
        self.record = checkpoint
        self.turn: Turn | None = None  # the prompt turn updates belong to, while one runs
        self.session_id = ""
        self._notices: set[str] = set()

    # ------------------------------------------------------------ updates

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        turn = self.turn
        tag = update.session_update
        if tag == "available_commands_update":
            self.commands[:] = [(c.name, c.description) for c in update.available_commands]
        elif turn is None or session_id != self.session_id:
            return  # replayed by session/load, or late after a stop: nothing to add
        else:
            turn.on_update(update)

    # -------------------------------------------------------- permissions

    @_answers
    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        turn = self.turn
        if turn is None or turn.cancelled:
            return _cancelled()
        item = turn.tool(tool_call)  # Gemini sends no tool_call first: its card starts here
        run = turn.run
        mode = run.mode
        if mode == "full":
            decision = Decision("yes")
        elif reads_only(mode):
            decision = Decision("no", f"the conversation is in {mode} mode, which allows no change")
        else:
            decision = await self._ask(turn, item)
            if turn.cancelled:
                return _cancelled()
        if decision.allowed and _partial(decision, item.diff):
            decision = Decision("no", PARTIAL)
        if not decision.allowed:
            reason = f": {decision.reason.rstrip('.')}." if decision.reason else "."
            _deny(turn, item, f"Declined{reason} Nothing was done.")
            return _selected(options, ("reject_once", "reject_always"))
        turn.grant(turn.paths_of(tool_call, item))
        if item.state == "waiting":
            item.state = "running"
        run.update(item)
        if item.tool in CHANGE_KINDS or item.diff:
            await self.checkpoint(turn, item.title)
        preferred = ("allow_always", "allow_once") if decision.answer == "always" else ()
        return _selected(options, (*preferred, "allow_once", "allow_always"))

    async def _ask(self, turn: Turn, item: ToolItem) -> Decision:
        """Our approval card for a call, with the agent's diff, or one we compute."""
        raw = arguments(item.args)
        if not item.diff:
            proposed = await asyncio.to_thread(propose, raw, self.workspace)
            if proposed is not None:
                item.diff, item.file = proposed.diff, item.file or proposed.relative
        kind: ApprovalKind
        if item.diff or item.tool in ("edit", "delete", "move"):
            kind, command = "edit", ""
        elif item.tool == "execute":
            kind, command = "command", command_line(raw, item.title)
        else:
            kind, command = "tool", ""
        request = ApprovalRequest(
            item, kind, command=command, cwd=str(self.workspace.root), diff=item.diff
        )
        return await turn.run.ask(request)

    # -------------------------------------------------------------- files

    @_answers
    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        real = self._resolve(path, write=False)
        try:
            text = await asyncio.to_thread(_read_lines, self.workspace, real, line, limit)
        except FileNotFoundError:
            text = ""  # as editors answer: Gemini CLI fails on an error for a new file
        except (OSError, UnicodeDecodeError, OutsideWorkspace) as e:
            raise RequestError(REFUSED, f"{path} could not be read: {_reason(e)}.") from e
        return ReadTextFileResponse(content=text)

    @_answers
    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        real = self._resolve(path, write=True)
        relative = self.workspace.relative(real)
        turn = self.turn
        if turn is None or turn.cancelled:
            raise RequestError(REFUSED, f"{relative} was not written: no prompt is running.")
        run = turn.run
        if reads_only(run.mode):
            raise RequestError(
                REFUSED,
                f"{relative} was not written: the conversation is in {run.mode} mode, "
                "where no file may be changed.",
            )
        change = await asyncio.to_thread(_plan_write, self.workspace, real, relative, content)
        item, new = turn.item_for_write(relative)
        decision = None
        if run.mode != "full" and real not in turn.granted:
            decision, change = await self._approve_write(turn, item, change)
        await self.checkpoint(turn, item.title)
        text = _accepted(change, decision)
        result = await apply_change(ToolContext(self.workspace), change, text)
        if result.is_error:
            raise RequestError(REFUSED, result.text)
        item.diff, item.file = result.diff or change.diff, relative
        turn.written.add(relative)
        if new:
            item.state, item.result = "done", result.text
        if text != change.after:
            item.result = f"{result.text}\nThe person accepted a version of their own instead."
        run.update(item, save=True)
        return WriteTextFileResponse()

    async def _approve_write(
        self, turn: Turn, item: ToolItem, change: FileChange
    ) -> tuple[Decision, FileChange]:
        """Our card for a write no permission covered, until the person answers for the
        diff as it stands (a file changed meanwhile is never overwritten blind)."""
        while True:
            request = ApprovalRequest(
                item,
                "edit",
                cwd=str(self.workspace.root),
                diff=change.diff,
                proposed=change.after,
            )
            decision = await turn.run.ask(request)
            if turn.cancelled or not decision.allowed:
                reason = f" They said: {decision.reason}" if decision.reason else ""
                _deny(turn, item, f"The person declined this write; nothing was written.{reason}")
                raise RequestError(REFUSED, item.result)
            item.state = "running"
            if decision.answer == "always":  # this file, for the rest of the turn
                turn.granted.add(change.path)
            fresh = await asyncio.to_thread(
                _plan_write, self.workspace, change.path, change.relative, change.after
            )
            if fresh.diff == change.diff:
                return decision, fresh
            turn.run.notice(
                f"{change.relative} changed while the card waited; here is the new diff."
            )
            change = fresh

    async def checkpoint(self, turn: Turn, label: str) -> None:
        """Record the workspace before the turn's first change, so undo can restore it."""
        if turn.checkpointed or self.record is None:
            return
        turn.checkpointed = True
        for text in await self.record(turn.run.conversation.id, label):
            if text not in self._notices:
                self._notices.add(text)
                turn.run.notice(text, "warn")

    def _resolve(self, path: str, write: bool) -> Path:
        try:
            return self.workspace.resolve(path, write=write)
        except OutsideWorkspace as e:
            raise RequestError(INVALID_PARAMS, str(e), {"path": path}) from e


def _read_lines(workspace: Workspace, path: Path, line: int | None, limit: int | None) -> str:
    """Lines `line` (1-based) to `line + limit - 1` of a text file; all of it by default."""
    text = read_text(workspace, path)  # refuses a big or irregular file by its descriptor
    if line is None and limit is None:
        return text
    start = max((line or 1) - 1, 0)
    lines = text.splitlines(keepends=True)
    return "".join(lines[start : start + limit if limit is not None else None])


def _plan_write(workspace: Workspace, real: Path, relative: str, content: str) -> FileChange:
    try:
        before = read_text(workspace, real) if os.path.lexists(real) else None
    except UnicodeDecodeError as e:
        raise RequestError(REFUSED, f"{relative} is not a text file; it was not written.") from e
    except (OSError, OutsideWorkspace) as e:
        raise RequestError(REFUSED, f"{relative} could not be read: {_reason(e)}.") from e
    return FileChange(real, relative, before, content, unified_diff(relative, before, content))


def _accepted(change: FileChange, decision: Decision | None) -> str:
    """The text to write: the agent's, only the accepted hunks, or the person's own version."""
    if decision is None:
        return change.after
    if decision.edited is not None:
        return decision.edited
    if decision.hunks is not None:
        return select_hunks(change, sorted(set(decision.hunks)))
    return change.after


def _partial(decision: Decision, diff: str) -> bool:
    """Whether the person took only some hunks of an edit, or changed it."""
    if decision.edited is not None:
        return True
    return decision.hunks is not None and len(set(decision.hunks)) < hunk_count(diff)


def _reason(error: BaseException) -> str:
    return getattr(error, "strerror", None) or str(error)


def _deny(turn: Turn, item: ToolItem, text: str) -> None:
    item.state, item.is_error, item.result = "denied", True, text
    turn.run.update(item, save=True)


def _selected(
    options: Sequence[PermissionOption], kinds: Sequence[str]
) -> RequestPermissionResponse:
    """The first option of the first kind offered; "cancelled" when none is."""
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                outcome = AllowedOutcome(outcome="selected", option_id=option.option_id)
                return RequestPermissionResponse(outcome=outcome)
    return _cancelled()


def _cancelled() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
