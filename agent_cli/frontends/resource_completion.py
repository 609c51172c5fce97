"""What `@server:` completes: that MCP server's resources and resource templates.

Both interactive front ends ask here, with the listing the Session's resource source
kept (never a server: a key must not wait for one). A resource completes to
`@server:uri ` (the space ends the mention); a template to `@server:uri{name}` as it is
listed, for the person to fill in. `@do` also offers `@docs:` for a server whose name
it begins. No UI library here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from agent_cli.engine.resources import ResourceEntry

    Listing = Mapping[str, Sequence[ResourceEntry]]  # each server's, as last listed

__all__ = [
    "ResourceCandidate",
    "resource_candidates",
    "server_candidates",
    "split_query",
]

_QUERY = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.-]*):(\S*)")


class ResourceCandidate(NamedTuple):
    value: str  # what replaces the whole `@…` token
    label: str  # what a menu shows
    meta: str = ""  # the resource's name; "template" for a template


def split_query(query: str, listed: Listing | None) -> tuple[str, str] | None:
    """(server, the rest) when the text after `@` begins with a listed server's `name:`."""
    match = _QUERY.fullmatch(query)
    if match is None or not listed or match.group(1) not in listed:
        return None
    return match.group(1), match.group(2)


def resource_candidates(server: str, rest: str, listed: Listing) -> list[ResourceCandidate]:
    """The server's resources whose URI (or name) `rest` begins, then those holding it; in
    the server's order within each."""
    entries = list(listed.get(server, ()))
    wanted = rest.lower()
    first = [e for e in entries if e.uri.lower().startswith(wanted)]
    then = [e for e in entries if e not in first and _holds(e, wanted)]
    return [_candidate(e) for e in [*first, *then]]


def server_candidates(query: str, listed: Listing | None) -> list[ResourceCandidate]:
    """`@name:` for each server with resources whose name `query` begins (not yet typed
    out with its colon)."""
    if not query or ":" in query or not listed:
        return []
    return [
        ResourceCandidate(f"@{name}:", f"{name}:", f"{len(entries)} MCP resource(s)")
        for name, entries in sorted(listed.items())
        if entries and name.startswith(query)
    ]


def _holds(entry: ResourceEntry, wanted: str) -> bool:
    return wanted in entry.uri.lower() or wanted in entry.name.lower()


def _candidate(entry: ResourceEntry) -> ResourceCandidate:
    mention = f"{entry.server}:{entry.uri}"
    meta = "template" if entry.template else entry.name
    value = f"@{mention}" if entry.template else f"@{mention} "
    return ResourceCandidate(value, mention, meta)
