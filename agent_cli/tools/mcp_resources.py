"""MCP servers' resources as two tools: `list_mcp_resources` and `read_mcp_resource`.

Offered only while a configured server says it serves resources (its
capabilities). Listing names each resource (URI, name, type, what it is) and
each resource template (a URI with `{placeholders}` the model fills in). A read
is the resource's text, or an image the model sees, or a line describing
binary data (tools/mcp_content.py). Reading is a read: resources are the
protocol's read-only side, so the tools are `Effect.READ`; the servers are the
ones a person configured (and a workspace's only once trusted).

`McpResources` is the same servers' resources for the person: `@server:uri` in a
message (engine/resources.py reads them through it) and the listing completion
shows after `@server:`, kept between refreshes.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

from agent_cli.errors import ToolError
from agent_cli.tools.base import Effect, Tool, ToolContext, ToolResult, tool
from agent_cli.tools.mcp_content import resource_result

if TYPE_CHECKING:
    from agent_cli.tools.mcp import McpServers

PAGES = 20  # pages of a listing read at most: a server that pages forever cannot hang it


def resource_tools(servers: McpServers) -> list[Tool]:
    """The two tools, over the session's servers."""

    @tool(
        "list_mcp_resources",
        Effect.READ,
        title=lambda args: f"List MCP resources {args.get('server') or ''}".rstrip(),
    )
    async def list_mcp_resources(
        ctx: ToolContext,
        server: Annotated[str, "one server's name; empty for every server's"] = "",
    ) -> ToolResult:
        """List the resources (and resource templates) MCP servers offer: data the person's
        servers make readable by URI. Read one with read_mcp_resource."""
        serving = servers.serving("resources")
        if server and server not in serving:
            return _unknown(server, serving)
        parts = [await _listing(name, serving[name]) for name in ([server] if server else serving)]
        return ToolResult("\n\n".join(parts))

    @tool(
        "read_mcp_resource",
        Effect.READ,
        title=lambda args: f"Read {args.get('server', '')}:{args.get('uri', '')}",
    )
    async def read_mcp_resource(
        ctx: ToolContext,
        server: Annotated[str, "the server's name, as list_mcp_resources shows it"],
        uri: Annotated[str, "the resource's URI (a template's, filled in)"],
    ) -> ToolResult:
        """Read one resource of an MCP server by its URI."""
        serving = servers.serving("resources")
        if server not in serving:
            return _unknown(server, serving)
        try:
            return await read(serving[server], uri)
        except ToolError as e:
            return ToolResult(str(e), is_error=True)

    return [list_mcp_resources, read_mcp_resource]


async def read(server: Any, uri: str) -> ToolResult:
    """One resource's contents (ToolError, said in a sentence, when it cannot be read)."""
    answer = await server.request(f"read {uri}", lambda client: client.read_resource(uri))
    return resource_result(uri, list(answer.contents))


async def listed(server: Any) -> tuple[list[Any], list[Any]]:
    """A server's resources and resource templates (the SDK's types)."""

    async def every(method: str) -> list[Any]:
        found, cursor = [], None
        for _ in range(PAGES):
            ask = lambda c, at=cursor: _page(c, method, at)  # noqa: E731
            page = await server.request("list its resources", ask)
            found += page.resources if method == "list_resources" else page.resource_templates
            cursor = page.next_cursor
            if not cursor:
                break
        return found

    resources = await every("list_resources")
    try:
        templates = await every("list_resource_templates")
    except ToolError:  # a server that lists no templates may refuse the method outright
        templates = []
    return resources, templates


async def _page(client: Any, method: str, cursor: str | None) -> Any:
    return await getattr(client, method)(cursor=cursor)


async def _listing(name: str, server: Any) -> str:
    try:
        resources, templates = await listed(server)
    except ToolError as e:
        return f"{name}: {e}"
    lines = [f"{name}: {len(resources)} resource(s)"]
    for r in resources:
        lines.append(f"- {r.uri}{_about(r.name, r.mime_type, r.description)}")
    if templates:
        lines.append(f"{name}: {len(templates)} resource template(s) (fill in the {{names}})")
        for t in templates:
            lines.append(f"- {t.uri_template}{_about(t.name, t.mime_type, t.description)}")
    return "\n".join(lines)


def _about(name: str, mime: str | None, description: str | None) -> str:
    shown = f" — {name}" if name else ""
    shown += f" ({mime})" if mime else ""
    return shown + (f": {description.strip().splitlines()[0]}" if description else "")


def _unknown(server: str, serving: dict[str, Any]) -> ToolResult:
    names = ", ".join(sorted(serving)) or "none"
    return ToolResult(
        f"No MCP server {server!r} serves resources. The ones that do: {names}.", is_error=True
    )


# The running MCP servers (started first when `start`), and what starting them said.
Served = Callable[[bool], Awaitable[tuple["McpServers | None", list[str]]]]


class ResourceEntry(NamedTuple):
    """One resource or template, as completion offers it."""

    server: str
    uri: str  # a template's, with its `{placeholders}`
    name: str = ""
    template: bool = False


class McpResources:
    """The front end's MCP servers' resources, for `@server:uri` in a message (read when it
    is sent) and its completion (from a listing kept between refreshes: a key never waits
    for a server). `served` starts the servers; `running` is them once started (None
    before); `configured`: their names as the config files say them, read without starting
    any."""

    def __init__(
        self,
        served: Served,
        running: Callable[[], McpServers | None],
        configured: Callable[[], list[str]],
    ) -> None:
        self.served = served
        self.running = running  # the servers once started, asked nothing (for a key)
        self.configured = configured
        self._listed: dict[str, list[ResourceEntry]] | None = None
        self._tried: set[str] = set()  # the servers listed (or that failed to be) last time
        self._refreshing = asyncio.Lock()

    async def servers(self) -> list[str]:
        return await asyncio.to_thread(self.configured)

    async def read(self, server: str, uri: str) -> ToolResult:
        servers, notices = self.running(), list[str]()
        if servers is None or server not in servers.serving("resources"):
            servers, notices = await self.served(True)  # started (or their start waited for)
        serving = servers.serving("resources") if servers is not None else {}
        if server in serving:
            return await read(serving[server], uri)
        named = re.compile(rf"(?<![\w.-]){re.escape(server)}(?![\w.-])")
        why = next((notice for notice in notices if named.search(notice)), "")
        if why:  # left out: not trusted, failed to start
            raise ToolError(why)
        if servers is not None and any(c.name == server for c in servers.configs):
            raise ToolError(f"The MCP server {server!r} serves no resources.")
        raise ToolError(
            f"The MCP server {server!r} is not running (or is disabled) — check it with "
            "`agent mcp list`."
        )

    def listed(self) -> dict[str, list[ResourceEntry]] | None:
        return self._listed

    async def refresh(self, start: bool = False) -> bool:
        async with self._refreshing:
            servers = (await self.served(True))[0] if start else self.running()
            if servers is None:
                return False
            serving = servers.serving("resources")  # more once they have started
            changed = servers.take_changed("resources")
            if self._listed is not None and not changed and set(serving) <= self._tried:
                return False
            self._tried = set(serving)
            found: dict[str, list[ResourceEntry]] = {}
            for name, server in serving.items():
                try:
                    resources, templates = await listed(server)
                except ToolError:
                    continue  # said when one of its resources is mentioned
                entries = [ResourceEntry(name, str(r.uri), r.name or "") for r in resources]
                entries += [ResourceEntry(name, t.uri_template, t.name, True) for t in templates]
                found[name] = entries
            self._listed = found
            return True
