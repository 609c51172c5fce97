"""A one-second proof that the sandbox in force holds: what must fail fails, what must
work works (`agent sandbox`)."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from agent_cli import paths
from agent_cli.sandbox.launch import Sandbox


class Check(NamedTuple):
    what: str
    passed: bool
    detail: str = ""


def self_test(sandbox: Sandbox, env: Mapping[str, str]) -> list[Check]:
    """Run a few commands in `sandbox` (it must be active) and say how each went."""
    base = paths.cache_dir()
    base.mkdir(parents=True, exist_ok=True)
    # Outside /tmp, which bubblewrap replaces: a write there would prove nothing.
    away = "/var/tmp" if str(base).startswith("/tmp/") and os.path.isdir("/var/tmp") else base
    with (
        tempfile.TemporaryDirectory(dir=base) as workspace,
        tempfile.TemporaryDirectory(dir=away) as outside,
        socket.socket() as listener,
    ):
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        probe = Path(outside) / "probe"
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), 1)"
        commands = {
            "write": "echo ok > inside && cat inside",
            "outside": f"echo x > {shlex.quote(str(probe))}",
            "connect": f"{shlex.quote(sys.executable)} -c {shlex.quote(connect)}",
        }
        done = {
            name: _run(sandbox, command, Path(workspace), env) for name, command in commands.items()
        }
        checks = [
            Check("a write in the workspace works", done["write"][0] == 0, done["write"][1]),
            Check(
                "a write outside the workspace is refused",
                not probe.exists() and done["outside"][0] != 0,
                done["outside"][1],
            ),
        ]
        if not sandbox.config.network:
            accepted = _accepted(listener)
            checks.append(
                Check(
                    "a connect to a loopback port is refused",
                    done["connect"][0] != 0 and accepted == 0,
                    f"{accepted} connection(s) reached the listener",
                )
            )
    return checks


def _run(
    sandbox: Sandbox, command: str, workspace: Path, env: Mapping[str, str]
) -> tuple[int, str]:
    plan = sandbox.plan(workspace, env)
    with sandbox.launch(["/bin/sh", "-c", command], plan, dict(env)) as launch:
        try:
            done = subprocess.run(
                launch.argv, env=launch.env, cwd=workspace, preexec_fn=launch.preexec_fn,
                pass_fds=launch.pass_fds, capture_output=True, text=True, timeout=10,
                start_new_session=True,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError) as e:
            return -1, str(e)
    return done.returncode, (done.stdout + done.stderr).strip()


def _accepted(listener: socket.socket) -> int:
    count = 0
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return count
        connection.close()
        count += 1
