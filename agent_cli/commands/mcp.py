"""`agent mcp list|add|rm|tools|call|login|logout`: the MCP servers (SPEC §2, §9).

`list` starts the servers to show their state and tools (never the servers of
a workspace file not yet trusted); a server whose breaker is open (it failed 3
times in a row) is said to be cooling down, and checked again: the listing
resets its breaker; `add` and `rm` edit the user's `mcp.json`,
keeping every other entry. How a front end asks about a workspace's servers before
they may start is in `commands/trust.py`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from agent_cli.commands.common import guarded, start_debug_log, workspace_from

if TYPE_CHECKING:
    from agent_cli.tools.mcp import ServerStatus

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
DEBUG_HELP = "Write a debug log; show tracebacks."


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="mcp",
        help="MCP servers: list them, add or remove one, list or call one's tools, log in.",
        epilog="Examples: agent mcp · agent mcp add docs -- npx -y @acme/docs-mcp · "
        "agent mcp add web --url https://example.com/mcp · agent mcp rm docs",
        invoke_without_command=True,
        no_args_is_help=False,
    )
    group.callback()(_default)
    group.command(
        "list",
        epilog="Examples: agent mcp list · agent mcp list --cwd ~/src/project",
    )(list_servers)
    group.command(
        "add",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        epilog="Examples: agent mcp add docs -- npx -y @acme/docs-mcp · "
        "agent mcp add files --env ROOT=/srv -- python server.py --verbose · "
        "agent mcp add web --url https://example.com/mcp "
        "--header 'Authorization=Bearer ${WEB_TOKEN}'",
    )(add)
    group.command("rm", epilog="Examples: agent mcp rm docs · agent mcp list (to see the names)")(
        remove
    )
    group.command(
        "tools",
        epilog="Examples: agent mcp tools docs · agent mcp tools http://127.0.0.1:9000/mcp --json",
    )(tools)
    group.command(
        "call",
        epilog='Examples: agent mcp call docs search \'{"query": "tls"}\' · '
        "agent mcp call http://127.0.0.1:9000/mcp ask --accept-defaults",
    )(call)
    group.command("login", epilog="Examples: agent mcp login linear · agent mcp logout linear")(
        login
    )
    group.command("logout", epilog="Examples: agent mcp logout linear")(logout)
    app.add_typer(group)


def _default(context: typer.Context) -> None:
    """MCP servers: with no subcommand, list them."""
    if context.invoked_subcommand is None:
        list_servers()


# --------------------------------------------------------------------- list


def list_servers(
    debug: Annotated[bool, typer.Option("--debug", help=DEBUG_HELP)] = False,
    cwd: Annotated[Path | None, typer.Option(help="The workspace to look in.")] = None,
) -> None:
    """Each server: where it is configured, whether it starts, and its tools as the model sees them.

    Starts the servers to ask them (a workspace's servers only once trusted).
    """

    def action() -> int:
        if debug:
            start_debug_log()
        return _list(workspace_from(cwd))

    raise typer.Exit(guarded(debug, action))


def _list(workspace: Path) -> int:
    import asyncio
    import os

    from agent_cli import mcp_config
    from agent_cli.tools.mcp import McpServers

    user, warnings = mcp_config.read_file(mcp_config.user_file(), "user")
    local = mcp_config.workspace_file(workspace)
    found, more = mcp_config.read_file(local, "workspace")
    trusted = bool(found) and mcp_config.is_trusted(workspace, local)
    chosen = {s.name: s for s in user}
    if trusted:
        chosen.update((s.name, s) for s in found)
        warnings += more
    for warning in warnings:
        print(f"agent: {warning}", file=sys.stderr)
    if not chosen and not found:
        print(
            f"No MCP servers are configured ({mcp_config.user_file()}, {local}). "
            "Add one with: agent mcp add NAME -- COMMAND ARGS..."
        )
        return 0

    from agent_cli.settings import load_settings
    from agent_cli.wiring import sandbox_of

    settings = load_settings(workspace)
    policy = settings.shell_environment  # what a run's servers inherit

    from agent_cli.tools.mcp_breakers import cooling, reset
    from agent_cli.tools.mcp_listings import listing_key

    keys = {name: listing_key(c.identity(workspace)) for name, c in chosen.items()}
    cooled = {name: text for name, key in keys.items() if (text := cooling(key))}
    for key in keys.values():
        reset(key)  # a person asked to check them: each starts again

    from agent_cli.tools.mcp import ClientHooks
    from agent_cli.tools.mcp_auth import oauth, refuse

    # A login kept is used; one not yet made is said, not started (`agent mcp login` does it).
    hooks = ClientHooks(auth=lambda config: oauth(config, os.environ, refuse))

    async def ask() -> tuple[list[ServerStatus], list[str]]:
        servers = McpServers(
            list(chosen.values()), workspace, os.environ, env_policy=policy,
            sandbox=sandbox_of(settings), hooks=hooks,
        )  # fmt: skip
        try:
            _, notices = await servers.tools()
            return await servers.status(), notices
        finally:
            await servers.aclose()

    statuses, notices = asyncio.run(ask())
    for notice in _not_shown(notices, statuses):
        print(f"agent: {notice}", file=sys.stderr)
    for status in statuses:
        print(_describe(status))
        if status.config.name in cooled:
            print(f"    (its breaker was open, {cooled[status.config.name]}; reset by this check)")
    if found and not trusted:
        for server in found:
            print(f"{server.name}  [workspace {local}, not trusted]  not started")
        print(
            "  The workspace's servers start only after you say yes to them: start agent on a "
            "terminal in this folder to be asked."
        )
    return 0


def _not_shown(notices: list[str], statuses: list[ServerStatus]) -> list[str]:
    """What a run would warn about that the listing does not show: a tool left out because
    its name was taken, a `${VAR}` not set. A failed server's notice repeats its line."""
    failed = [f"The MCP server {s.config.name!r} was left out" for s in statuses]
    return [n for n in notices if not n.startswith(tuple(failed))]


def _describe(status: ServerStatus) -> str:
    config = status.config
    where = f"{config.source} {_home(config.file)}"
    if config.source == "workspace":
        where += ", trusted"
    if status.state == "ok":
        count = len(status.tools)
        state = f"ok, {count} tool{'' if count == 1 else 's'}"
    elif status.state == "disabled":
        state = "disabled"
    elif status.state == "cooling":
        state = status.reason
    else:
        state = f"failed: {status.reason}"
    lines = [f"{config.name}  [{where}]  {state}"]
    width = max((len(name) for name, _ in status.tools), default=0)
    lines += [f"    {name.ljust(width)}  {about}".rstrip() for name, about in status.tools]
    return "\n".join(lines)


def _home(file: Path | None) -> str:
    if file is None:
        return ""
    home = Path.home()
    return f"~/{file.relative_to(home)}" if file.is_relative_to(home) else str(file)


# ---------------------------------------------------------------------- add


def add(
    context: typer.Context,
    name: Annotated[
        str,
        typer.Argument(
            metavar="NAME [-- COMMAND ARGS...]",
            help="The server's name (its tools become NAME_TOOL), then its command after --.",
        ),
    ],
    url: Annotated[
        str | None, typer.Option(help="A Streamable HTTP server's address, instead of a command.")
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(help="An HTTP header K=V (repeatable); ${VAR} is read from the environment."),
    ] = None,
    env: Annotated[
        list[str] | None,
        typer.Option(help="An environment variable K=V for the command (repeatable)."),
    ] = None,
    timeout_ms: Annotated[
        int | None, typer.Option(min=1, help="A call's time limit in ms (default 30000).")
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help=DEBUG_HELP)] = False,
) -> None:
    """Add (or replace) a server in your mcp.json: `-- COMMAND ARGS...` or `--url URL`."""

    def action() -> int:
        if debug:
            start_debug_log()
        entry = _entry(context.args, url, header or [], env or [], timeout_ms)
        return _add(name, entry)

    raise typer.Exit(guarded(debug, action))


def _entry(
    command: list[str], url: str | None, headers: list[str], env: list[str], timeout: int | None
) -> dict:
    from agent_cli.errors import UsageError

    if bool(command) == bool(url):
        raise UsageError(
            "Give either a command after `--` (agent mcp add NAME -- COMMAND ARGS...) or "
            "--url URL, not both or neither."
        )
    entry: dict = {"url": url} if url else {"command": command[0], "args": command[1:]}
    if headers:
        if not url:
            raise UsageError("--header is for --url servers — pass --env for a command.")
        entry["headers"] = _pairs(headers, "--header")
    if env:
        if url:
            raise UsageError("--env is for command servers — pass --header for a --url one.")
        entry["env"] = _pairs(env, "--env")
    if timeout is not None:
        entry["timeout_ms"] = timeout
    return entry


def _pairs(items: list[str], option: str) -> dict[str, str]:
    from agent_cli.errors import UsageError

    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{option} takes KEY=VALUE, not {item!r}.")
        pairs[key.strip()] = value
    return pairs


def _add(name: str, entry: dict) -> int:
    from agent_cli import mcp_config
    from agent_cli.errors import ConfigError, UsageError

    if not NAME.fullmatch(name):
        raise UsageError(
            f"{name!r} is not a usable server name — use letters, digits, '_', '-' or '.'."
        )
    existing, _ = mcp_config.read_file(mcp_config.user_file(), "user")
    replaced = any(s.name == name for s in existing)
    file = mcp_config.add_server(name, entry)
    verb = "Replaced" if replaced else "Added"
    print(f"{verb} the MCP server {name!r} in {file}. See its tools with: agent mcp list")
    local = mcp_config.workspace_file(workspace_from(None))
    try:
        shadowed = any(s.name == name for s in mcp_config.read_file(local, "workspace")[0])
    except ConfigError:
        shadowed = False  # its own problem, said when it is used
    if shadowed:
        print(
            f"agent: {local} also has a server {name!r}; in this workspace (once trusted) "
            "that entry is used instead.",
            file=sys.stderr,
        )
    return 0


# ----------------------------------------------------------------------- rm


def remove(
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="The server to remove from your mcp.json.")
    ],
    debug: Annotated[bool, typer.Option("--debug", help=DEBUG_HELP)] = False,
) -> None:
    """Remove a server from your mcp.json (other entries are kept)."""

    def action() -> int:
        from agent_cli import mcp_config
        from agent_cli.errors import UsageError

        if debug:
            start_debug_log()
        if not mcp_config.remove_server(name):
            raise UsageError(
                f"There is no MCP server {name!r} in {mcp_config.user_file()} — see agent mcp "
                "list (a workspace's servers are edited in its .agent/mcp.json)."
            )
        print(f"Removed the MCP server {name!r} from {mcp_config.user_file()}.")
        return 0

    raise typer.Exit(guarded(debug, action))


# ------------------------------------------------------- one server, directly

TARGET_HELP = "A server's name in mcp.json, or its http(s):// address (no entry needed)."


def _direct(debug: bool, act: Callable[[ModuleType], int]) -> NoReturn:
    """Run one of mcp_direct's commands (imported only now: it loads the SDK) and exit."""

    def action() -> int:
        from agent_cli.commands import mcp_direct

        if debug:
            start_debug_log()
        return act(mcp_direct)

    raise typer.Exit(guarded(debug, action))


def tools(
    target: Annotated[str, typer.Argument(metavar="NAME|URL", help=TARGET_HELP)],
    as_json: Annotated[bool, typer.Option("--json", help="The listing as JSON.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help=DEBUG_HELP)] = False,
    cwd: Annotated[Path | None, typer.Option(help="The workspace to look in.")] = None,
) -> None:
    """Start one server and list its tools as it names them (a 401 starts the login)."""

    _direct(debug, lambda direct: direct.list_tools(target, workspace_from(cwd), as_json))


def call(
    target: Annotated[str, typer.Argument(metavar="NAME|URL", help=TARGET_HELP)],
    tool: Annotated[str, typer.Argument(metavar="TOOL", help="The tool's name on its server.")],
    arguments: Annotated[
        str, typer.Argument(metavar="[ARGS_JSON]", help="The arguments, a JSON object.")
    ] = "{}",
    accept_defaults: Annotated[
        bool,
        typer.Option(
            "--accept-defaults", help="Answer a server's request for input with its defaults."
        ),
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help=DEBUG_HELP)] = False,
    cwd: Annotated[Path | None, typer.Option(help="The workspace to look in.")] = None,
) -> None:
    """Call one tool and print its result; exit 1 when the server says it failed."""

    _direct(
        debug,
        lambda direct: direct.call_tool(
            target, tool, arguments, workspace_from(cwd), accept_defaults
        ),
    )


def login(
    target: Annotated[str, typer.Argument(metavar="NAME|URL", help=TARGET_HELP)],
    debug: Annotated[bool, typer.Option("--debug", help=DEBUG_HELP)] = False,
    cwd: Annotated[Path | None, typer.Option(help="The workspace to look in.")] = None,
) -> None:
    """Log in to an HTTP server in your browser (OAuth); its tokens are kept for later runs."""

    _direct(debug, lambda direct: direct.login(target, workspace_from(cwd)))


def logout(
    target: Annotated[str, typer.Argument(metavar="NAME|URL", help=TARGET_HELP)],
    debug: Annotated[bool, typer.Option("--debug", help=DEBUG_HELP)] = False,
    cwd: Annotated[Path | None, typer.Option(help="The workspace to look in.")] = None,
) -> None:
    """Forget the tokens a login kept for an HTTP server."""

    _direct(debug, lambda direct: direct.logout(target, workspace_from(cwd)))
