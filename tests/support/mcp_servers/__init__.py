"""Real MCP servers written with the `mcp` SDK, run as subprocesses by the tests.

`server.py` is one configurable server (stdio, Streamable HTTP or SSE); `SERVER`
is its path, for a `command`/`args` entry. `oauth_server.py` is a Streamable HTTP
server behind OAuth (its own authorization server too), `OAUTH_SERVER`.
"""

from __future__ import annotations

import sys
from pathlib import Path

SERVER = Path(__file__).resolve().parent / "server.py"
OAUTH_SERVER = Path(__file__).resolve().parent / "oauth_server.py"


def stdio_args(*options: str) -> list[str]:
    """`command` + `args` that start the test server on stdio with `options`."""
    return [sys.executable, str(SERVER), *options]
