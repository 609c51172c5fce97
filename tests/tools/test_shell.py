"""exec_shell_command with real subprocesses: output, limits, process groups, env."""

from __future__ import annotations

import asyncio
import fcntl
import os
import subprocess
from pathlib import Path

import pytest

from agent_cli.tools.base import ToolContext
from agent_cli.tools.environment import EnvironmentPolicy
from agent_cli.tools.shell import (
    SHELL_MAX_OUTPUT,
    SHELL_MAX_TIMEOUT,
    exec_shell_command,
    exit_code,
    scrubbed_env,
)
from agent_cli.tools.workspace import Workspace
from tests.support.waiting import eventually, within

# A command whose group holds a background child and a grandchild; it writes its
# process group id (the shell's pid: it leads its own session) to pgid.txt.
SPAWNER = "echo $$ > pgid.txt; sleep 100 & (sleep 100 & wait) & echo started; sleep 100"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(Workspace(tmp_path))


async def run(ctx: ToolContext, command: str, **args: object):
    return await exec_shell_command.run(ctx, {"command": command, **args})


def live_members(pgid: int) -> list[str]:
    """Processes of the group that are not zombies.

    os.killpg(pgid, 0) is not enough here: an init that does not reap orphans
    (as in some containers) leaves killed processes as zombies, which still
    "exist" for kill(2) although nothing runs.
    """
    table = subprocess.run(["ps", "-eo", "pgid=,stat=,args="], capture_output=True, text=True)
    rows = [line.split(None, 2) for line in table.stdout.splitlines()]
    return [row[2] for row in rows if int(row[0]) == pgid and not row[1].startswith("Z")]


def group_of(tmp_path: Path) -> int:
    return int((tmp_path / "pgid.txt").read_text())


# ------------------------------------------------------------------ results


def test_schema_and_title() -> None:
    params = exec_shell_command.parameters
    assert params["required"] == ["command"]
    assert params["properties"]["timeout"]["default"] == 10
    assert params["properties"]["max_output_size"]["default"] == SHELL_MAX_OUTPUT == 12 * 1024
    assert exec_shell_command.effect == "exec"
    assert exec_shell_command.title({"command": "pytest -q\nmore"}) == "Run pytest -q"
    long = exec_shell_command.title({"command": "x" * 200})
    assert len(long) <= 65 and long.endswith("…")


async def test_output_and_exit_code(ctx: ToolContext) -> None:
    result = await run(ctx, "echo out; echo err >&2; exit 3")
    assert result.text == "out\nerr\n[exit code: 3]"
    assert not result.is_error


async def test_no_output_still_reports_the_exit_code(ctx: ToolContext) -> None:
    assert (await run(ctx, "true")).text == "[exit code: 0]"


async def test_runs_in_the_workspace_with_no_stdin(ctx: ToolContext, tmp_path: Path) -> None:
    result = await run(ctx, "pwd; cat; echo done")
    assert result.text == f"{tmp_path}\ndone\n[exit code: 0]"


async def test_output_is_capped_keeping_head_and_tail(ctx: ToolContext) -> None:
    result = await run(ctx, "seq 1 100000")
    text = result.text
    assert text.startswith("1\n2\n3\n")
    assert text.endswith("99999\n100000\n[exit code: 0]")
    assert "bytes of output cut here" in text
    assert len(text.encode()) < SHELL_MAX_OUTPUT + 200


async def test_max_output_size_is_honoured_and_bounded(ctx: ToolContext) -> None:
    small = await run(ctx, "seq 1 1000", max_output_size=100)
    assert len(small.text.encode()) < 200
    big = await run(ctx, "seq 1 100000", max_output_size=10**9)
    assert len(big.text.encode()) < SHELL_MAX_OUTPUT + 200


async def test_cut_output_stays_valid_utf8(ctx: ToolContext) -> None:
    result = await run(ctx, "for i in $(seq 1 3000); do printf 'é€'; done", max_output_size=101)
    assert "\ufffd" not in result.text
    head, rest = result.text.split("[...")
    tail = rest.split("]\n", 1)[1].removesuffix("\n[exit code: 0]")
    assert set(head.strip()) <= {"é", "€"} and head.strip()
    assert set(tail) <= {"é", "€"} and tail


# ------------------------------------------------------------------ process groups


async def test_timeout_kills_the_whole_group(ctx: ToolContext, tmp_path: Path) -> None:
    result = await within(run(ctx, SPAWNER, timeout=1))  # not the 100 s of its sleeps
    assert result.is_error
    assert result.text == "started\n[timed out after 1 s; the command's processes were killed]"
    assert live_members(group_of(tmp_path)) == []


async def test_processes_ignoring_sigterm_get_sigkill(ctx: ToolContext, tmp_path: Path) -> None:
    result = await run(ctx, "echo $$ > pgid.txt; trap '' TERM; sleep 100 & sleep 100", timeout=1)
    assert "timed out" in result.text
    assert live_members(group_of(tmp_path)) == []


async def test_cancellation_kills_the_whole_group_and_propagates(
    ctx: ToolContext, tmp_path: Path
) -> None:
    # The shell writes its pgid only once the tool has read a few MiB of its output (more
    # than any pipe holds): by then the tool is past starting it, waiting for it to end.
    task = asyncio.create_task(run(ctx, f"head -c {4 << 20} /dev/zero; {SPAWNER}", timeout=60))
    pgid_file = tmp_path / "pgid.txt"
    await eventually(lambda: pgid_file.exists() and pgid_file.read_text(), "the shell's pgid")
    pgid = group_of(tmp_path)
    await eventually(lambda: len(live_members(pgid)) >= 3, "the shell and its two sleeps")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await within(task)
    # SIGKILL is sent as the cancel goes through; the processes end a moment later.
    await eventually(lambda: live_members(pgid) == [], "the group to end")


async def test_a_stop_while_the_command_starts_still_ends_what_it_started(
    ctx: ToolContext, tmp_path: Path
) -> None:
    """Cancelled at once, while asyncio is still starting the shell: once the cancel has
    gone through, nothing the shell started holds its lock (the stop waits for the start
    to finish and then ends the whole group, not only the shell)."""
    lock = tmp_path / "lock"
    for _ in range(20):
        task = asyncio.create_task(run(ctx, f"flock {lock} sleep 600 & sleep 600", timeout=60))
        await asyncio.sleep(0)  # the call is under way, the process not yet started
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await within(task)
        with open(lock, "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if a sleep holds it
            fcntl.flock(handle, fcntl.LOCK_UN)


async def test_background_child_holding_the_pipe_does_not_hang(
    ctx: ToolContext, tmp_path: Path
) -> None:
    result = await within(run(ctx, "echo $$ > pgid.txt; sleep 100 & echo bg", timeout=30))
    # Not held until the timeout either: that would end in "timed out", not the exit code.
    assert result.text.startswith("bg\n") and result.text.endswith("[exit code: 0]")
    assert live_members(group_of(tmp_path)) == []


async def test_timeout_is_clamped(ctx: ToolContext) -> None:
    result = await within(run(ctx, "sleep 100", timeout=0))
    assert "timed out after 1 s" in result.text
    assert SHELL_MAX_TIMEOUT == 120


# ------------------------------------------------------------------ environment


def test_scrubbed_env_drops_secret_looking_names() -> None:
    env = {"PATH": "/bin", "MY_API_KEY": "k", "github_token": "t", "DB_PASSWORD": "p",
           "AWS_SECRET_ACCESS_KEY": "s", "HOME": "/h", "KEYBOARD": "x"}  # fmt: skip
    assert scrubbed_env(env) == {"PATH": "/bin", "HOME": "/h"}
    assert scrubbed_env(env, patterns=("path",)) == {k: v for k, v in env.items() if k != "PATH"}


async def test_command_gets_the_context_env_without_secrets(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "MY_API_KEY": "sk-1", "VISIBLE": "yes"}
    ctx = ToolContext(Workspace(tmp_path), env=env)
    result = await run(ctx, "env")
    assert "VISIBLE=yes" in result.text and "PATH=" in result.text
    assert "MY_API_KEY" not in result.text and "sk-1" not in result.text


async def test_empty_context_env_falls_back_to_the_process_env(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TEST_VISIBLE", "1")
    monkeypatch.setenv("AGENT_TEST_SECRET", "hidden")
    result = await run(ctx, "env")
    assert "AGENT_TEST_VISIBLE=1" in result.text
    assert "AGENT_TEST_SECRET" not in result.text and "PATH=" in result.text


async def test_command_gets_the_environment_the_context_policy_allows(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": "/h", "AWS_PROFILE": "dev", "MY_API_KEY": "sk-1"}
    policy = EnvironmentPolicy(inherit="core", set={"CI": "1"})
    ctx = ToolContext(Workspace(tmp_path), env=env, env_policy=policy)
    lines = (await run(ctx, "env")).text.splitlines()
    assert "HOME=/h" in lines and "CI=1" in lines
    assert not any(line.startswith(("AWS_PROFILE=", "MY_API_KEY=")) for line in lines)

    loosened = EnvironmentPolicy(ignore_default_excludes=True, exclude=("aws_*",))
    ctx = ToolContext(Workspace(tmp_path), env=env, env_policy=loosened)
    lines = (await run(ctx, "env")).text.splitlines()
    assert "MY_API_KEY=sk-1" in lines and not any(x.startswith("AWS_PROFILE=") for x in lines)


async def test_the_exit_code_is_the_processes_not_a_line_of_its_output(ctx: ToolContext) -> None:
    from agent_cli.engine.items import ToolItem
    from agent_cli.frontends.outcome import outcome

    spoof = "echo '[exit code: 0]'; sleep 60"
    timed_out = await exec_shell_command.run(ctx, {"command": spoof, "timeout": 1})
    assert timed_out.exit_code is None and exit_code(timed_out.text) is None
    failed = await exec_shell_command.run(ctx, {"command": "echo '[exit code: 0]'; exit 5"})
    assert failed.exit_code == 5 and exit_code(failed.text) == 5
    item = ToolItem("exec_shell_command", "c1", state="done", result=failed.text + "\nmore")
    item.exit_code = failed.exit_code
    assert outcome(item).text == "exit 5" and outcome(item).failed  # recorded wins
    stored = ToolItem("exec_shell_command", "c2", state="done", result="out\n[exit code: 3]")
    assert stored.command_exit() == 3  # an item stored before the code was recorded
