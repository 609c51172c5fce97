"""Whether a failed command was stopped by the sandbox, read from what it printed.

A command does not say "the sandbox refused me"; it says what the system call
answered. These are the sentences libc, Python, Node, curl and git print for
the refusals the sandbox makes. Only a command that failed is looked at, and a
match offers a choice (run it again outside), so a false match costs a card.
"""

from __future__ import annotations

import re

_SIGNS = (
    (r"Read-only file system|EROFS", "a write outside the folders it may change"),
    (
        r"Network is unreachable|ENETUNREACH|Temporary failure in name resolution|"
        r"Could not resolve host|Name or service not known|EAI_AGAIN|getaddrinfo ENOTFOUND|"
        r"Failed to establish a new connection|Could not resolve hostname|"
        r"No address associated with hostname",
        "the network",
    ),
    (r"Operation not permitted|EPERM", "a host socket or a system call the sandbox refuses"),
)
_LANDLOCK_SIGNS = (
    (r"Permission denied|EACCES", "a file or a connection outside what the sandbox allows"),
)
_LOOPBACK_SIGNS = ((r"Connection refused|ECONNREFUSED", "the network"),)


def stopped_by(output: str, exit_code: int | None, kind: str, network: bool) -> str:
    """What the sandbox probably stopped ("" when the failure looks like the command's own)."""
    if exit_code == 0:
        return ""
    signs = list(_SIGNS)
    if kind == "landlock":
        signs += _LANDLOCK_SIGNS
    if not network:
        signs += _LOOPBACK_SIGNS  # nothing listens in the sandbox's own network
    found = [what for pattern, what in signs if re.search(pattern, output)]
    return ", ".join(dict.fromkeys(found))
