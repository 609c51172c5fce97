"""`python -m agent_cli.sandbox.run SPEC -- PROGRAM ARGS...`: start a long-lived program
(an MCP stdio server, a language server) in the sandbox, for a caller that cannot
pass a `preexec_fn` or descriptors (the `mcp` SDK spawns its servers itself).

SPEC is the JSON `Sandbox.spec()` wrote: the mechanism, the settings and the
workspace. The program inherits stdin and stdout (the protocol's pipes); this
process stays as its parent, passes on SIGTERM, SIGINT and SIGHUP, cleans up
after it and leaves with its exit status.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from agent_cli.sandbox.launch import Sandbox
from agent_cli.sandbox.plan import SandboxConfig


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m agent_cli.sandbox.run SPEC -- PROGRAM [ARGS...]", file=sys.stderr)
        return 2
    spec = json.loads(argv[0])
    config = SandboxConfig(
        mode=spec["kind"],
        writable=tuple(spec["writable"]),
        deny_read=tuple(spec["deny_read"]),
        network=spec["network"],
    )
    sandbox = Sandbox(config)
    if sandbox.kind != spec["kind"]:
        print(f"agent: the sandbox is not available: {sandbox.mechanism.reason}", file=sys.stderr)
        return 126  # never run unconfined what asked to be confined
    plan = sandbox.plan(Path(spec["workspace"]), os.environ)
    with sandbox.launch(argv[2:], plan, dict(os.environ)) as launch:
        child = subprocess.Popen(
            launch.argv, env=launch.env, preexec_fn=launch.preexec_fn, pass_fds=launch.pass_fds
        )

        def forward(signum: int, _frame: object) -> None:
            child.send_signal(signum)

        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, forward)
        code = child.wait()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
