"""The OAuth-protected MCP server (tests/support/mcp_servers/oauth_server.py) on loopback,
and the environment a login in a test needs: `$BROWSER` set to the browser stand-in."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.mcp_servers import OAUTH_SERVER

BROWSER = Path(__file__).resolve().parent / "browser.py"
START_TIMEOUT = 30.0


@dataclass
class Guarded:
    """A running OAuth-protected server: its MCP address and what it recorded."""

    url: str
    log: Path

    def grants(self) -> list[dict]:
        return [e for e in self.entries() if "grant" in e]

    def bearers(self) -> list[str]:
        return [e["bearer"] for e in self.entries() if "bearer" in e]

    def entries(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]


@contextmanager
def guarded_server(
    folder: Path,
    token_seconds: int = 3600,
    revoke_at_call: bool = False,
    client: str = "",
    auth_methods: str = "",
) -> Iterator[Guarded]:
    """The server on a free port; `revoke_at_call`: its first tools/call revokes every token
    and is answered 401; `client` (ID:SECRET:METHOD:CALLBACK_PORT) a client registered
    beforehand (several: separated by commas), `auth_methods` (M,M) the token endpoint auth
    methods its metadata says (oauth_server.py)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log, output = folder / "oauth.jsonl", folder / "oauth-server.out"
    with output.open("w") as sink:
        process = subprocess.Popen(
            [
                sys.executable,
                str(OAUTH_SERVER),
                "--port",
                str(port),
                "--log",
                str(log),
                "--token-seconds",
                str(token_seconds),
                *(["--revoke-at-call"] if revoke_at_call else []),
                *(["--client", client] if client else []),
                *(["--auth-methods", auth_methods] if auth_methods else []),
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            with socket.socket() as attempt:
                if attempt.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the OAuth server did not start: {output.read_text()}")
            time.sleep(0.05)
        yield Guarded(f"http://127.0.0.1:{port}/mcp", log)
    finally:
        process.kill()
        process.wait()


def browser_env(folder: Path) -> dict[str, str]:
    """`$BROWSER` as a person who says yes to every login, and where its visits are written."""
    installed = subprocess.run(
        [sys.executable, str(BROWSER), "--install", str(folder)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return {"BROWSER": installed.stdout.strip(), "BROWSER_VISITS": str(folder / "visits.txt")}


def visits(folder: Path) -> list[str]:
    file = folder / "visits.txt"
    return file.read_text().splitlines() if file.exists() else []
