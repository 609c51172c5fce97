"""Our items as ACP session updates: the mapping `agent acp` sends, in one place.

Pure functions of an item and the workspace, so the live stream and the
replay of a loaded conversation show a tool call the same way. A tool item
becomes a `tool_call` when it appears and `tool_call_update`s carrying only
what changed since (ACP replaces a call's content as a whole, so content is
sent whole whenever it changes).

A tool's diff is sent as ACP diff content (path, oldText, newText). We keep
an edit as a unified diff, so the texts are the hunks' two sides — the lines
around and in each change, not whole files — which is what a client needs to
show the change (Claude Code's ACP adapter sends edits the same way).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from acp import (
    image_block,
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message,
    update_user_message_text,
)
from acp.schema import (
    AgentPlanUpdate,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from agent_cli.engine.items import (
    AssistantItem,
    Item,
    NoticeItem,
    SummaryItem,
    ToolItem,
    UserItem,
    diagnostics_json,
)
from agent_cli.tools.base import partial_arguments
from agent_cli.tools.diffs import NO_NEWLINE_MARKER
from agent_cli.tools.plan import Plan
from agent_cli.tools.workspace import OutsideWorkspace, Workspace

TOOL_KINDS = {
    "read_file": "read",
    "get_info": "read",
    "use_skill": "read",
    "file_glob_search": "search",
    "grep_search": "search",
    "write_file": "edit",
    "edit_file": "edit",
    "exec_shell_command": "execute",
    "task": "think",  # a sub-agent at work
    "update_plan": "think",  # the plan itself goes as a `plan` update
}
"""ACP's kind per built-in tool; MCP tools and any other are "other"."""

STATUSES = {
    "composing": "pending",
    "waiting": "pending",
    "running": "in_progress",
    "done": "completed",
    "denied": "failed",
    "error": "failed",
}
FINISHED = frozenset({"done", "denied", "error"})
RAW_INPUT_LIMIT = 64 * 1024
"""Arguments longer than this (a whole file being written) are not echoed as rawInput."""
NOTICE_PREFIX = {"info": "", "warn": "Warning: ", "error": "Error: "}


class ToolView(NamedTuple):
    """What a client sees of a tool call; an update sends the fields that differ."""

    title: str
    kind: str
    status: str
    locations: tuple[tuple[str, int | None], ...]
    diff: str
    result: str  # shown once the call has finished
    raw_input: Any
    # What language servers and checks said after an edit, as rawOutput's `diagnostics`.
    raw_output: Any = None


def tool_view(item: ToolItem, workspace: Workspace) -> ToolView:
    composing = item.state == "composing"
    args = {} if composing else _arguments(item.args)
    return ToolView(
        title=item.title or item.tool,
        kind="other" if item.mcp else TOOL_KINDS.get(item.tool, "other"),
        status=STATUSES.get(item.state, "pending"),
        locations=() if composing else _locations(item, args, workspace),
        diff=item.diff if item.file else "",
        result=item.result if item.state in FINISHED else "",
        raw_input=args if args and len(item.args) <= RAW_INPUT_LIMIT else None,
        raw_output={"diagnostics": diagnostics_json(item)} if item.diagnostics else None,
    )


def tool_start(item: ToolItem, view: ToolView, root: Path) -> ToolCallStart:
    return start_tool_call(
        item.id,
        view.title,
        kind=view.kind,  # type: ignore[arg-type]
        status=view.status,  # type: ignore[arg-type]
        content=_content(item, view, root) or None,
        locations=_location_objects(view) or None,
        raw_input=view.raw_input,
        raw_output=view.raw_output,
    )


def tool_progress(
    item: ToolItem, before: ToolView, now: ToolView, root: Path
) -> ToolCallProgress | None:
    """The update from `before` to `now`; None when the client would see no change."""
    if now == before:
        return None
    content_changed = (now.diff, now.result) != (before.diff, before.result)
    return update_tool_call(
        item.id,
        title=now.title if now.title != before.title else None,
        status=now.status if now.status != before.status else None,  # type: ignore[arg-type]
        content=_content(item, now, root) if content_changed else None,
        locations=_location_objects(now) if now.locations != before.locations else None,
        raw_input=now.raw_input if now.raw_input != before.raw_input else None,
        raw_output=now.raw_output if now.raw_output != before.raw_output else None,
    )


def permission_call(
    item: ToolItem, view: ToolView, root: Path, command: str = "", cwd: str = "", outside: str = ""
) -> ToolCallUpdate:
    """The tool call a permission request is about: the diff, or the command and folder
    (and, for one the sandbox stopped, what it stopped: a yes runs it outside)."""
    content = _content(item, view, root)
    if command:
        content.append(tool_content(text_block(f"```sh\n{command}\n```\nin {cwd or root}")))
    title = view.title
    if outside:
        title = f"Run outside the sandbox (it stopped {outside}): {view.title}"
    return ToolCallUpdate(
        tool_call_id=item.id,
        title=title,
        kind=view.kind,  # type: ignore[arg-type]
        status=view.status,  # type: ignore[arg-type]
        content=content or None,
        locations=_location_objects(view) or None,
        raw_input=view.raw_input,
    )


def plan_update(plan: Plan) -> AgentPlanUpdate:
    """The plan as ACP's `plan` update: every entry, in order (ACP replaces the plan whole).
    The step in progress is the one that matters now: "high"; the rest "medium"."""
    return update_plan(
        plan_entry(
            step.step,
            priority="high" if step.status == "in_progress" else "medium",
            status=step.status,
        )
        for step in plan.steps
    )


def notice_text(text: str, level: str) -> str:
    """A notice as a paragraph of its own in the agent's message: our voice, not the model's."""
    return f"\n\n> {NOTICE_PREFIX.get(level, '')}{text}\n\n"


def is_nested(item: Item) -> bool:
    """A sub-agent's item (the `task` tool's work), not the conversation's own."""
    return bool(getattr(item, "parent", ""))


def replay(item: Item, workspace: Workspace) -> list[Any]:
    """The updates that show a stored item again (session/load), in its final state.

    A sub-agent's prompt is its `task` call's input, so it is not repeated;
    its answers are thoughts, as they were live.
    """
    if isinstance(item, UserItem):
        if is_nested(item):
            return []
        images = [  # as the editor sent them (one whose file is gone: left out)
            update_user_message(image_block(image.base64(), image.media_type))
            for image in item.images
            if image.data
        ]
        return [update_user_message_text(item.text), *images]
    if isinstance(item, AssistantItem):
        updates: list[Any] = []
        if item.reasoning:
            updates.append(update_agent_thought_text(item.reasoning))
        if item.text and is_nested(item):
            updates.append(update_agent_thought_text(item.text))
        elif item.text:
            updates.append(update_agent_message_text(item.text))
        return updates
    if isinstance(item, ToolItem):
        return [tool_start(item, tool_view(item, workspace), workspace.root)]
    if isinstance(item, NoticeItem):
        return [update_agent_message_text(notice_text(item.text, item.level))]
    if isinstance(item, SummaryItem):
        return [update_agent_thought_text(f"Summary of the earlier conversation:\n\n{item.text}")]
    return []


def diff_sides(diff: str) -> tuple[str | None, str]:
    """The old and new sides of a unified diff's hunks; old is None for a new file."""
    old: list[str] = []
    new: list[str] = []
    created = diff.startswith("--- /dev/null")
    last: list[str] | None = None
    in_hunks = False
    for line in diff.split("\n"):
        if line.startswith("@@"):
            in_hunks = True
            continue
        if not in_hunks or not line:  # the file header; the end
            continue
        if line == NO_NEWLINE_MARKER:  # the line before has no newline on its side(s)
            for side in (old, new) if last is None else (last,):
                if side and side[-1].endswith("\n"):
                    side[-1] = side[-1][:-1]
            continue
        body = line[1:] + "\n"
        if line[0] == " ":
            old.append(body)
            new.append(body)
            last = None
        elif line[0] == "-":
            old.append(body)
            last = old
        elif line[0] == "+":
            new.append(body)
            last = new
    return (None if created else "".join(old)), "".join(new)


# ---------------------------------------------------------------- internals


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return partial_arguments(text)
    return value if isinstance(value, dict) else {}


def _locations(
    item: ToolItem, args: dict[str, Any], workspace: Workspace
) -> tuple[tuple[str, int | None], ...]:
    """The file a call reads or changes, as a real path inside the workspace (else none:
    a client may open a location to follow along, and must not be led outside)."""
    path = item.file or args.get("path")
    if not isinstance(path, str) or not path:
        return ()
    try:
        real = workspace.resolve(path)
    except (OutsideWorkspace, ValueError, OSError):
        return ()
    start = args.get("start_line")
    line = start - 1 if isinstance(start, int) and start >= 1 else None  # ACP lines are 0-based
    return ((str(real), line),)


def _location_objects(view: ToolView) -> list[ToolCallLocation]:
    return [ToolCallLocation(path=path, line=line) for path, line in view.locations]


def _content(item: ToolItem, view: ToolView, root: Path) -> list[Any]:
    content: list[Any] = []
    if view.diff:
        old, new = diff_sides(view.diff)
        content.append(tool_diff_content(str(root / item.file), new, old))
    if view.result:
        content.append(tool_content(text_block(view.result)))
    return content
