"""The trust question about a workspace's MCP servers (and project hooks, and a server's
OAuth login), and the two ways a front end asks it. Apart from `commands/mcp.py` so that
opening the TUI imports no Typer."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_cli.frontends.interactive import Questions
    from agent_cli.tools.mcp import ServerConfig


def trust_question(file: Path, servers: list[ServerConfig]) -> str:
    """What the person is asked about a workspace's servers: exactly what would run."""
    from agent_cli.backends.hooks import ProjectHook
    from agent_cli.backends.hooks import trust_question as hooks_question

    if servers and isinstance(servers[0], ProjectHook):  # its hooks ask through the same door
        return hooks_question(file, servers)
    from agent_cli.tools.mcp_auth import LoginRequest

    if servers and isinstance(servers[0], LoginRequest):  # a server's OAuth login, asked first
        name, url = servers[0]
        return (
            f"The MCP server {name!r} needs you to log in. Open this address in your browser "
            f"to log in?\n  {url}"
        )
    lines = [f"{file} wants to start these MCP servers:"]
    for server in servers:
        if server.url:
            sent = _variables_sent(server)
            also = f" (sent with your {', '.join(sent)})" if sent else ""
            lines.append(f"  {server.name}: {server.url}{also}")
        else:
            import shlex

            lines.append(f"  {server.name}: {shlex.join([server.command, *server.args])}")
    lines.append("They run as you, with your files. Trust and start them in this workspace?")
    return "\n".join(lines)


def _variables_sent(server: ServerConfig) -> list[str]:
    """The environment variables a URL server's entry sends it (in headers, or as its OAuth
    client secret): a cloned repository's entry could name any of yours."""
    import re

    names = [m for v in server.headers.values() for m in re.findall(r"\$\{(\w+)", v)]
    if server.oauth is not None and server.oauth.client_secret_env:
        names.append(server.oauth.client_secret_env)
    return [f"${name}" for name in dict.fromkeys(names)]


def ask_trust_through(questions: Questions) -> Callable[[Path, list], Awaitable[bool]]:
    """The trust question, asked by whichever front end answers `questions` (the TUI)."""

    async def ask(file: Path, servers: list) -> bool:
        return await questions.ask(trust_question(file, servers))

    return ask


async def ask_trust_inline_async(file: Path, servers: list[ServerConfig]) -> bool:
    """Ask on the terminal (stderr + prompt-toolkit) from inside an event loop (the line
    REPL, `agent run`); True for yes."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.output import create_output

    print(trust_question(file, servers), file=sys.stderr)
    session: PromptSession[str] = PromptSession(output=create_output(stdout=sys.stderr))
    try:
        answer = await session.prompt_async("[y/N]: ")
    except (EOFError, KeyboardInterrupt):
        return False
    return answer.strip().lower() in ("y", "yes")
