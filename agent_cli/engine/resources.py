"""`@server:uri` in a message attaches one of an MCP server's resources.

The Session reads them through a `ResourceSource` that wiring hands it (the
front end's MCP servers): the engine never starts a server itself. A mention
is a resource's only when it is written `@name:scheme:…` — after a server's
name comes a URI with its scheme — so `@src/x.py`, `@x.py:12`, `@localhost:8080`
and an e-mail address stay what they were. One that names no configured server
(and no file), or a resource its server cannot read, is said in a notice and
the message goes without it. Text is capped as a file's is, an image goes as
an image (for a model that sees them), other binary data as a line saying what
it is (tools/mcp_content.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import NamedTuple, Protocol

from agent_cli.engine.mentions import TRAILING, mentions
from agent_cli.errors import AgentError
from agent_cli.media import Attachment, Image, Prompt
from agent_cli.tools.base import MODEL_RESULT_CAP, ToolResult, cap_for_model
from agent_cli.tools.mcp_resources import ResourceEntry

__all__ = [
    "AttachedResources",
    "ResourceEntry",
    "ResourceMention",
    "ResourceSource",
    "attach_resources",
    "not_files",
    "resource_mentions",
]

# A server's name (as mcp.json spells one), ":", then a URI: its scheme, ":", the rest.
_RESOURCE = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.-]*):([A-Za-z][A-Za-z0-9+.-]*:\S+)")


class ResourceSource(Protocol):
    """Where a Session reads the resources its messages mention, and front ends find the
    ones they complete."""

    async def servers(self) -> Collection[str]:
        """The names of the configured MCP servers (without starting any); AgentError when
        the configuration cannot be read."""
        ...

    async def read(self, server: str, uri: str) -> ToolResult:
        """The resource's contents (its server started first if need be); AgentError saying
        why in a sentence when it cannot be had."""
        ...

    def listed(self) -> Mapping[str, Sequence[ResourceEntry]] | None:
        """Each server's resources and templates as last listed (None: not listed yet). Never
        waits: completion reads it on every key."""
        ...

    async def refresh(self, start: bool = False) -> bool:
        """List them again when due (first time, or a server said they changed); `start`:
        start the servers for it. Whether there is anything new."""
        ...


class ResourceMention(NamedTuple):
    written: str  # as in the message, after the "@"
    server: str
    uri: str


def resource_mentions(text: str) -> list[ResourceMention]:
    """The `@server:uri` mentions of a message, in order, each once."""
    found = []
    for written in mentions(text):
        match = _RESOURCE.fullmatch(written)
        if match is not None:
            found.append(ResourceMention(written, match.group(1), match.group(2)))
    return found


class AttachedResources(NamedTuple):
    prompt: Prompt
    problems: list[str]
    taken: set[str]  # the mentions (as written) that were resources': no path is looked for
    # A mention naming no configured server, and what to say of it unless a file has its name.
    unknown: dict[str, str]


async def attach_resources(prompt: Prompt, source: ResourceSource) -> AttachedResources:
    """The prompt with each `@server:uri` it mentions attached."""
    found = resource_mentions(prompt.text)
    if not found:
        return AttachedResources(prompt, [], set(), {})
    try:
        servers = set(await source.servers())
    except AgentError as e:
        said = [f"@{m.written} is not attached: {e}" for m in found]
        return AttachedResources(prompt, said, {m.written for m in found}, {})
    attachments, images = list(prompt.attachments), list(prompt.images)
    problems: list[str] = []
    taken: set[str] = set()
    unknown = {}
    for mention in found:
        if mention.server not in servers:
            unknown[mention.written] = _unknown_server(mention, servers)
            continue
        taken.add(mention.written)
        uri = _spelling(mention, source)
        label = f"{mention.server}:{uri}"
        if any(a.kind == "resource" and a.label == label for a in attachments):
            continue
        try:
            result = await source.read(mention.server, uri)
        except AgentError as e:
            problems.append(f"@{label} is not attached: {e}")
            continue
        text = cap_for_model(result.text, MODEL_RESULT_CAP)  # as a file's is
        attachments.append(Attachment("resource", label, text))
        images += [_named(image, label) for image in result.images]
    attached = replace(prompt, attachments=tuple(attachments), images=tuple(images))
    return AttachedResources(attached, problems, taken, unknown)


def not_files(unknown: dict[str, str], prompt: Prompt) -> list[str]:
    """What to say of the mentions naming no server (`unknown`) that no file's path
    attached either: `@name:scheme:…` may still be a file's name."""
    found = {a.label for a in prompt.attachments} | {image.name for image in prompt.images}
    return [
        said
        for written, said in unknown.items()
        if written not in found and written.rstrip(TRAILING) not in found
    ]


def _unknown_server(mention: ResourceMention, servers: Collection[str]) -> str:
    names = ", ".join(sorted(servers)) or "none"
    return (
        f"@{mention.written} is not attached: there is no MCP server {mention.server!r} "
        f"configured (the configured ones: {names}) — check the name with `agent mcp list`."
    )


def _spelling(mention: ResourceMention, source: ResourceSource) -> str:
    """The URI as written when its server listed it so, else without the punctuation that
    may follow it in a sentence (`see @docs:note://a.`)."""
    listed = (source.listed() or {}).get(mention.server, ())
    if any(entry.uri == mention.uri for entry in listed):
        return mention.uri
    return mention.uri.rstrip(TRAILING) or mention.uri


def _named(image: Image, label: str) -> Image:
    return image if image.name else replace(image, name=label)
