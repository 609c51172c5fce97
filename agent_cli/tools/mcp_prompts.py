"""MCP servers' prompts: listed, their arguments read from a command line, and fetched.

A prompt is a server's message template: `/server:prompt args…` in a front end.
Arguments are given in the prompt's own argument order (`/docs:review main.py`)
or by name (`/docs:review file=main.py`), quoted as a shell would; what a
required argument lacks is said before anything is sent. The messages the server
returns are sent as the person's own message: their text joined, an embedded
resource's text under its URI, audio described (tools/mcp_content.py); an image
goes with the message as an image (a model without vision gets a line saying so,
providers/images.py).
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any, NamedTuple

from agent_cli.errors import ToolError
from agent_cli.media import Prompt
from agent_cli.tools.mcp_content import to_result
from agent_cli.tools.mcp_resources import PAGES

if TYPE_CHECKING:
    from agent_cli.tools.mcp import McpServers

__all__ = ["McpPrompt", "fetch", "parse_arguments", "prompts"]


class McpPrompt(NamedTuple):
    """One prompt of one server, as a slash command shows it."""

    server: str
    name: str
    description: str
    arguments: tuple[tuple[str, bool], ...]  # (name, required), in the prompt's order

    @property
    def command(self) -> str:
        return f"{self.server}:{self.name}"


def parse_arguments(prompt: McpPrompt, line: str) -> dict[str, str]:
    """`line`'s words as the prompt's arguments: positional in order, or `name=value`.
    ToolError saying what is wrong (an unknown name, too many, a required one missing)."""
    try:
        words = shlex.split(line)
    except ValueError as e:
        raise ToolError(f"/{prompt.command}: {e} — close the quote.") from None
    names = [name for name, _ in prompt.arguments]
    values: dict[str, str] = {}
    positional = iter(names)
    for word in words:
        key, equals, value = word.partition("=")
        if equals and key in names:
            values[key] = value
            continue
        name = next((n for n in positional if n not in values), None)
        if name is None:
            raise ToolError(
                f"/{prompt.command} takes {len(names)} argument(s) ({', '.join(names) or 'none'});"
                f" {word!r} is one too many."
            )
        values[name] = word
    missing = [n for n, required in prompt.arguments if required and n not in values]
    if missing:
        raise ToolError(f"/{prompt.command} needs {', '.join(missing)} — give it after the name.")
    return values


async def prompts(servers: McpServers) -> list[McpPrompt]:
    """Every prompt of the servers that serve some (a server that fails is left out)."""
    found: list[McpPrompt] = []
    for name, server in servers.serving("prompts").items():
        try:
            listed = await _listed(server)
        except ToolError:
            continue
        for p in listed:
            arguments = tuple((a.name, bool(a.required)) for a in p.arguments or ())
            found.append(McpPrompt(name, p.name, p.description or "", arguments))
    return found


async def _listed(server: Any) -> list[Any]:
    """A server's prompts, page after page (at most `PAGES` of them, as for resources)."""
    found: list[Any] = []
    cursor = None
    for _ in range(PAGES):
        ask = lambda c, at=cursor: c.list_prompts(cursor=at)  # noqa: E731
        page = await server.request("list its prompts", ask)
        found += page.prompts
        cursor = page.next_cursor
        if not cursor:
            break
    return found


async def fetch(servers: McpServers, prompt: McpPrompt, arguments: dict[str, str]) -> Prompt:
    """The prompt's messages as one message: their text, and their images (ToolError when
    it cannot be had)."""
    server = servers.serving("prompts").get(prompt.server)
    if server is None:
        raise ToolError(f"The MCP server {prompt.server!r} serves no prompts now.")

    async def get(client: Any) -> Any:
        return await client.get_prompt(prompt.name, arguments)

    answer = await server.request(f"give the prompt {prompt.name!r}", get)
    results = [to_result(_Content([message.content])) for message in answer.messages]
    images = tuple(image for result in results for image in result.images)
    return Prompt("\n\n".join(result.text for result in results), images)


class _Content(NamedTuple):
    content: list[Any]
    structured_content: Any = None
    is_error: bool = False
