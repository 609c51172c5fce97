"""A background command is confined like any command, and ends with the session or the
agent, in each sandbox."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from agent_cli.tools.background import BackgroundShells, shell_output
from agent_cli.tools.base import ToolContext
from agent_cli.tools.shell import exec_shell_command
from agent_cli.tools.workspace import Workspace
from tests.sandbox.conftest import make_sandbox
from tests.support.processes import group_members
from tests.support.waiting import GENEROUS, eventually_sync


async def test_a_background_command_is_confined_and_ended(kind: str, tmp_path: Path, outside):
    shells = BackgroundShells()
    ctx = ToolContext(Workspace(tmp_path), sandbox=make_sandbox(kind), shells=shells)
    command = (
        f"echo inside > here.txt; echo out > {outside}/escaped.txt; "
        "echo wrote; sleep 100 & sleep 100"
    )
    try:
        started = await exec_shell_command.run(ctx, {"command": command, "background": True})
        assert started.text.startswith("Started bg1"), started.text
        job = shells.get("bg1")
        assert job is not None
        seen = started.text
        for _ in range(10):
            if "wrote" in seen:
                break
            seen += (await shell_output.run(ctx, {"id": "bg1", "wait": 30})).text
        assert "wrote" in seen
        assert (tmp_path / "here.txt").read_text() == "inside\n"
        assert not (outside / "escaped.txt").exists()
        pgid = job.process.pid
        assert group_members(pgid) and working_in(tmp_path)
    finally:
        await shells.aclose()
    assert group_members(pgid) == [] and not working_in(tmp_path)
    assert job.exited


def test_a_sandboxed_background_command_dies_with_a_killed_agent(kind: str, tmp_path: Path):
    script = textwrap.dedent(
        f"""
        import asyncio, os, signal, sys
        from pathlib import Path
        from agent_cli.sandbox.launch import Sandbox, SandboxConfig
        from agent_cli.tools.background import BackgroundShells
        from agent_cli.tools.base import ToolContext
        from agent_cli.tools.shell import exec_shell_command
        from agent_cli.tools.workspace import Workspace

        async def main():
            shells = BackgroundShells()
            sandbox = Sandbox(SandboxConfig(mode={kind!r}))
            ctx = ToolContext(Workspace(Path(sys.argv[1])), sandbox=sandbox, shells=shells)
            command = "sleep 100 & sleep 100"
            await exec_shell_command.run(ctx, {{"command": command, "background": True}})
            print(shells.get("bg1").process.pid, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

        asyncio.run(main())
        """
    )
    agent = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert agent.returncode == -signal.SIGKILL, agent.stderr
    pgid = int(agent.stdout.strip())
    eventually_sync(
        lambda: group_members(pgid) == [], "the sandboxed command's group ended", GENEROUS
    )
    eventually_sync(lambda: not working_in(tmp_path), "no process of it is left", GENEROUS)


def working_in(tmp_path: Path) -> bool:
    """Whether a process still runs with the test's workspace as its folder."""
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if Path(proc / "cwd").resolve() == tmp_path.resolve():
                    return True
            except OSError:
                continue
    return False
