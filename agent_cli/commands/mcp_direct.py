"""`agent mcp tools|call|login|logout`: one server, spoken to directly (SPEC §2, §9).

A server is named as in `mcp.json` (a workspace's only once trusted) or given by
its address: a URL with no entry is spoken to as Streamable HTTP, with nothing
configured. An HTTP server that answers 401 starts the login by itself: the
browser opens on the authorization page (Python's `webbrowser`, so `$BROWSER` is
honoured; the address is printed too) and the answer comes back to a loopback
listener. `login` does that on purpose, `logout` forgets what the login kept.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.errors import McpLoginError, ToolError, UsageError

if TYPE_CHECKING:
    from agent_cli.tools.mcp import ClientHooks, ServerConfig

START_TIMEOUT = 30.0
"""Seconds a server has to start here: a person asked for this one and waits for it (a
session's servers start in the background, in `MCP_START_TIMEOUT`)."""


# ------------------------------------------------------------------ which server


def resolve(target: str, workspace: Path) -> ServerConfig:
    """The entry named `target`, or the one with that address, or an ad hoc one for a URL."""
    from agent_cli import mcp_config
    from agent_cli.tools.mcp import ServerConfig

    configs, warnings = mcp_config.load_servers(
        workspace, trusted=lambda file: mcp_config.is_trusted(workspace, file)
    )
    for warning in warnings:
        print(f"agent: {warning}", file=sys.stderr)
    for config in configs:
        if target in (config.name, config.url):
            if config.disabled:
                raise UsageError(
                    f"The MCP server {config.name!r} is disabled in {config.file} — enable it "
                    "there first."
                )
            return config
    if target.startswith(("http://", "https://")):
        return ServerConfig(name=target, url=target, source="command line")
    names = ", ".join(c.name for c in configs) or "none is configured"
    raise UsageError(
        f"There is no MCP server {target!r} ({names}) — give a name from `agent mcp list`, "
        "or a server's http(s):// address."
    )


# ------------------------------------------------------------------ the person


async def open_browser(name: str, url: str) -> None:
    """Send the person to the authorization page: the address on stderr, and the browser."""
    from agent_cli.tools.mcp_auth import open_in_browser

    print(
        f"agent: the MCP server {name!r} needs you to log in; opening your browser at:\n  {url}",
        file=sys.stderr,
    )
    if not await open_in_browser(url):
        print(
            "agent: no browser could be opened — open the address above yourself.", file=sys.stderr
        )


def elicitation(accept_defaults: bool) -> Callable[..., Any]:
    """A server's request for input during a call: its defaults taken, or declined.

    There is no form here (the TUI has one); `--accept-defaults` answers with the
    defaults the server's schema gives (declined, saying which, when a required field
    has none), and without it the request is declined.
    """

    async def answer(_context: Any, params: Any) -> Any:
        from mcp_types import ElicitResult

        message = getattr(params, "message", "")
        schema = getattr(params, "requested_schema", None) or {}
        if getattr(params, "mode", "form") != "form":
            print(f"agent: the server asked to open {params.url!r}; declined.", file=sys.stderr)
            return ElicitResult(action="decline")
        if not accept_defaults:
            print(
                f"agent: the server asked for input ({message}); declined — pass "
                "--accept-defaults to answer with its defaults.",
                file=sys.stderr,
            )
            return ElicitResult(action="decline")
        fields = schema.get("properties", {}) if isinstance(schema, dict) else {}
        content = {
            k: v["default"] for k, v in fields.items() if isinstance(v, dict) and "default" in v
        }
        required = schema.get("required", []) if isinstance(schema, dict) else []
        lacking = [str(name) for name in required if name not in content]
        if lacking:  # accepted without them, the server would only refuse the answer
            print(
                f"agent: the server asked for input ({message}); declined — its required "
                f"{_fields(lacking, fields)} no default, so --accept-defaults cannot answer: "
                "call the tool from a session (`agent`), whose form asks you for it.",
                file=sys.stderr,
            )
            return ElicitResult(action="decline")
        print(f"agent: the server asked for input ({message}); its defaults sent.", file=sys.stderr)
        return ElicitResult(action="accept", content=content)

    return answer


def _fields(names: list[str], properties: Any) -> str:
    """ "field 'name' has" or "fields 'a', 'b' have", by title where the schema gives one."""

    def label(name: str) -> str:
        spec = properties.get(name) if isinstance(properties, dict) else None
        title = spec.get("title") if isinstance(spec, dict) else None
        same = not title or str(title).lower() == name.lower()
        return repr(name) if same else f"{title!r} ({name})"

    listed = ", ".join(label(n) for n in names)
    return f"field {listed} has" if len(names) == 1 else f"fields {listed} have"


def hooks(accept_defaults: bool, logins: list[Any]) -> ClientHooks:
    """The CLI's client: defaults or a decline for input, the browser for a login (each
    login's provider added to `logins`, where a failed one says why)."""
    from agent_cli.tools.mcp import ClientHooks
    from agent_cli.tools.mcp_auth import oauth

    def auth(config: ServerConfig) -> Any:
        logins.append(oauth(config, os.environ, open_browser))
        return logins[-1]

    return ClientHooks(
        options=lambda _config: {"elicitation_callback": elicitation(accept_defaults)},
        auth=auth,
    )


# ------------------------------------------------------------------ the commands


def _servers(
    config: ServerConfig, workspace: Path, accept_defaults: bool = False, logins: list | None = None
) -> Any:
    from agent_cli.settings import load_settings
    from agent_cli.tools.mcp import McpServers
    from agent_cli.wiring import sandbox_of

    settings = load_settings(workspace)
    return McpServers(
        [config],
        workspace,
        os.environ,
        env_policy=settings.shell_environment,
        sandbox=sandbox_of(settings),
        start_timeout=START_TIMEOUT,
        hooks=hooks(accept_defaults, [] if logins is None else logins),
    )


def list_tools(target: str, workspace: Path, as_json: bool) -> int:
    config = resolve(target, workspace)

    async def ask() -> list[Any]:
        servers = _servers(config, workspace)
        try:
            listing, _ = await servers.connect(config.name)
            return listing
        finally:
            await servers.aclose()

    listing = asyncio.run(ask())
    if as_json:
        tools = [
            {
                "name": t.name,
                "title": t.title,
                "description": t.description,
                "inputSchema": t.input_schema,
                "readOnlyHint": t.read_only_hint,
            }
            for t in listing
        ]
        print(json.dumps(tools, indent=2, ensure_ascii=False))
        return 0
    if not listing:
        print(f"The MCP server {config.name!r} has no tools.")
    width = max((len(t.name) for t in listing), default=0)
    for tool in listing:
        about = (tool.description or tool.title or "").strip().splitlines() or [""]
        print(f"{tool.name.ljust(width)}  {about[0]}".rstrip())
    return 0


def call_tool(target: str, tool: str, arguments: str, workspace: Path, accept: bool) -> int:
    config = resolve(target, workspace)
    try:
        parsed = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError as e:
        raise UsageError(
            f"ARGS_JSON is not valid JSON ({e.msg}) — give an object, e.g. '{{\"a\": 1}}'."
        ) from e
    if not isinstance(parsed, dict):
        raise UsageError("ARGS_JSON must be a JSON object, e.g. '{\"a\": 1}'.")

    async def ask() -> Any:
        servers = _servers(config, workspace, accept, logins)
        try:
            listing, client = await servers.connect(config.name)
            if tool not in {t.name for t in listing}:
                names = ", ".join(t.name for t in listing) or "none"
                raise UsageError(
                    f"The MCP server {config.name!r} has no tool {tool!r} (its tools: {names})."
                )
            seconds = config.timeout_ms / 1000
            try:
                with servers.clock(config.name).deadline(seconds):  # not the browser's time
                    return await client.call_tool(tool, parsed)
            except TimeoutError:
                raise ToolError(
                    f"The MCP server {config.name!r} did not answer within {seconds:g} s."
                ) from None
        finally:
            await servers.aclose()

    from mcp.shared.exceptions import MCPError

    from agent_cli.tools.mcp import to_result

    logins: list[Any] = []
    try:
        result = asyncio.run(ask())
    except MCPError as e:
        for failure in [getattr(login, "failure", "") for login in logins]:
            if failure:
                raise McpLoginError(
                    f"The MCP server {config.name!r} could not log in: {failure}."
                ) from e
        raise ToolError(f"The MCP server {config.name!r} refused the call: {e}") from e
    print(to_result(result).text)
    return 1 if result.is_error else 0


def login(target: str, workspace: Path) -> int:
    """Log in anew (the tokens kept are dropped first; the registration is kept)."""
    from agent_cli.tools.mcp_auth import TokenStore

    config = resolve(target, workspace)
    if not config.url:
        raise UsageError(f"The MCP server {config.name!r} runs as a program: it needs no login.")
    store = TokenStore(config, os.environ, "")
    store.forget_tokens()

    async def ask() -> None:
        servers = _servers(config, workspace)
        try:
            await servers.connect(config.name)
        finally:
            await servers.aclose()

    asyncio.run(ask())
    if not store.has_tokens():
        print(f"The MCP server {config.name!r} answered without a login: it needs none.")
        return 0
    print(f"Logged in to the MCP server {config.name!r}; its tokens are kept in {store.file}.")
    return 0


def logout(target: str, workspace: Path) -> int:
    from agent_cli.tools.mcp_auth import TokenStore

    config = resolve(target, workspace)
    if not config.url:
        raise UsageError(f"The MCP server {config.name!r} runs as a program: it has no login.")
    if TokenStore(config, os.environ, "").forget():
        print(f"Logged out of the MCP server {config.name!r}: its tokens are deleted.")
    else:
        print(f"There was no login kept for the MCP server {config.name!r}.")
    return 0
