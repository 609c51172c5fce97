"""A conversation and its items, with their JSON round trip (SPEC §3).

Items are small mutable records: the Session owns them and lends the
conversation to a backend for a run, which appends and grows them (a streamed
answer grows delta by delta). JSON is produced and parsed here, only here.

A sub-agent's items (its prompt, answers, calls, notices) are kept in the same
list, each with `parent` set to the id of the `task` ToolItem that started it,
so a front end finds them with `item.parent == task_item.id` (a grandchild's
point to its own `task` item). Each loop sends its model only the items of its
own level: the conversation's own loop those with no `parent`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from agent_cli.media import Attachment, Image
from agent_cli.providers.base import Usage
from agent_cli.tools.plan import STATUSES, Plan, PlanStep

if TYPE_CHECKING:
    from agent_cli.lsp.diagnostics import Diagnostic

ToolState = Literal["composing", "running", "waiting", "done", "denied", "error"]
NoticeLevel = Literal["info", "warn", "error"]
RunState = Literal["idle", "running"]

TITLE_LENGTH = 80


def new_id() -> str:
    return os.urandom(6).hex()  # not `secrets`: ids need no more, and it imports slowly


def new_conversation_id() -> str:
    """Sortable by creation time: a UTC timestamp, then randomness."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + os.urandom(3).hex()


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # as the model wrote it; may not be valid JSON


@dataclass
class UserItem:
    kind: ClassVar[str] = "user"
    text: str
    # What the person attached: images (stored beside the conversation, see store.py)
    # and their context for this message (`@file`, `@folder`, a command's output).
    images: tuple[Image, ...] = ()
    attachments: tuple[Attachment, ...] = ()
    id: str = field(default_factory=new_id)
    parent: str = ""  # a sub-agent's item: the id of the `task` ToolItem it works for
    turn: str = ""  # the correlation id of the turn it started (its debug-log lines carry it)


@dataclass
class AssistantItem:
    kind: ClassVar[str] = "assistant"
    text: str = ""
    reasoning: str = ""
    streaming: bool = True
    tool_calls: list[ToolCall] = field(default_factory=list)
    id: str = field(default_factory=new_id)
    parent: str = ""  # see UserItem.parent


@dataclass
class ToolItem:
    kind: ClassVar[str] = "tool"
    tool: str
    call_id: str
    title: str = ""
    args: str = ""  # the arguments text as written
    state: ToolState = "composing"
    bytes: int = 0
    result: str = ""
    is_error: bool = False
    diff: str = ""
    file: str = ""
    shortened: bool = False
    mcp: str = ""
    rule: str = ""  # the rule (and its scope) that allowed this call, if one did
    read_only_hint: bool | None = None  # an MCP tool's own claim: shown, never trusted
    idempotency_key: str = ""  # an MCP call's `_meta` key (tools/mcp.py); "" for none
    # While running: what it last said of its progress (an MCP server's line, a command's
    # last lines of output, a sub-agent's step and count of calls).
    progress: str = ""
    # What language servers and check commands said of the files the call changed.
    diagnostics: tuple[Diagnostic, ...] = ()  # a tuple: an item's fields change by assignment
    images: tuple[Image, ...] = ()  # what the result showed besides text (read_file, MCP)
    exit_code: int | None = None  # a command's (ToolResult.exit_code); see `command_exit`
    id: str = field(default_factory=new_id)

    def command_exit(self) -> int | None:
        """A command's exit code: as recorded, else (an item stored before it was) as its
        result's text ends with it (tools/shell.exit_code: never a line its output printed
        before timing out)."""
        if self.exit_code is not None:
            return self.exit_code
        from agent_cli.tools.shell import exit_code  # an old item's, rarely

        return exit_code(self.result)

    parent: str = ""  # see UserItem.parent

    @property
    def mcp_label(self) -> str:
        """For a card: the MCP server and its claim about the tool ("" for our own tools)."""
        if not self.mcp:
            return ""
        hint = self.read_only_hint
        said = "no readOnlyHint" if hint is None else f"readOnlyHint: {str(hint).lower()}"
        return f"MCP: {self.mcp} · {said}"


@dataclass
class NoticeItem:
    kind: ClassVar[str] = "notice"
    text: str
    level: NoticeLevel = "info"
    id: str = field(default_factory=new_id)
    parent: str = ""  # see UserItem.parent
    # The model reads it too, with the next message (what /undo reverted); else only shown.
    for_model: bool = False


@dataclass
class SummaryItem:
    """What `/compact` made of the items before it: the model reads this instead of them.

    The items it replaces stay in the conversation (the person can read and
    search them); they are only no longer sent.
    """

    kind: ClassVar[str] = "summary"
    text: str
    replaced: int = 0  # how many items before it the summary stands for
    id: str = field(default_factory=new_id)
    parent: str = ""  # see UserItem.parent


Item = UserItem | AssistantItem | ToolItem | NoticeItem | SummaryItem

_KINDS: dict[str, type[Item]] = {
    cls.kind: cls for cls in (UserItem, AssistantItem, ToolItem, NoticeItem, SummaryItem)
}


# How a stored image's bytes are found again: its JSON (`Image.ref_json`) → the Image.
ImageLoader = Callable[[dict[str, Any]], Image]


def item_to_json(item: Item) -> dict[str, Any]:
    # A shallow copy: asdict's deep copy is slow, and this runs on every item update.
    data = {"kind": item.kind, **vars(item)}
    if isinstance(item, AssistantItem):
        data["tool_calls"] = [vars(call).copy() for call in item.tool_calls]
    elif isinstance(item, ToolItem):
        data["diagnostics"] = diagnostics_json(item)
        _media_json(data, item.images, ())
    elif isinstance(item, UserItem):
        _media_json(data, item.images, item.attachments)
    return data


def _media_json(
    data: dict[str, Any], images: tuple[Image, ...], attachments: tuple[Attachment, ...]
) -> None:
    """Images by reference and attachments, or no key at all for none (the common case)."""
    if images:
        data["images"] = [image.ref_json() for image in images]
    else:
        data.pop("images", None)
    if attachments:
        data["attachments"] = [a.to_json() for a in attachments]
    else:
        data.pop("attachments", None)


def _unloaded(ref: dict[str, Any]) -> Image:
    """An image whose bytes no one has read (a conversation read without its store)."""
    return Image.from_ref(ref, b"")


def diagnostics_json(item: ToolItem) -> list[dict[str, Any]]:
    """A tool item's `diagnostics` field as JSON (for ACP's rawOutput too)."""
    return [vars(d).copy() for d in item.diagnostics]


def plan_to_json(plan: Plan) -> dict[str, Any]:
    steps = [{"step": step.step, "status": step.status} for step in plan.steps]
    return {"steps": steps, "explanation": plan.explanation}


def plan_from_json(data: Any) -> Plan | None:
    """A stored plan; None for none, or for one this version cannot read."""
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        return None
    steps = tuple(
        PlanStep(str(s.get("step", "")), s["status"])
        for s in data["steps"]
        if isinstance(s, dict) and s.get("status") in STATUSES
    )
    return Plan(steps, str(data.get("explanation", ""))) if steps else None


_FIELD_NAMES: dict[type, frozenset[str]] = {}


def _field_names(cls: type) -> frozenset[str]:
    """A dataclass's fields by name, worked out once (per item: ~10 ms of 5,000 items' load)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = frozenset(f.name for f in fields(cls))
    return names


def item_from_json(data: dict[str, Any], images: ImageLoader = _unloaded) -> Item:
    cls = _KINDS[data["kind"]]
    known = _field_names(cls)
    values = {k: v for k, v in data.items() if k in known}
    if cls is AssistantItem:
        values["tool_calls"] = [ToolCall(**c) for c in values.get("tool_calls", [])]
    elif cls is ToolItem:
        values["diagnostics"] = tuple(_diagnostic(d) for d in values.get("diagnostics", ()))
    if cls is UserItem:
        values["attachments"] = tuple(map(Attachment.from_json, values.get("attachments", ())))
    if cls is UserItem or cls is ToolItem:
        values["images"] = tuple(map(images, values.get("images", ())))
    return cls(**values)


@dataclass
class Rewound:
    """Items a rewind took out of the conversation (`/rewind`): kept, readable, never sent.

    They stood at position `at` (the first of them is the user message rewound to),
    and were taken out at `time`.
    """

    at: int
    items: list[Item]
    time: float = field(default_factory=time.time)


def rewound_to_json(rewound: Rewound) -> dict[str, Any]:
    items = [item_to_json(item) for item in rewound.items]
    return {"at": rewound.at, "time": rewound.time, "items": items}


def rewound_from_json(data: dict[str, Any], images: ImageLoader = _unloaded) -> Rewound:
    items = [item_from_json(item, images) for item in data.get("items", [])]
    return Rewound(int(data["at"]), items, float(data.get("time", 0.0)))


def _diagnostic(data: dict[str, Any]) -> Diagnostic:
    from agent_cli.lsp.diagnostics import Diagnostic  # only when there are some

    known = _field_names(Diagnostic)
    return Diagnostic(**{k: v for k, v in data.items() if k in known})


@dataclass
class Conversation:
    workspace: str
    id: str = field(default_factory=new_conversation_id)
    title: str = ""
    mode: str = "ask"
    model: str = ""  # the route: "provider/model"
    agent: str = "builtin"
    agent_session: str = ""  # an external agent's session id, to resume it
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    usage: Usage = field(default_factory=Usage)
    state: RunState = "idle"
    pid: int = 0  # the process running it, while `state` is "running"
    items: list[Item] = field(default_factory=list)
    plan: Plan | None = None  # the agent's plan (update_plan, or an external agent's)
    rewound: list[Rewound] = field(default_factory=list)  # what rewinds took out, oldest first

    def set_title_from(self, prompt: str) -> None:
        if not self.title:
            line = " ".join(prompt.split())
            self.title = line[:TITLE_LENGTH] + ("…" if len(line) > TITLE_LENGTH else "")

    def find(self, item_id: str) -> Item | None:
        for item in reversed(self.items):
            if item.id == item_id:
                return item
        return None

    def to_json(self) -> dict[str, Any]:
        data = {**self.header_json(), "items": [item_to_json(i) for i in self.items]}
        if self.rewound:
            data["rewound"] = [rewound_to_json(r) for r in self.rewound]
        return data

    def header_json(self) -> dict[str, Any]:
        """Everything but the items (the store serialises those one by one)."""
        return {
            "version": 1,
            "id": self.id,
            "title": self.title,
            "workspace": self.workspace,
            "mode": self.mode,
            "model": self.model,
            "agent": self.agent,
            "agent_session": self.agent_session,
            "created": self.created,
            "updated": self.updated,
            "usage": self.usage._asdict(),
            "state": self.state,
            "pid": self.pid,
            "plan": plan_to_json(self.plan) if self.plan is not None else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], images: ImageLoader = _unloaded) -> Conversation:
        """`images` reads a stored image's bytes (the store's files); without it, none are."""
        return cls(
            workspace=data["workspace"],
            id=data["id"],
            title=data.get("title", ""),
            mode=data.get("mode", "ask"),
            model=data.get("model", ""),
            agent=data.get("agent", "builtin"),
            agent_session=data.get("agent_session", ""),
            created=data.get("created", 0.0),
            updated=data.get("updated", 0.0),
            usage=Usage(**data.get("usage", {})),
            state=data.get("state", "idle"),
            pid=data.get("pid", 0),
            items=[item_from_json(i, images) for i in data.get("items", [])],
            plan=plan_from_json(data.get("plan")),
            rewound=[rewound_from_json(r, images) for r in data.get("rewound", [])],
        )

    def mark_running(self) -> None:
        self.state, self.pid = "running", os.getpid()

    def mark_idle(self) -> None:
        self.state, self.pid = "idle", 0
