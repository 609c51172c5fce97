"""Real escapes tried through the real exec_shell_command, in each sandbox (SPEC §14).

Each attack is what a model told by a cloned repository's text would try: write
outside, read a key, reach the network or a host socket, leave a process
running, read the agent's environment, plant a hook. Each must fail, and the
ordinary work (git commit, pytest, pipes, exit codes) must still run.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_cli.tools.base import ToolContext
from agent_cli.tools.shell import exec_shell_command
from agent_cli.tools.workspace import Workspace
from tests.sandbox.conftest import make_sandbox

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- planted-secret-4711"
PY = shlex.quote(sys.executable)


@pytest.fixture
def home(outside: Path) -> Path:
    folder = outside / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_ed25519").write_text(SECRET)
    (folder / ".aws").mkdir()
    (folder / ".aws" / "credentials").write_text(SECRET)
    (folder / ".netrc").write_text(SECRET)
    (folder / ".gitconfig").write_text("[user]\n\tname = Sandboxed\n\temail = s@example.com\n")
    return folder


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def context(kind: str, workspace: Path, home: Path, **config) -> ToolContext:
    env = {**os.environ, "HOME": str(home)}
    return ToolContext(Workspace(workspace), env=env, sandbox=make_sandbox(kind, **config))


async def run(ctx: ToolContext, command: str, timeout: int = 30):
    return await exec_shell_command.run(ctx, {"command": command, "timeout": timeout})


# ------------------------------------------------------------------ writes


async def test_writes_outside_fail_every_way(kind, workspace, home, outside):
    ctx = context(kind, workspace, home)
    target = outside / "planted"
    (workspace / "sub").mkdir()
    attacks = [
        f"echo x > {target}",  # an absolute path
        f"cd sub && echo x > ../../../../../../../../..{target}",  # climbing with ..
        f"ln -s {outside} link && echo x > link/planted",  # a link made inside
        "echo x > ~/.bashrc",  # the home folder
        f"cp /bin/sh {outside}/sh",
        f"{PY} -c \"open('{target}', 'w').write('x')\"",
    ]
    for command in attacks:
        result = await run(ctx, command)
        assert "[exit code: 0]" not in result.text, command
        assert result.stopped, (command, result.text)
    assert not target.exists() and not (home / ".bashrc").exists()
    assert not (outside / "sh").exists()


async def test_the_workspace_and_tmp_stay_writable(kind, workspace, home):
    ctx = context(kind, workspace, home)
    command = (
        "echo hello > a.txt && mkdir -p d/e && mv a.txt d/e/b.txt && cat d/e/b.txt | tr a-z A-Z"
        ' && t=$(mktemp) && echo tmp > "$t" && cat "$t" && rm d/e/b.txt && rmdir d/e'
    )
    result = await run(ctx, command)
    assert result.text.endswith("[exit code: 0]"), result.text
    assert "HELLO\ntmp\n" in result.text
    assert not result.stopped


async def test_programs_on_path_under_tmp_still_run(kind, workspace, home, tmp_path):
    tools = tmp_path / "bin"  # under /tmp, which bubblewrap makes private
    tools.mkdir()
    (tools / "hello-tool").write_text("#!/bin/sh\necho hello from the tool\n")
    (tools / "hello-tool").chmod(0o755)
    ctx = context(kind, workspace, home)
    ctx.env = {**ctx.env, "PATH": f"{tools}:{ctx.env['PATH']}"}
    result = await run(ctx, "hello-tool; echo x > $(command -v hello-tool)")
    assert "hello from the tool" in result.text
    assert (tools / "hello-tool").read_text().startswith("#!/bin/sh")  # read, never written


async def test_exit_codes_and_pipes_come_through(kind, workspace, home):
    ctx = context(kind, workspace, home)
    result = await run(ctx, "printf 'a\\nb\\n' | wc -l; exit 5")
    assert result.text == "2\n[exit code: 5]"
    assert not result.stopped


async def test_a_read_only_call_can_write_nothing(kind, workspace, home):
    ctx = context(kind, workspace, home)
    ctx.read_only = True
    (workspace / "keep.txt").write_text("kept\n")
    result = await run(ctx, "echo gone > keep.txt; echo new > new.txt; rm -f keep.txt")
    assert (workspace / "keep.txt").read_text() == "kept\n"
    assert not (workspace / "new.txt").exists()
    assert result.stopped


async def test_an_extra_writable_folder_is_writable(kind, workspace, home, outside):
    cache = outside / "npm-cache"
    cache.mkdir()
    ctx = context(kind, workspace, home, writable=(str(cache),))
    result = await run(ctx, f"echo cached > {cache}/x && cat {cache}/x")
    assert "cached" in result.text and result.text.endswith("[exit code: 0]")
    assert (cache / "x").read_text() == "cached\n"


# ------------------------------------------------------------------ secrets


async def test_secret_stores_read_as_nothing(kind, workspace, home):
    ctx = context(kind, workspace, home, deny_read=(str(home / "private"),))
    (home / "private").mkdir()
    (home / "private" / "notes").write_text(SECRET)
    commands = [
        "cat ~/.ssh/id_ed25519",
        f"cat {home}/.aws/credentials",
        "cat ~/.netrc",
        "ls -a ~/.ssh; find ~ -type f -exec cat {} +",
        f"cat {home}/private/notes",
        f"cd {home}/.ssh && cat *",
    ]
    for command in commands:
        result = await run(ctx, command)
        assert "planted-secret" not in result.text, command
    result = await run(ctx, "cat ~/.gitconfig")  # the rest of home reads as ever
    assert "Sandboxed" in result.text


async def test_the_agents_own_data_folder_is_hidden(kind, workspace, home, outside, monkeypatch):
    data = outside / "data"
    (data / "agent").mkdir(parents=True)
    (data / "agent" / "credentials.json").write_text(f'{{"key": "{SECRET}"}}')
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    ctx = context(kind, workspace, home)
    result = await run(ctx, f"cat {data}/agent/credentials.json")
    assert "planted-secret" not in result.text
    listing = await run(ctx, f"ls -A {data}/agent")
    assert "credentials.json" not in listing.text


async def test_the_agents_environment_cannot_be_read(kind, workspace, home, monkeypatch):
    monkeypatch.setenv("SANDBOX_PROBE_MARKER", "marker-90210")
    ctx = context(kind, workspace, home)
    ctx.env = {k: v for k, v in ctx.env.items() if k != "SANDBOX_PROBE_MARKER"}
    command = (
        f"cat /proc/{os.getpid()}/environ; cat /proc/*/environ; tr '\\0' '\\n' < /proc/1/environ"
    )
    result = await run(ctx, command)
    assert "marker-90210" not in result.text


# ------------------------------------------------------------------ network and sockets


async def test_no_tcp_connection_reaches_a_loopback_listener(kind, workspace, home):
    ctx = context(kind, workspace, home)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        attempts = [
            f"{PY} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2)\"",
            f"{PY} -c \"import socket; socket.create_connection(('localhost', {port}), 2)\"",
            f"exec 3<>/dev/tcp/127.0.0.1/{port}",  # a bash-ism; sh says no either way
            f'{PY} -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); '
            f"s.sendto(b'x', ('127.0.0.1', {port}))\"",
        ]
        for command in attempts:
            await run(ctx, command)
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever connected


async def test_a_host_unix_socket_cannot_be_reached(kind, workspace, home, outside):
    path = outside / "agent.sock"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))
        listener.listen(8)
        command = (
            f"{PY} -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{path}'); "
            "print('connected')\""
        )
        result = await run(context(kind, workspace, home), command)
        assert "connected" not in result.text.replace("[exit code", "")
        assert result.stopped
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()


async def test_socketpair_still_works_for_local_plumbing(kind, workspace, home):
    command = (
        f"{PY} -c \"import socket; a, b = socket.socketpair(); a.send(b'ok'); print(b.recv(2))\""
    )
    result = await run(context(kind, workspace, home), command)
    assert "b'ok'" in result.text


# ------------------------------------------------------------------ processes


async def test_nothing_it_starts_outlives_the_command(kind, workspace, home):
    """A `setsid` daemon holds a lock on a file; once the command returned, the lock is
    free, so the daemon is gone (the check waits for no clock: the kernel ends a pid
    namespace's processes before its first one has finished exiting)."""
    ctx = context(kind, workspace, home)
    daemon = (
        f"{PY} -c \"import fcntl, time; f = open('lock', 'w'); fcntl.flock(f, fcntl.LOCK_EX); "
        "open('ready', 'w').close(); time.sleep(600)\""
    )
    command = f"setsid sh -c {shlex.quote(daemon)} >/dev/null 2>&1 </dev/null & "
    command += "while [ ! -e ready ]; do sleep 0.01; done; echo started"
    result = await run(ctx, command)
    assert "started" in result.text
    with open(workspace / "lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if the daemon still held it


async def test_at_the_timeout_the_whole_sandbox_is_killed_sigterm_ignored_or_not(
    kind, workspace, home
):
    ctx = context(kind, workspace, home)
    holder = (
        f'{PY} -c "import fcntl, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); '
        "f = open('lock', 'w'); fcntl.flock(f, fcntl.LOCK_EX); open('ready', 'w').close(); "
        'time.sleep(600)"'
    )
    command = f"trap '' TERM; {holder} & for i in $(seq 20); do sleep 60 & done; "
    command += "while [ ! -e ready ]; do sleep 0.01; done; sleep 60"
    result = await run(ctx, command, timeout=2)
    assert "timed out after 2 s" in result.text
    with open(workspace / "lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)


async def test_it_cannot_signal_the_users_processes(kind, workspace, home):
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        result = await run(context(kind, workspace, home), f"kill -9 {victim.pid}")
        assert victim.poll() is None
        assert "[exit code: 0]" not in result.text
    finally:
        victim.kill()
        victim.wait()


# ------------------------------------------------------------------ the workspace's own code


async def test_git_hooks_config_and_agent_folder_cannot_be_planted(kind, workspace, home):
    ctx = context(kind, workspace, home)
    config_before = (workspace / ".git" / "config").read_text()
    attacks = [
        "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/*",
        "git config core.fsmonitor 'touch pwned'",
        "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config",
        "mkdir -p .agent && printf '[hooks]\\n' > .agent/config.toml",
        "mkdir -p .git/modules/x && printf '[core]\\n' > .git/modules/x/config",
        "mv .git/hooks .git/old-hooks; mkdir .git/hooks; echo evil > .git/hooks/post-checkout",
    ]
    for command in attacks:
        await run(ctx, command)
    assert (workspace / ".git" / "config").read_text() == config_before
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (workspace / ".git" / "hooks" / "post-checkout").exists()
    assert not (workspace / ".agent").exists()
    assert not (workspace / ".git" / "modules" / "x").exists()
    assert not (workspace / ".git" / "config.worktree").exists()


async def test_a_stopped_command_cannot_leave_a_planted_config_behind(kind, workspace, home):
    """A stop (the person's Ctrl-C) cancels the call mid-command: what it planted is
    gone all the same (Landlock puts it back; bubblewrap never let it be written)."""
    before = (workspace / ".git" / "config").read_text()
    ctx = context(kind, workspace, home)
    command = "echo '[core] fsmonitor = touch pwned' >> .git/config; touch planted; sleep 60"
    call = asyncio.ensure_future(run(ctx, command, timeout=60))
    for _ in range(3000):  # up to 30 s for the command to get that far
        if (workspace / "planted").exists():
            break
        await asyncio.sleep(0.01)
    assert (workspace / "planted").exists()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert (workspace / ".git" / "config").read_text() == before


async def test_a_workspace_without_git_cannot_get_a_planted_one(kind, tmp_path, home):
    workspace = tmp_path / "plain"
    workspace.mkdir()
    ctx = context(kind, workspace, home)
    await run(ctx, "git init -q . ; printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config")
    assert not (workspace / ".git").exists()
    assert sorted(p.name for p in workspace.iterdir()) == []


async def test_git_add_and_commit_work(kind, workspace, home):
    ctx = context(kind, workspace, home)
    result = await run(
        ctx,
        "echo one > one.txt && git add one.txt && git commit -qm first && git log --format=%an:%s",
    )
    if kind == "landlock" and result.stopped:
        pytest.fail(f"git commit must work in the workspace: {result.text}")
    assert "Sandboxed:first" in result.text, result.text
    assert result.text.endswith("[exit code: 0]")


async def test_pytest_runs_in_the_workspace(kind, workspace, home):
    (workspace / "test_sample.py").write_text(
        "import tempfile\n\n"
        "def test_ok(tmp_path):\n"
        "    (tmp_path / 'f').write_text('x')\n"
        "    assert tempfile.gettempdir()\n"
    )
    result = await run(context(kind, workspace, home), f"{PY} -m pytest -q -p no:cacheprovider", 60)
    assert "1 passed" in result.text, result.text
    assert result.text.endswith("[exit code: 0]")


async def test_a_long_command_is_still_stopped_at_its_timeout(kind, workspace, home):
    started = time.monotonic()
    result = await run(context(kind, workspace, home), "sleep 60", timeout=1)
    assert "timed out after 1 s" in result.text
    assert time.monotonic() - started < 30  # a generous bound: the group is killed, not waited


async def test_a_check_that_touched_a_protected_path_still_reports_its_exit_code(
    kind, workspace, home
):
    """Under Landlock the sandbox's note that it put `.git/config` back comes after the
    `[exit code: N]` line: the check and the exported transcript read the code all the
    same."""
    from agent_cli.engine.items import ToolItem
    from agent_cli.frontends.markdown_transcript import _tool
    from agent_cli.tools.checks import Check, run_check
    from agent_cli.tools.shell import exit_code

    ctx = context(kind, workspace, home)
    command = "echo '[core]' >> .git/config; echo broken; exit 3"
    result = await run(ctx, command)
    if kind == "landlock":
        assert result.text.splitlines()[-1].startswith("[the sandbox keeps .git/config")
    assert exit_code(result.text) == 3
    check = await run_check(Check(("*",), command), ["a.py"], ctx)
    if kind == "landlock":
        assert (check.code, check.output) == (3, "broken\n")
    else:  # bubblewrap mounts .git/config read-only: the write fails, and says so
        assert check.code is None and check.output.startswith("the sandbox stopped it")
    item = ToolItem(tool="exec_shell_command", call_id="c1", state="done", result=result.text)
    exported = _tool(item, "##")
    assert "- exit code: 3" in exported and "[exit code" not in exported
