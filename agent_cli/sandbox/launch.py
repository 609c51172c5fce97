"""The sandbox in force, chosen once, and how one process is started inside it.

`choose(config)` picks the mechanism once per process; `Sandbox.launch` says
how to start one command inside it (the argv, what runs in the child before
exec, the descriptors it keeps) and what to do after it ended. The shell tool,
MCP stdio servers and language servers start their processes through it.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from functools import cache, cached_property
from pathlib import Path
from typing import Any, NamedTuple

from agent_cli.sandbox.plan import MODES, Plan, SandboxConfig, make_plan

__all__ = ["MODES", "Launch", "Mechanism", "Plan", "Sandbox", "SandboxConfig", "choose"]

LANDLOCK_NETWORK_ABI = 4  # TCP bind/connect rules

KEPT_NOTE = "[the sandbox keeps"  # how a note the sandbox adds after a command begins


class Launch:
    """How to start one process in the sandbox. When the `launch` block ends, however it
    ends (a stop included), what must follow the process runs, and `notes` says what
    the person and the model should know of it."""

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        preexec_fn: Callable[[], None] | None = None,
        pass_fds: tuple[int, ...] = (),
    ) -> None:
        self.argv = argv
        self.env = env
        self.preexec_fn = preexec_fn
        self.pass_fds = pass_fds
        self.notes: list[str] = []
        self._after: list[Callable[[], list[str]]] = []

    def _finish(self) -> None:
        while self._after:
            self.notes += self._after.pop()()


class Mechanism(NamedTuple):
    kind: str  # "bwrap", "landlock" or "none"
    detail: str = ""  # bwrap's version, Landlock's ABI
    reason: str = ""  # for "none": why there is no sandbox
    path: str = ""  # bwrap's executable


class Sandbox:
    """The confinement of a session's commands. Which mechanism is in force is found out
    at the first use (it starts bwrap once), not when the session starts."""

    def __init__(self, config: SandboxConfig | None = None, off_by: str = "") -> None:
        self.config = config or SandboxConfig()
        self.off_by = off_by  # a flag that turned it off ("--sandbox off")

    @cached_property
    def mechanism(self) -> Mechanism:
        return choose(self.config, self.off_by)

    @property
    def kind(self) -> str:
        return self.mechanism.kind

    @property
    def active(self) -> bool:
        return self.kind != "none"

    def plan(self, workspace: Path, env: Mapping[str, str], write: bool = True) -> Plan:
        plan = make_plan(self.config, workspace, env)
        if self.kind == "landlock":
            plan = plan._replace(tmp=_private_tmp())
        return plan if write else plan.read_only()

    def summary(self) -> str:
        """One line: the mechanism and what it allows."""
        kind, detail, reason, _ = self.mechanism
        if kind == "none":
            return f"sandbox: none — {reason}; commands run unconfined, approvals as strict"
        network = "on" if self.config.network else "off"
        if kind == "bwrap":
            name, kept, tmp, extra = f"bwrap {detail}", "read-only", "a private /tmp", ""
        else:
            name, kept, tmp = f"landlock ABI {detail}", "changes undone", "a private TMPDIR"
            extra = "; no pid namespace where user namespaces are off"
            if int(detail) < LANDLOCK_NETWORK_ABI and not self.config.network:
                extra += "; IP sockets refused by seccomp (Landlock ABI < 4 has no TCP rules)"
        writes = [f"workspace (.git/config, .git/hooks, .agent: {kept})", tmp]
        writes += list(self.config.writable)
        return (
            f"sandbox: {name} — writes: {', '.join(writes)}; network: {network}; "
            f"secret stores read as empty; host unix sockets refused{extra}"
        )

    def wrap(self, argv: list[str], workspace: Path, network: bool = False) -> list[str]:
        """`argv` as a command that starts it in this sandbox by itself, for a program
        spawned by someone else (`run.py`); the network open only when `network`."""
        import json
        import sys

        spec = {
            "kind": self.kind,
            "writable": list(self.config.writable),
            "deny_read": list(self.config.deny_read),
            "network": network,
            "workspace": str(workspace),
        }
        return [sys.executable, "-m", "agent_cli.sandbox.run", json.dumps(spec), "--", *argv]

    @contextlib.contextmanager
    def launch(self, argv: list[str], plan: Plan, env: Mapping[str, str]) -> Iterator[Launch]:
        """Start `argv` inside the sandbox (`kind` must not be "none")."""
        from agent_cli.sandbox import seccomp

        program = None
        if _filters():
            inet = self.kind == "landlock" and not plan.network  # Landlock filters TCP only
            old = inet and int(self.mechanism.detail) < LANDLOCK_NETWORK_ABI
            program = seccomp.socket_filter(deny_inet=inet, deny_tcp=old)
        kind, detail, _, path = self.mechanism
        assert kind != "none", "launch needs a sandbox"
        if kind == "bwrap":
            starting = _bwrap_launch(path, argv, plan, env, program)
        else:
            starting = _landlock_launch(int(detail), argv, plan, env, program)
        with starting as launch:
            try:
                yield launch
            finally:
                launch._finish()


@cache
def _filters() -> bool:
    from agent_cli.sandbox import seccomp

    return seccomp.supported()


@contextlib.contextmanager
def _bwrap_launch(
    path: str, argv: list[str], plan: Plan, env: Mapping[str, str], program: bytes | None
) -> Iterator[Launch]:
    from agent_cli.sandbox import bwrap

    fd = None
    if program is not None:
        fd = os.memfd_create("agent-seccomp", 0)
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    launch = Launch(
        bwrap.arguments(path, plan, fd) + argv,
        {**env, "TMPDIR": "/tmp"},
        pass_fds=(fd,) if fd is not None else (),
    )
    launch._after.append(lambda: bwrap.cleanup(plan))
    try:
        yield launch
    finally:
        if fd is not None:
            os.close(fd)


@contextlib.contextmanager
def _landlock_launch(
    version: int, argv: list[str], plan: Plan, env: Mapping[str, str], program: bytes | None
) -> Iterator[Launch]:
    from agent_cli.sandbox import guard

    child = _landlock_child(version, plan, program)
    before = guard.snapshot(plan.protected + plan.missing_protected) if plan.write else {}
    launch = Launch(argv, {**env, "TMPDIR": str(plan.tmp)}, preexec_fn=child)

    def put_back() -> list[str]:
        changed = guard.restore(before)
        if not changed:
            return []
        names = ", ".join(str(p.relative_to(plan.workspace)) for p in changed)
        return [f"{KEPT_NOTE} {names} as it was: the command's changes there were undone]"]

    launch._after.append(put_back)
    yield launch


@functools.lru_cache(maxsize=16)
def _landlock_child(version: int, plan: Plan, program: bytes | None) -> Any:
    """The child's setup for a plan: the ruleset (a walk of the root folder's entries) is
    built once and applied by every command with the same plan."""
    from agent_cli.sandbox import landlock

    return landlock.Child(landlock.Ruleset(plan, version), program, plan.network)


@cache
def _private_tmp() -> Path:
    """Landlock's stand-in for a private /tmp: one folder per process, removed at exit."""
    folder = tempfile.mkdtemp(prefix="agent-sandbox-tmp-")
    atexit.register(shutil.rmtree, folder, True)
    return Path(folder)


def choose(config: SandboxConfig, forced_off: str = "") -> Mechanism:
    """The mechanism for `config.mode`; `forced_off` names who turned it off (a flag)."""
    if forced_off or config.mode == "off":
        why = forced_off or '[sandbox] mode = "off" in the user\'s config'
        return Mechanism("none", reason=f"turned off by {why}")
    if config.mode in ("auto", "bwrap"):
        from agent_cli.sandbox import bwrap

        found = bwrap.find()
        if found is not None:
            return Mechanism("bwrap", detail=found[1], path=found[0])
        if config.mode == "bwrap":
            return Mechanism("none", reason="bwrap is not installed or cannot make a sandbox here")
    from agent_cli.sandbox import landlock

    version = landlock.abi()
    if version >= 1:
        return Mechanism("landlock", detail=str(version))
    what = "bwrap is not installed and " if config.mode == "auto" else ""
    return Mechanism(
        "none",
        reason=f"{what}this kernel has no Landlock (install bubblewrap: apt-get install "
        "bubblewrap)",
    )
