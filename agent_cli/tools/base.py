"""Tools: typed parameters, a declared side effect, and an async function.

A tool is written as an async function whose parameters carry type hints
(optionally `Annotated[T, "description"]`). The JSON schema the model sees and
the validation of the model's arguments are both derived from those hints, in
this one place, so a schema is never written twice. Tools never decide
approval: they declare a side effect and the policy decides.
"""

from __future__ import annotations

import inspect
import logging
import types
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    NamedTuple,
    Protocol,
    get_args,
    get_origin,
)

from agent_cli.media import Image
from agent_cli.providers.base import ToolSpec
from agent_cli.tools.environment import EnvironmentPolicy

if TYPE_CHECKING:
    from agent_cli.lsp.diagnostics import Diagnostic
    from agent_cli.sandbox.launch import Sandbox
    from agent_cli.tools.background import BackgroundShells
    from agent_cli.tools.feedback import Feedback

log = logging.getLogger(__name__)

# What the model reads of one result; the person sees all of it.
MODEL_RESULT_CAP = 12 * 1024
# What a stored tool item keeps of a result (the person's view).
STORED_RESULT_CAP = 1024 * 1024


class Effect(StrEnum):
    """What running a tool does to the world; the policy decides from this."""

    READ = "read"
    WRITE = "write"
    EXEC = "exec"
    EXTERNAL = "external"


class ToolResult(NamedTuple):
    """What a tool produced. `text` is the whole result; `diff`/`file` describe an edit;
    `images` are what it showed besides text (read_file of a PNG, an MCP image), which
    the loop keeps on the call's item and a provider sends to a model that takes them."""

    text: str
    is_error: bool = False
    diff: str = ""
    file: str = ""
    stopped: str = ""  # for a command: what the sandbox stopped ("" if nothing)
    # What language servers and checks said of the files it changed (tools/feedback.py).
    diagnostics: tuple[Diagnostic, ...] = ()
    images: tuple[Image, ...] = ()
    # A command's exit code, as the process gave it (None: it timed out, did not start, or
    # is no command): read from here, never parsed back out of `text`, which the command's
    # own output is part of.
    exit_code: int | None = None


class ArgumentError(ValueError):
    """The model's arguments do not fit the tool's parameters."""


class FileAccess(Protocol):
    """Reads and writes a file's text through someone else: an editor serving `agent acp`
    answers from its buffers, unsaved changes included, and sees what is written.

    Paths are real paths the workspace has already confined. A failure raises
    `ToolError` with one sentence saying what went wrong.
    """

    async def read_text(self, path: Path) -> str: ...

    async def write_text(self, path: Path, text: str) -> None: ...


@dataclass
class ToolContext:
    """What a tool may use while it runs. Filled by the loop for each call."""

    workspace: Any  # agent_cli.tools.workspace.Workspace
    env: Mapping[str, str] = field(default_factory=dict)  # empty: the process's environment
    # What of `env` a command gets (the [shell_environment] config); secrets never, by default.
    env_policy: EnvironmentPolicy = field(default_factory=EnvironmentPolicy)
    extra: dict[str, Any] = field(default_factory=dict)
    # When set, read_file/write_file/edit_file read and write file text through it.
    files: FileAccess | None = None
    # Where commands run (SPEC §14); None or an inactive one: unconfined.
    sandbox: Sandbox | None = None
    read_only: bool = False  # the call was allowed as read-only: nothing is writable
    unsandboxed: bool = False  # the person allowed this call to leave the sandbox
    # The session's background commands (exec_shell_command with background: true).
    shells: BackgroundShells | None = None
    # Language servers and checks, told of reads and changes (tools/feedback.py).
    feedback: Feedback | None = None


class FileChange(NamedTuple):
    """A change to one file, computed before it is made (for the approval card's diff)."""

    path: Path  # the resolved real path inside the workspace
    relative: str  # workspace-relative, POSIX
    before: str | None  # None: the file does not exist yet
    after: str
    diff: str  # unified diff of before → after


ToolFunction = Callable[..., Awaitable[ToolResult]]
TitleFunction = Callable[[Mapping[str, Any]], str]
PlanFunction = Callable[..., Awaitable[FileChange]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    effect: Effect
    function: ToolFunction
    parameters: dict[str, Any]
    title: TitleFunction
    # Set for tools of an MCP server: the server's name, shown on the card.
    mcp: str = ""
    # For file-changing tools: computes the change without making it, same parameters.
    plan: PlanFunction | None = None
    # Offered only while this says yes (the LSP tools: while a language server runs).
    available: Callable[[], bool] | None = None

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    def check(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validate the model's arguments against the parameters; returns them with defaults."""
        return _validate_object(self.parameters, arguments, "arguments")

    async def run(self, context: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        log.debug("tool %s called: %.2000r", self.name, arguments)  # the turn's id is on it
        result = await self.function(context, **self.check(arguments))
        how = "failed" if result.is_error else "done"
        log.debug("tool %s %s: %d characters", self.name, how, len(result.text))
        return result

    async def preview(self, context: ToolContext, arguments: Mapping[str, Any]) -> FileChange:
        assert self.plan is not None, f"{self.name} has no plan"
        return await self.plan(context, **self.check(arguments))


def tool(
    name: str,
    effect: Effect,
    title: TitleFunction | None = None,
    plan: PlanFunction | None = None,
) -> Callable[[ToolFunction], Tool]:
    """Make a `Tool` from `async def f(ctx: ToolContext, param: T, ...) -> ToolResult`.

    The function's docstring is the description the model reads; each
    parameter's type hint (and `Annotated` text) becomes its schema.
    """

    def wrap(function: ToolFunction) -> Tool:
        return Tool(
            name=name,
            description=inspect.cleandoc(function.__doc__ or ""),
            effect=effect,
            function=function,
            parameters=schema_of_function(function),
            title=title or (lambda _args: name),
            plan=plan,
        )

    return wrap


class ToolRegistry:
    """The tools a conversation may use, by name, in a stable order."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, t: Tool) -> None:
        if t.name in self._tools:
            raise ValueError(f"a tool named {t.name!r} is already registered")
        self._tools[t.name] = t

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __iter__(self) -> typing.Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def filtered(self, keep: Callable[[Tool], bool]) -> ToolRegistry:
        return ToolRegistry(t for t in self._tools.values() if keep(t))


# ---------------------------------------------------------------- schemas


def schema_of_function(function: Callable[..., Any]) -> dict[str, Any]:
    """The JSON schema of a tool function's parameters (all but the first, the context)."""
    hints = typing.get_type_hints(function, include_extras=True)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for index, (pname, param) in enumerate(inspect.signature(function).parameters.items()):
        if index == 0:
            continue  # the ToolContext
        properties[pname] = schema_of_type(hints[pname])
        if param.default is inspect.Parameter.empty:
            required.append(pname)
        elif param.default is not None:
            properties[pname]["default"] = param.default
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


_SCALARS: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def schema_of_type(hint: Any) -> dict[str, Any]:
    """JSON schema for a type hint: scalars, Literal, list, Optional, TypedDict, Annotated."""
    description = ""
    if get_origin(hint) is Annotated:
        hint, *meta = get_args(hint)
        description = " ".join(m for m in meta if isinstance(m, str))
    origin = get_origin(hint)
    schema: dict[str, Any]
    if origin in (typing.Union, types.UnionType):
        options = [a for a in get_args(hint) if a is not type(None)]
        if len(options) != 1:
            raise TypeError(f"only Optional unions are supported in tool parameters: {hint}")
        schema = schema_of_type(options[0])
    elif origin is Literal:
        values = list(get_args(hint))
        schema = {"type": _SCALARS[type(values[0])], "enum": values}
    elif origin is list:
        (item,) = get_args(hint)
        schema = {"type": "array", "items": schema_of_type(item)}
    elif typing.is_typeddict(hint):
        item_hints = typing.get_type_hints(hint, include_extras=True)
        schema = {
            "type": "object",
            "properties": {k: schema_of_type(v) for k, v in item_hints.items()},
            "required": sorted(hint.__required_keys__),
        }
    elif hint in _SCALARS:
        schema = {"type": _SCALARS[hint]}
    else:
        raise TypeError(f"unsupported tool parameter type: {hint!r}")
    if description:
        schema["description"] = description
    return schema


# ------------------------------------------------------------- validation


def _validate_object(schema: Mapping[str, Any], value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ArgumentError(f"{where} must be a JSON object")
    properties: Mapping[str, Any] = schema.get("properties", {})
    missing = [k for k in schema.get("required", ()) if value.get(k) is None]
    if missing:
        names = ", ".join(repr(m) for m in missing)
        raise ArgumentError(f"{where} lack the required parameter(s) {names}")
    checked: dict[str, Any] = {}
    for key, sub in properties.items():
        if key in value and value[key] is not None:
            checked[key] = _validate(sub, value[key], key)
    return checked


def _validate(schema: Mapping[str, Any], value: Any, where: str) -> Any:
    kind = schema.get("type")
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        raise ArgumentError(f"{where!r} must be one of {allowed}, not {value!r}")
    if kind == "object":
        return _validate_object(schema, value, repr(where))
    if kind == "array":
        if not isinstance(value, list):
            raise ArgumentError(f"{where!r} must be a JSON array")
        return [_validate(schema["items"], v, f"{where}[{i}]") for i, v in enumerate(value)]
    if kind == "integer":
        # Models often write numbers as strings ("10"); accept what is unambiguous.
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentError(f"{where!r} must be an integer, not {value!r}")
        return value
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ArgumentError(f"{where!r} must be a number, not {value!r}")
        return value
    if kind == "boolean":
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if not isinstance(value, bool):
            raise ArgumentError(f"{where!r} must be true or false, not {value!r}")
        return value
    if kind == "string" and not isinstance(value, str):
        raise ArgumentError(f"{where!r} must be a string, not {value!r}")
    return value


# ------------------------------------------------------- model-side views


def lent_call(ctx: ToolContext) -> tuple[Any, Any]:
    """The call's item and run, which the loop lends a tool as extra["call"] (tools cannot
    import the loop); (None, None) outside it."""
    lent = ctx.extra.get("call")
    return getattr(lent, "item", None), getattr(lent, "run", None)


def progress_shower(item: Any, run: Any) -> Callable[[str], None] | None:
    """How a running call says what it is doing: on its item's `progress`, published as an
    update of the item; None when no call was lent."""
    if item is None or run is None:
        return None

    def show(text: str) -> None:
        if item.state == "running":
            item.progress = text
            run.update(item)

    return show


def cap_for_model(text: str, limit: int = MODEL_RESULT_CAP) -> str:
    """Head and tail of `text` within `limit` UTF-8 bytes, with a line saying what was cut."""
    if len(text) * 4 <= limit:  # fits whatever its characters: no need to encode it
        return text
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    keep = max(limit - 200, 0)  # room for the line saying what was cut
    head_size, tail_size = keep * 2 // 3, keep // 3
    head = data[:head_size].decode("utf-8", "ignore")
    tail = data[len(data) - tail_size :].decode("utf-8", "ignore")
    cut = len(data) - len(head.encode()) - len(tail.encode())
    lines = text.count("\n") - head.count("\n") - tail.count("\n")
    note = f"\n[... {cut} bytes ({lines} lines) cut here; the person sees the whole result ...]\n"
    return head + note + tail


def display_path(path: str | Path) -> str:
    return str(path) if path else "."


_PARTIAL_STRING = None


def partial_arguments(text: str) -> dict[str, Any]:
    """The arguments of a call still being written, as far as they go.

    Complete JSON parses as is; otherwise the top-level string values written
    so far are picked out (an unfinished last one included), which is all a
    card's title needs ("Read src/ma…" while the path is still arriving).
    """
    import json
    import re

    global _PARTIAL_STRING
    try:
        value = json.loads(text)
        return value if isinstance(value, dict) else {}
    except ValueError:
        pass
    if _PARTIAL_STRING is None:
        _PARTIAL_STRING = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:\s*"((?:[^"\\]|\\.)*)')
    found: dict[str, Any] = {}
    for match in _PARTIAL_STRING.finditer(text):
        raw = match.group(2)
        try:
            found[match.group(1)] = json.loads(f'"{raw}"')
        except ValueError:
            found[match.group(1)] = raw.rstrip("\\")
    return found
