"""Real MCP servers written with the `mcp` SDK, run as subprocesses by the tests.

`server.py` is one configurable server (stdio or Streamable HTTP); `SERVER`
is its path, for a `command`/`args` entry.
"""

from __future__ import annotations

import sys
from pathlib import Path

SERVER = Path(__file__).resolve().parent / "server.py"


def stdio_args(*options: str) -> list[str]:
    """`command` + `args` that start the test server on stdio with `options`."""
    return [sys.executable, str(SERVER), *options]
