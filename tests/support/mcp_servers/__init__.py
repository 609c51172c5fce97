"""Real MCP servers written with the `mcp` SDK, run as subprocesses by the tests.

`server.py` is one configurable server (stdio, Streamable HTTP or SSE); `SERVER`
is its path, for a `command`/`args` entry. `oauth_server.py` is a Streamable HTTP
server behind OAuth (its own authorization server too), `OAUTH_SERVER`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SERVER = Path(__file__).resolve().parent / "server.py"
OAUTH_SERVER = Path(__file__).resolve().parent / "oauth_server.py"


def stdio_args(*options: str) -> list[str]:
    """`command` + `args` that start the test server on stdio with `options`."""
    return [sys.executable, str(SERVER), *options]


def write_client_server(path: Path, name: str = "docs") -> None:
    """An mcp.json at `path` (the person's or a workspace's) with only the test server, as
    `name`, with its client features (`--client`: prompts, resources, forms)."""
    command, *args = stdio_args("--name", name, "--client")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": {name: {"command": command, "args": args}}}))
