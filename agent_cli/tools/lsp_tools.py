"""lsp_definition, lsp_references, lsp_hover, lsp_symbols: questions to a language server.

Read-only, and offered only while a language server of the session runs (the
first read of one of its files starts it). Lines and columns count from 1, as
read_file numbers lines; a column is a character of the line (converted to
the UTF-16 offsets the protocol counts). A place outside the workspace (a
library's source) is named, never read.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from agent_cli.errors import ToolError
from agent_cli.tools.base import Effect, ToolContext, ToolResult, tool
from agent_cli.tools.workspace import OutsideWorkspace

if TYPE_CHECKING:
    from agent_cli.lsp.client import Connection, Location, Symbol
    from agent_cli.lsp.servers import LanguageServers

__all__ = ["LSP_TOOLS", "lsp_definition", "lsp_hover", "lsp_references", "lsp_symbols"]

LOCATIONS_SHOWN = 100
"""Places (references, symbols) in one result; the rest are counted."""
HOVER_CHARS = 4000
T = TypeVar("T")

Path_ = Annotated[str, "Path of the file, relative to the workspace."]
Line = Annotated[int, "Line number (1-based), as read_file numbers lines."]
Column = Annotated[int, "Column (1-based): a character of the symbol on that line."]


def _at(args: Mapping[str, Any]) -> str:
    return f"{args.get('path', '')}:{args.get('line', '')}:{args.get('column', '')}"


async def _ask(
    ctx: ToolContext,
    path: str,
    line: int,
    column: int,
    capability: str,
    question: Callable[[Connection, Path, int, int], Awaitable[T]],
) -> list[tuple[str, T]]:
    """`question` at path:line:column to the file's servers that can answer it."""
    servers = _servers(ctx)
    real = _resolve(ctx, path)
    try:
        text = real.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ToolError(f"{path} could not be read ({e}).") from None
    rows = text.splitlines()
    if not 1 <= line <= max(len(rows), 1):
        raise ToolError(f"{path} has {len(rows)} lines; line {line} is not one of them.")
    row = rows[line - 1] if rows else ""
    character = len(row[: max(column - 1, 0)].encode("utf-16-le")) // 2
    try:
        return await servers.ask(real, capability, lambda c: question(c, real, line - 1, character))
    except RuntimeError as e:
        raise ToolError(f"The language server could not answer: {e}.") from None


def _servers(ctx: ToolContext) -> LanguageServers:
    feedback = ctx.feedback
    servers = feedback.servers if feedback is not None else None
    if servers is None or not servers.any_running:
        raise ToolError(
            "No language server runs yet: read a file of the language first (that starts it)."
        )
    return servers


def _resolve(ctx: ToolContext, path: str) -> Path:
    try:
        return ctx.workspace.resolve(path)
    except OutsideWorkspace as e:
        raise ToolError(str(e)) from None


def _places(ctx: ToolContext, found: list[Location], what: str) -> str:
    """Each place as `path:line:column: text of the line`, without repeats."""
    unique = list(dict.fromkeys(found))
    if not unique:
        return f"No {what} found."
    texts: dict[str, list[str]] = {}
    shown = []
    for place in unique[:LOCATIONS_SHOWN]:
        where, text = _place(ctx, place, texts)
        shown.append(f"{where}: {text}" if text else where)
    more = len(unique) - LOCATIONS_SHOWN
    if more > 0:
        shown.append(f"… and {more} more")
    return "\n".join(shown)


def _place(ctx: ToolContext, place: Location, texts: dict[str, list[str]]) -> tuple[str, str]:
    """`path:line:column` of a place, and the text of its line ("" outside the workspace)."""
    where = f"{place.line + 1}:{place.character + 1}"
    try:
        real = ctx.workspace.resolve(place.path)
    except (OutsideWorkspace, ValueError, OSError):
        return f"{place.path}:{where} (outside the workspace)", ""
    relative = ctx.workspace.relative(real)
    if relative not in texts:
        try:
            texts[relative] = real.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            texts[relative] = []
    rows = texts[relative]
    return f"{relative}:{where}", rows[place.line].strip() if place.line < len(rows) else ""


@tool("lsp_definition", Effect.READ, title=lambda a: f"Find the definition at {_at(a)}")
async def lsp_definition(ctx: ToolContext, path: Path_, line: Line, column: Column) -> ToolResult:
    """Where the symbol at path:line:column is defined, from the language server, as
    `path:line:column: text`."""

    async def ask(c: Connection, real: Path, row: int, character: int) -> list[Location]:
        return await c.definition(real, row, character)

    try:
        answers = await _ask(ctx, path, line, column, "definition_provider", ask)
    except ToolError as e:
        return ToolResult(str(e), is_error=True)
    return ToolResult(_places(ctx, [p for _, found in answers for p in found], "definition"))


@tool("lsp_references", Effect.READ, title=lambda a: f"Find the references to {_at(a)}")
async def lsp_references(ctx: ToolContext, path: Path_, line: Line, column: Column) -> ToolResult:
    """Every use of the symbol at path:line:column (its definition included), from the
    language server, as `path:line:column: text`."""

    async def ask(c: Connection, real: Path, row: int, character: int) -> list[Location]:
        return await c.references(real, row, character)

    try:
        answers = await _ask(ctx, path, line, column, "references_provider", ask)
    except ToolError as e:
        return ToolResult(str(e), is_error=True)
    return ToolResult(_places(ctx, [p for _, found in answers for p in found], "references"))


@tool("lsp_hover", Effect.READ, title=lambda a: f"Describe the symbol at {_at(a)}")
async def lsp_hover(ctx: ToolContext, path: Path_, line: Line, column: Column) -> ToolResult:
    """The language server's description of the symbol at path:line:column: its type,
    signature and documentation."""

    async def ask(c: Connection, real: Path, row: int, character: int) -> str:
        return (await c.hover(real, row, character)).text

    try:
        answers = await _ask(ctx, path, line, column, "hover_provider", ask)
    except ToolError as e:
        return ToolResult(str(e), is_error=True)
    texts = [f"[{server}]\n{text.strip()}" for server, text in answers if text.strip()]
    text = "\n\n".join(texts) or "The language server has nothing to say about that place."
    if len(text) > HOVER_CHARS:
        text = text[:HOVER_CHARS] + "\n[... the rest was cut ...]"
    return ToolResult(text)


def _symbols_title(args: Mapping[str, Any]) -> str:
    where = f" in {args['path']}" if args.get("path") else ""
    return f"Find symbols {args.get('query', '')!r}{where}"


@tool("lsp_symbols", Effect.READ, title=_symbols_title)
async def lsp_symbols(
    ctx: ToolContext,
    query: Annotated[str, "Part of the name to look for (empty: all)."],
    path: Annotated[str | None, "A file: its symbols only. Default: the whole workspace."] = None,
) -> ToolResult:
    """Symbols (classes, functions, variables, ...) whose name contains `query`, from the
    language servers, as `name (kind) path:line:column`."""
    try:
        servers = _servers(ctx)
        symbols = await _symbols(ctx, servers, query, path)
    except ToolError as e:
        return ToolResult(str(e), is_error=True)
    needle = query.lower()
    matching = list(dict.fromkeys(s for s in symbols if needle in s.name.lower()))
    if not matching:
        # A server indexes the workspace after it starts (pyright waits for a quiet spell
        # between requests): until then it answers from the files it has open.
        unsure = (
            " in what the language servers have indexed; one that has just started may not"
            " have read every file yet: ask again, or search the files' text"
        )
        return ToolResult(f"No symbol matching {query!r} found{'' if path else unsure}.")
    texts: dict[str, list[str]] = {}
    out = []
    for symbol in matching[:LOCATIONS_SHOWN]:
        where, _ = _place(ctx, symbol.location, texts)
        inside = f" in {symbol.container}" if symbol.container else ""
        out.append(f"{symbol.name} ({symbol.kind}{inside}) {where}")
    if len(matching) > LOCATIONS_SHOWN:
        out.append(f"… and {len(matching) - LOCATIONS_SHOWN} more")
    return ToolResult("\n".join(out))


async def _symbols(
    ctx: ToolContext, servers: LanguageServers, query: str, path: str | None
) -> list[Symbol]:
    try:
        if path:
            real = _resolve(ctx, path)

            async def of_file(c: Connection) -> list[Symbol]:
                return await c.document_symbols(real)

            answers = await servers.ask(real, "document_symbol_provider", of_file)
        else:

            async def of_workspace(c: Connection) -> list[Symbol]:
                return await c.workspace_symbols(query)

            answers = []
            for server in servers.running():
                if server.connection is not None and server.connection.supports(
                    "workspace_symbol_provider"
                ):
                    answers.append((server.name, await server.ask(None, of_workspace)))
    except RuntimeError as e:
        raise ToolError(f"The language server could not answer: {e}.") from None
    return [symbol for _, found in answers for symbol in found]


LSP_TOOLS = (lsp_definition, lsp_references, lsp_hover, lsp_symbols)
