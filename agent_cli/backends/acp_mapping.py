"""An external agent's prompt turn as our items: what every front end shows (SPEC §11).

`Turn` holds the items of one `session/prompt`: message and thought chunks
grow a streamed assistant item (a new one after each tool call), tool calls
and their updates are tool items (`tool` = the ACP kind), diffs sent as
content become unified diffs. It reads the SDK's objects by their field names
and `sessionUpdate`/`type` tags only, so this module never imports the SDK.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from agent_cli.engine.backend import Run
from agent_cli.engine.items import AssistantItem, ToolItem, ToolState
from agent_cli.tools.base import STORED_RESULT_CAP
from agent_cli.tools.diffs import unified_diff
from agent_cli.tools.files import READ_FILE_MAX_BYTES
from agent_cli.tools.plan import STATUSES, Plan, PlanStatus, PlanStep
from agent_cli.tools.workspace import OutsideWorkspace, Workspace

STATES: dict[str, ToolState] = {
    "pending": "running",
    "in_progress": "running",
    "completed": "done",
    "failed": "error",
}
CHANGE_KINDS = frozenset({"edit", "delete", "move", "execute"})
# Where agents put the file an edit is about to change, and its new text (rawInput).
PATH_KEYS = ("path", "file_path", "filePath", "absolute_path", "file")
CONTENT_KEYS = ("content", "new_content", "newContent", "file_text", "text")
OLD_KEYS = ("old_string", "oldString", "old_text", "oldText")
NEW_KEYS = ("new_string", "newString", "new_text", "newText")
OUTPUT_KEYS = ("output", "formatted_output", "aggregated_output", "stdout", "result")


class Proposed(NamedTuple):
    """An edit an agent is about to make, as we compute it from its arguments."""

    path: Path
    relative: str
    before: str | None
    after: str
    diff: str


class Turn:
    """The items of one prompt turn, grown from the agent's session updates."""

    def __init__(self, run: Run, workspace: Workspace) -> None:
        self.run = run
        self.workspace = workspace
        self.assistant: AssistantItem | None = None
        self.tools: dict[str, ToolItem] = {}
        self.granted: set[Path] = set()  # files a permission granted in this turn may write
        self.written: set[str] = set()  # workspace-relative paths it wrote through us
        self.cancelled = False
        self.checkpointed = False
        self._writes = 0
        # Chunks are joined when the text is needed, not appended per chunk (quadratic).
        self._text: list[str] = []
        self._reasoning: list[str] = []

    # ------------------------------------------------------------ updates

    def on_update(self, update: Any) -> None:
        """One `session/update` of this turn (commands are the caller's)."""
        tag = update.session_update
        if tag == "agent_message_chunk":  # the hot path: once per chunk
            text = block_text(update.content)
            if text:
                item = self.assistant or self._start()
                self._text.append(text)
                self.run.delta(item, text)
        elif tag == "agent_thought_chunk":
            text = block_text(update.content)
            if text:
                item = self.assistant or self._start()
                self._reasoning.append(text)
                self.run.delta(item, "", text)
        elif tag in ("tool_call", "tool_call_update"):
            self.tool(update)
        elif tag == "plan":
            plan = acp_plan(update.entries)
            if plan is not None:
                self.run.set_plan(plan)  # the same plan sent again shows nothing new

    def tool(self, call: Any) -> ToolItem:
        """The item for a tool call (a `tool_call`, its update, or a permission's own call)."""
        item = self.tools.get(call.tool_call_id)
        if item is None:
            self.close_assistant()
            item = ToolItem(
                tool=call.kind or "other",
                call_id=call.tool_call_id,
                title=call.title or call.kind or "tool",
                state="running",
            )
            self.tools[item.call_id] = item
            self._apply(item, call)
            self.run.add(item)
        else:
            self._apply(item, call)
            self.run.update(item, save=item.state in ("done", "error"))
        return item

    def item_for_write(self, relative: str) -> tuple[ToolItem, bool]:
        """The running tool item a write belongs to, else a new one; (item, new)."""
        for item in reversed(self.tools.values()):
            if item.file == relative and item.state in ("running", "waiting"):
                return item, False
        self._writes += 1
        self.close_assistant()
        item = ToolItem("edit", f"fs-write-{self._writes}", f"Write {relative}", state="running")
        item.file = relative
        self.tools[item.call_id] = item
        self.run.add(item)
        return item, True

    def paths_of(self, call: Any, item: ToolItem) -> list[str]:
        """Every file a call names: in its diffs, locations and arguments, now or before."""
        paths = [c.path for c in call.content or () if getattr(c, "type", "") == "diff"]
        paths += [location.path for location in call.locations or ()]
        raw = call.raw_input if isinstance(call.raw_input, Mapping) else arguments(item.args)
        paths += [raw[key] for key in PATH_KEYS if isinstance(raw.get(key), str)]
        paths += [line[6:] for line in item.diff.splitlines() if line.startswith("+++ b/")]
        return [*paths, item.file] if item.file else paths

    def grant(self, paths: Iterable[str]) -> None:
        for path in paths:
            try:
                self.granted.add(self.workspace.resolve(path, write=True))
            except (OutsideWorkspace, OSError):
                continue

    # ------------------------------------------------------------ the end

    def sync(self) -> None:
        """Bring the assistant item's text up to date with its chunks."""
        if self.assistant is not None:
            self.assistant.text = "".join(self._text)
            self.assistant.reasoning = "".join(self._reasoning)

    def close_assistant(self) -> None:
        """End the streamed answer: what the agent says next is a new item."""
        if self.assistant is not None:
            self.sync()
            self.assistant.streaming = False
            self.run.update(self.assistant, save=True)
            self.assistant = None
            self._text, self._reasoning = [], []

    def finish(self) -> None:
        """The agent ended its turn: calls it never reported finished count as done."""
        self.close_assistant()
        for item in self.tools.values():
            if item.state == "running":
                item.state = "done"
                self.run.update(item, save=True)

    # ------------------------------------------------------------ internals

    def _start(self) -> AssistantItem:
        self.assistant = AssistantItem()
        self.run.add(self.assistant)
        return self.assistant

    def _apply(self, item: ToolItem, call: Any) -> None:
        """Copy what a call (or an update of it) carries onto its item."""
        if call.kind:
            item.tool = call.kind
        if call.title:
            item.title = call.title
        state = STATES.get(call.status or "")
        # A card still waiting, or a call we declined, keeps its state until it ends.
        if state is not None and not (
            (item.state == "waiting" and state == "running")
            or (item.state == "denied" and state == "error")
        ):
            item.state = state
            item.is_error = state == "error"
        if call.raw_input is not None:
            item.args = _json(call.raw_input)
        if call.locations:
            item.file = self._relative(call.locations[0].path)
        texts: list[str] = []
        diffs: list[str] = []
        for content in call.content or ():
            kind = getattr(content, "type", "")
            if kind == "content":
                texts.append(block_text(content.content))
            elif kind == "diff":
                relative = self._relative(content.path)
                diffs.append(unified_diff(relative, content.old_text, content.new_text))
                item.file = item.file or relative
        if diffs:
            item.diff = "".join(diffs)
        text = "\n".join(t for t in texts if t) or _output_text(call.raw_output)
        if text:
            item.result = _capped(text)
        if call.title and item.tool != "execute":  # a command's title is the command itself
            item.title = shown_title(call.title, self.workspace, self.paths_of(call, item))

    def _relative(self, path: str) -> str:
        """A workspace-relative path where it is inside, else the path as the agent gave it."""
        try:
            return self.workspace.relative(self.workspace.resolve(path))
        except (OutsideWorkspace, OSError):
            return path


# A character that continues a path: a match must not start or end inside a longer path
# (a dot ends one only when no name character follows it, as at the end of a sentence).
_BEFORE_PATH = r"(?<![\w.~/-])"
_AFTER_PATH = r"(?![\w~/-]|\.\w)"


def shown_title(title: str, workspace: Workspace, named: Iterable[str]) -> str:
    """An agent's title for a call with its paths as we show them: workspace-relative
    inside the workspace, absolute outside it.

    Agents title a call with a path as they see it: Claude Code with the absolute path,
    OpenCode relative to its project's worktree, which outside a git repository is
    "/" — so `/tmp/ws/a.txt` arrives as `tmp/ws/a.txt`, the absolute path with its
    first slash cut. The absolute paths the call names (its locations, diffs and
    arguments) are recognised in either spelling; any other path under the workspace
    root loses the root.
    """
    shown = {
        path.lstrip("/"): _shown_path(path, workspace)
        for path in named
        if path.startswith("/") and path.strip("/")
    }
    if shown:  # the longest first: one path may start another
        cuts = "|".join(re.escape(cut) for cut in sorted(shown, key=len, reverse=True))
        named_path = f"{_BEFORE_PATH}/*({cuts}){_AFTER_PATH}"
        title = re.sub(named_path, lambda m: shown[m.group(1)], title)
    root = str(workspace.root).lstrip("/")
    if not root:
        return title
    under = f"{_BEFORE_PATH}/?{re.escape(root)}(?:(/)(?=[^\\s/])|/?{_AFTER_PATH})"
    return re.sub(under, lambda m: "" if m.group(1) else ".", title)


def _shown_path(path: str, workspace: Workspace) -> str:
    try:
        return workspace.relative(workspace.resolve(path))
    except (OutsideWorkspace, OSError):
        return os.path.normpath(path)


def block_text(block: Any) -> str:
    """The text of a content block (a link as Markdown; images and audio are left out)."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return block.text
    if kind == "resource_link":
        return f"[{block.title or block.name}]({block.uri})"
    if kind == "resource":
        return getattr(block.resource, "text", "") or ""
    return ""


def acp_plan(entries: Sequence[Any]) -> Plan | None:
    """An agent's ACP plan as ours (ACP's statuses are ours); None when it has no entries.

    An entry's priority is left out: we show the steps in the agent's order."""
    steps = tuple(
        PlanStep(" ".join(str(entry.content).split()), _plan_status(entry.status))
        for entry in entries
        if str(entry.content).strip()
    )
    return Plan(steps) if steps else None


def _plan_status(status: Any) -> PlanStatus:
    return status if status in STATUSES else "pending"


def command_line(raw_input: Any, fallback: str) -> str:
    """The command an `execute` call runs, as one line."""
    command = raw_input.get("command") if isinstance(raw_input, Mapping) else None
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        import shlex

        return shlex.join(command)
    return command if isinstance(command, str) else fallback


def propose(raw_input: Any, workspace: Workspace) -> Proposed | None:
    """The diff of an edit an agent names by path and new text (or old → new strings).

    Blocking (reads the file): call it in a thread. None when the arguments do
    not say enough, or the path is not one we could write.
    """
    if not isinstance(raw_input, Mapping):
        return None
    path = _first(raw_input, PATH_KEYS)
    if path is None:
        return None
    try:
        real = workspace.resolve(path, write=True)
        before = read_text(workspace, real) if os.path.lexists(real) else None
    except (OutsideWorkspace, OSError, UnicodeDecodeError):
        return None
    content = _first(raw_input, CONTENT_KEYS)
    old, new = _first(raw_input, OLD_KEYS), _first(raw_input, NEW_KEYS)
    if content is not None:
        after = content
    elif old is not None and new is not None and before is not None and old in before:
        after = before.replace(old, new, -1 if raw_input.get("replace_all") else 1)
    else:
        return None
    relative = workspace.relative(real)
    return Proposed(real, relative, before, after, unified_diff(relative, before, after))


def read_text(workspace: Workspace, path: Path) -> str:
    """The text of `path` (resolved in `workspace`), opened with `Workspace.open_file`: no
    folder on its path swapped for a link since it was resolved is followed, and a FIFO
    does not block. What was opened must be a regular file within READ_FILE_MAX_BYTES
    (else OSError, its strerror saying why)."""
    fd = workspace.open_file(path)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "it is not a regular file")
        if info.st_size > READ_FILE_MAX_BYTES:
            why = f"it is too big ({info.st_size} bytes; the limit is {READ_FILE_MAX_BYTES})"
            raise OSError(errno.EFBIG, why)
    except BaseException:
        os.close(fd)
        raise
    with open(fd, encoding="utf-8", newline="") as handle:
        return handle.read(READ_FILE_MAX_BYTES + 1)


def _first(values: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    return next((values[key] for key in keys if isinstance(values.get(key), str)), None)


def arguments(args: str) -> Mapping[str, Any]:
    """A call's arguments as we stored them (JSON), or nothing."""
    try:
        value = json.loads(args) if args else None
    except ValueError:
        return {}
    return value if isinstance(value, Mapping) else {}


def _output_text(raw_output: Any) -> str:
    """What a call's rawOutput says, when it sent no text content."""
    if raw_output is None:
        return ""
    if isinstance(raw_output, str):
        return raw_output
    if isinstance(raw_output, Mapping):
        found = _first(raw_output, OUTPUT_KEYS)
        if found is not None:
            return found
    return _json(raw_output)


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _capped(text: str) -> str:
    if len(text) <= STORED_RESULT_CAP:
        return text
    return text[:STORED_RESULT_CAP] + "\n[... the rest was not kept ...]"
