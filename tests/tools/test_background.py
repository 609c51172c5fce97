"""Background commands (issue 16): started, read twice, killed, and none left behind.

Real processes; time is driven by files the test writes and by waits that return as
soon as the output comes (a generous bound only for a machine that is very slow).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_cli import wiring
from agent_cli.engine.items import Conversation, ToolItem
from agent_cli.frontends.interactive import Interactive
from agent_cli.providers.scripted import answer
from agent_cli.settings import load_settings
from agent_cli.tools.background import MAX_RUNNING, BackgroundShells, shell_kill, shell_output
from agent_cli.tools.base import ToolContext
from agent_cli.tools.shell import exec_shell_command
from agent_cli.tools.workspace import Workspace
from tests.support.fake_openai import FakeOpenAI, text, tool_calls
from tests.support.processes import group_members
from tests.support.sessions import make_session
from tests.support.waiting import GENEROUS, eventually_sync

WAIT = 30  # shell_output's longest wait: it returns as soon as there is output


@pytest.fixture
async def shells():
    made = BackgroundShells()
    yield made
    await made.aclose()


@pytest.fixture
def fake():
    with FakeOpenAI(models=["m1"]) as server:
        yield server


@pytest.fixture
def ctx(tmp_path: Path, shells: BackgroundShells) -> ToolContext:
    return ToolContext(Workspace(tmp_path), shells=shells)


async def start(ctx: ToolContext, command: str) -> str:
    result = await exec_shell_command.run(ctx, {"command": command, "background": True})
    assert not result.is_error, result.text
    return result.text


async def read(ctx: ToolContext, job: str, wait: int = WAIT) -> str:
    return (await shell_output.run(ctx, {"id": job, "wait": wait})).text


async def read_until(ctx: ToolContext, job: str, wanted: str, seen: str = "") -> str:
    """Read until `wanted` has come (in `seen`, what came before, or in a read)."""
    for _ in range(20):  # each read waits until output comes, or the command's end
        if wanted in seen:
            return seen
        seen += await read(ctx, job)
    raise AssertionError(f"{wanted!r} never came; read: {seen!r}")


async def test_a_background_command_is_read_twice_then_killed(ctx, shells, tmp_path):
    command = (
        "echo first; while [ ! -f go ]; do sleep 0.05; done; echo second; "
        "sleep 100 & (sleep 100 & wait) & wait"
    )
    started = await start(ctx, command)
    assert started.startswith("Started bg1 in the background.")
    job = shells.get("bg1")
    assert job is not None and job.state == "running"
    first = await read_until(ctx, "bg1", "first", started)
    assert "second" not in first
    assert "[bg1: running]" in await read(ctx, "bg1", wait=0)  # nothing new: said so
    (tmp_path / "go").touch()
    assert "second" in await read_until(ctx, "bg1", "second")
    assert len(group_members(job.process.pid)) >= 3  # the shell, and the sleeps it started
    killed = (await shell_kill.run(ctx, {"id": "bg1"})).text
    assert killed.startswith("bg1 ended.") and "[bg1: killed by SIGTERM]" in killed
    assert group_members(job.process.pid) == []
    again = (await shell_kill.run(ctx, {"id": "bg1"})).text
    assert again.startswith("bg1 had ended already.")


async def test_output_is_kept_within_the_cap_until_read(ctx, shells, tmp_path):
    flood = "head -c 200000 /dev/zero | tr '\\0' x; echo; echo done"
    await start(ctx, f"while [ ! -f go ]; do sleep 0.05; done; {flood}")
    job = shells.get("bg1")
    assert job is not None
    (tmp_path / "go").touch()
    await asyncio.wait_for(job.tasks[0], GENEROUS)  # read to its end, and nothing read yet
    seen = await read(ctx, "bg1")
    assert "bytes of output cut here" in seen and len(seen) < 20_000
    assert seen.endswith("done\n[bg1: exited with code 0]")


async def test_a_command_that_ends_says_its_exit_code(ctx):
    started = await start(ctx, "echo bye; exit 3")
    seen = await read_until(ctx, "bg1", "exited with code 3", started)
    assert "bye" in seen


async def test_ids_count_up_and_an_unknown_one_is_named(ctx):
    await start(ctx, "sleep 100")
    await start(ctx, "sleep 100")
    unknown = await shell_output.run(ctx, {"id": "bg9"})
    assert unknown.is_error
    assert unknown.text == (
        "No background command is called 'bg9' in this session (they end with the session); "
        "the ones there are: bg1, bg2."
    )


async def test_no_more_than_the_limit_run_at_once(ctx, shells):
    for _ in range(MAX_RUNNING):
        await start(ctx, "sleep 100")
    refused = await exec_shell_command.run(ctx, {"command": "sleep 1", "background": True})
    assert refused.is_error and "end one with shell_kill" in refused.text
    await shell_kill.run(ctx, {"id": "bg1"})
    assert (await start(ctx, "sleep 100")).startswith(f"Started bg{MAX_RUNNING + 1} ")


async def test_closing_the_shells_ends_every_group_and_no_new_one_starts(ctx, shells):
    await start(ctx, "sleep 100 & sleep 100 & wait")
    await start(ctx, "trap '' TERM; sleep 100")  # ignores SIGTERM: SIGKILL after the grace
    groups = [job.process.pid for job in shells.all()]
    assert all(group_members(pgid) for pgid in groups)
    await shells.aclose()
    assert [group_members(pgid) for pgid in groups] == [[], []]
    refused = await exec_shell_command.run(ctx, {"command": "sleep 1", "background": True})
    assert refused.is_error and "session is ending" in refused.text


async def test_the_prompt_note_lists_the_running_ones(ctx, shells):
    assert shells.prompt_note() == ""
    await start(ctx, "sleep 100")
    await start(ctx, "sleep 200\n# a second line")
    note = shells.prompt_note()
    assert "- bg1: `sleep 100`" in note and "- bg2: `sleep 200`" in note
    await shell_kill.run(ctx, {"id": "bg1"})
    assert "bg1" not in shells.prompt_note() and "bg2" in shells.prompt_note()


async def test_without_a_session_background_is_refused(tmp_path):
    result = await exec_shell_command.run(
        ToolContext(Workspace(tmp_path)), {"command": "sleep 1", "background": True}
    )
    assert result.is_error and result.text == "Background commands are not available here."


def test_a_background_command_dies_with_a_killed_agent(tmp_path: Path):
    """kill -9 of the agent: nobody ends the session, the kernel ends the command."""
    script = textwrap.dedent(
        """
        import asyncio, os, signal, sys
        from pathlib import Path
        from agent_cli.tools.background import BackgroundShells
        from agent_cli.tools.base import ToolContext
        from agent_cli.tools.shell import exec_shell_command
        from agent_cli.tools.workspace import Workspace

        async def main():
            shells = BackgroundShells()
            ctx = ToolContext(Workspace(Path(sys.argv[1])), shells=shells)
            await exec_shell_command.run(ctx, {"command": "sleep 100", "background": True})
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
    eventually_sync(lambda: group_members(pgid) == [], "the command ended", GENEROUS)


# ------------------------------------------------------------------ through a session


async def test_the_model_starts_reads_and_is_told_of_it_next_message(
    fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    settings = load_settings(tmp_path)
    start_args = json.dumps({"command": "echo serving; sleep 100", "background": True})
    fake.add(
        tool_calls(("c1", "exec_shell_command", start_args)),
        tool_calls(("c2", "shell_output", json.dumps({"id": "bg1", "wait": WAIT}))),
        text("It runs."),
        text("Still there."),
    )
    route = wiring.Route(settings)
    conversation = Conversation(workspace=str(tmp_path), mode="full")
    session = wiring.routed_session(settings, conversation, None, route)
    try:
        await session.send("start the server")
        tools = [item for item in conversation.items if isinstance(item, ToolItem)]
        assert [t.tool for t in tools] == ["exec_shell_command", "shell_output"]
        assert tools[0].result.startswith("Started bg1")
        assert "serving" in tools[0].result + tools[1].result
        assert session.shells is not None
        pgid = session.shells.all()[0].process.pid
        await session.send("is it up?")
        system = fake.requests[-1]["messages"][0]["content"]
        assert "Background commands running in this session" in system
        assert "- bg1: `echo serving; sleep 100`" in system
        interactive = Interactive(session, None, lambda _c: session)
        listed = await interactive.handle("/shells")
        assert "| `bg1` | running | `echo serving; sleep 100` | serving |" in listed.text
        assert listed.action == "pick_shell"
    finally:
        await session.aclose()
        await route.aclose()
    assert group_members(pgid) == []  # the session's end ended it


async def test_shells_kill_ends_one_and_says_so(tmp_path: Path, shells, ctx):
    session, _, _ = make_session(tmp_path, [answer("Hi.")])
    session.shells = shells
    await start(ctx, "sleep 100")
    interactive = Interactive(session, None, lambda _c: session)
    assert (await interactive.handle("/shells kill bg1")).text == "`bg1` ended: killed by SIGTERM."
    assert (await interactive.handle("/shells kill bg7")).level == "warn"
    assert (await interactive.handle("/shells stop")).text.startswith("Use `/shells`")
    listed = await interactive.handle("/shells")
    assert listed.action == "" and "killed by SIGTERM" in listed.text
