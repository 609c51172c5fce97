"""exec_shell_command: run a command in the workspace, bounded in time and output.

The command runs as `/bin/sh -c` in its own session (so its own process
group), with stdin from /dev/null and stdout and stderr in one pipe. A
timeout or a stop (asyncio cancellation) kills the *whole group* — the
command's children and grandchildren too — SIGTERM first, SIGKILL after a
grace period, so nothing is left running. Background processes that still
hold the output pipe after the shell exits are stopped the same way (the
tool would otherwise wait on them); ones that redirected their output are
left alone. Output is kept as head and tail within the cap, counted
in between, so a chatty command cannot fill memory.

The environment is the user's as the context's `env_policy` filters it: by
default without every variable whose name looks like a secret (SPEC §13).

Where the context has a sandbox, the shell starts inside it (SPEC §14), with
nothing writable for a call the policy allowed as read-only. A failure the
sandbox caused is named on the result (`ToolResult.stopped`); what to do about
it (a card to run it again outside, or telling the model) is the loop's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
from collections.abc import Callable, Mapping
from typing import Annotated, Any, NamedTuple

from agent_cli.sandbox.failures import stopped_by
from agent_cli.sandbox.launch import KEPT_NOTE
from agent_cli.tools.base import (
    Effect,
    ToolContext,
    ToolResult,
    lent_call,
    progress_shower,
    tool,
)
from agent_cli.tools.environment import SECRET_NAME_PATTERNS, scrubbed_env
from agent_cli.tools.processes import (
    Output,
    group_alive,
    kill_group,
    last_lines,
    pump,
    start_in_group,
)

# SECRET_NAME_PATTERNS and scrubbed_env are environment.py's, kept here for their importers.
__all__ = [
    "SECRET_NAME_PATTERNS",
    "SHELL_MAX_OUTPUT",
    "SHELL_MAX_TIMEOUT",
    "exec_shell_command",
    "exit_code",
    "scrubbed_env",
]

SHELL = "/bin/sh"
SHELL_DEFAULT_TIMEOUT = 10
SHELL_MAX_TIMEOUT = 120
"""Seconds; a longer timeout asked for is cut to this."""
SHELL_MAX_OUTPUT = 12 * 1024
"""Bytes of output kept (head and tail); the rest is counted, not kept."""
# A background command's shell: its stdin is a pipe the agent holds the other end of. A
# watcher in the command's group waits on it, so when the agent dies (even by SIGKILL)
# the pipe ends and the watcher kills the whole group; the command itself reads nothing.
WATCHED = (
    "exec 3<&0 </dev/null; (read _ <&3; kill -KILL 0) & watcher=$!; "
    'sh -c "$1" 3<&-; code=$?; kill "$watcher" 2>/dev/null; exit "$code"'
)
_EXIT_LINE = re.compile(r"^\[exit code: ((-?\d+)[^\]\n]*)\]$", re.MULTILINE)
SHELL_DRAIN_GRACE = 0.5
"""Seconds the output may stay open after the shell exits (background processes)."""
LIVE_SECONDS = 0.25
"""While a command runs, its last lines are shown at most this often (a flood of output
costs the front ends four updates a second, never one per line)."""
LIVE_LINES = 5

Show = Callable[[str], None]


# ------------------------------------------------------------------ the tool


async def _until_exit(proc: asyncio.subprocess.Process, reader: asyncio.Task[None]) -> int:
    """Return when the shell has exited. `proc.wait()` alone also waits for the output
    pipe to close, which a background child may hold open long after."""
    delay = 0.01
    while proc.returncode is None:
        if reader.done():  # the pipe is closed: wait() now returns at the exit
            return await proc.wait()
        await asyncio.wait({reader}, timeout=delay)
        delay = min(delay * 2, 0.1)
    return proc.returncode


async def _finish(
    proc: asyncio.subprocess.Process, reader: asyncio.Task[None], exited: asyncio.Task[int]
) -> None:
    """Reap the shell and stop reading (once the group is gone the pipe is at its end)."""
    await asyncio.wait({reader, exited}, timeout=1.0)
    for task in (reader, exited):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    transport = getattr(proc, "_transport", None)  # no public way to close the pipes
    if transport is not None:
        transport.close()


async def _show_live(output: Output, show: Show) -> None:
    """Show the output's last lines while the command runs, when new output came."""
    seen = 0
    while True:
        await asyncio.sleep(LIVE_SECONDS)
        if output.total != seen:
            seen = output.total
            show(last_lines(output.recent(), LIVE_LINES))


class _Start(NamedTuple):
    """How to start the shell: plain, or as the sandbox says."""

    argv: list[str]
    env: dict[str, str]
    preexec_fn: Callable[[], None] | None = None
    pass_fds: tuple[int, ...] = ()


async def _run(
    start: _Start, cwd: str, timeout: float, limit: int, show: Show | None = None
) -> tuple[str, bool, int | None]:
    """The command's result text, whether it timed out, and its exit code; `show` is told
    its last lines while it runs."""
    proc = await start_in_group(
        *start.argv, cwd=cwd, env=start.env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        preexec_fn=start.preexec_fn, pass_fds=start.pass_fds,
    )  # fmt: skip
    assert proc.stdout is not None
    output = Output(limit)
    reader = asyncio.create_task(pump(proc.stdout, output))
    exited = asyncio.create_task(_until_exit(proc, reader))
    live = asyncio.create_task(_show_live(output, show)) if show is not None else None
    try:
        return await _wait(proc, output, reader, exited, timeout)
    finally:
        if live is not None:
            live.cancel()


async def _wait(
    proc: asyncio.subprocess.Process,
    output: Output,
    reader: asyncio.Task[None],
    exited: asyncio.Task[int],
    timeout: float,
) -> tuple[str, bool, int | None]:
    """Wait for the shell to exit (or time out), then for its output to end."""
    note, timed_out = "", False
    try:
        done, _ = await asyncio.wait({exited}, timeout=timeout)
        if not done:
            timed_out = True
            await kill_group(proc.pid)
            note = f"[timed out after {timeout:g} s; the command's processes were killed]"
        else:
            drained, _ = await asyncio.wait({reader}, timeout=SHELL_DRAIN_GRACE)
            if not drained and group_alive(proc.pid):
                await kill_group(proc.pid)
                note = "[background processes still holding the output were stopped]"
    except asyncio.CancelledError:
        await kill_group(proc.pid)
        await _finish(proc, reader, exited)
        raise
    await _finish(proc, reader, exited)
    return _result_text(output, proc.returncode, note, timed_out), timed_out, proc.returncode


def _result_text(output: Output, code: int | None, note: str, timed_out: bool) -> str:
    text = output.text()
    if text and not text.endswith("\n"):
        text += "\n"
    if timed_out:
        return text + note
    if note:
        text += note + "\n"
    if code is not None and code < 0:
        return f"{text}[exit code: {code} (killed by {signal.Signals(-code).name})]"
    return f"{text}[exit code: {code}]"


def exit_line(result: str) -> re.Match[str] | None:
    """The `[exit code: N …]` line a command's result text ends with (`_result_text`'s last
    line; only the sandbox's notes may follow): group 1 is what it says ("-9 (killed by
    SIGKILL)"), group 2 the code. None when it ends otherwise: it timed out (the command's
    output may print such a line itself), did not start, or more was added after it. For
    the code itself read `ToolResult.exit_code`; this is for the text around it, and for
    results stored before that was kept."""
    found = list(_EXIT_LINE.finditer(result))
    if not found:
        return None
    after = result[found[-1].end() :].strip("\n")
    if after and not all(line.startswith(KEPT_NOTE) for line in after.split("\n")):
        return None
    return found[-1]


def exit_code(result: str) -> int | None:
    """The exit code a command's result text ends with (`exit_line`); None when none."""
    line = exit_line(result)
    return int(line[2]) if line else None


def _title(args: Mapping[str, Any]) -> str:
    line = str(args.get("command", "")).strip().split("\n", 1)[0]
    return f"Run {line if len(line) <= 60 else line[:59] + '…'}"


@tool("exec_shell_command", Effect.EXEC, title=_title)
async def exec_shell_command(
    ctx: ToolContext,
    command: Annotated[str, "The command line, run by /bin/sh -c in the workspace."],
    timeout: Annotated[int, f"Seconds before it is stopped (at most {SHELL_MAX_TIMEOUT})."] = (
        SHELL_DEFAULT_TIMEOUT
    ),
    max_output_size: Annotated[int, f"Bytes of output to keep (at most {SHELL_MAX_OUTPUT})."] = (
        SHELL_MAX_OUTPUT
    ),
    background: Annotated[
        bool,
        "Keep it running and answer at once with an id (bg1, …) and its first output: for "
        "servers and watchers. Read it later with shell_output, end it with shell_kill.",
    ] = False,
) -> ToolResult:
    """Run a shell command in the workspace folder and answer with its output (stdout and
    stderr together) and exit code. It gets no input; long-running commands are stopped
    at the timeout unless run in the background. Prefer read_file, grep_search and
    file_glob_search for looking at files."""
    seconds = max(1, min(timeout, SHELL_MAX_TIMEOUT))
    limit = max(1, min(max_output_size, SHELL_MAX_OUTPUT))
    env = ctx.env_policy.apply(ctx.env or os.environ)
    root = str(ctx.workspace.root)
    sandbox = None if ctx.unsandboxed else ctx.sandbox
    if background:
        return await _background(ctx, command, env, root, limit)
    show = progress_shower(*lent_call(ctx))
    if sandbox is None or not sandbox.active:
        return await _start(_Start([SHELL, "-c", command], env), root, seconds, limit, show)
    plan = sandbox.plan(ctx.workspace.root, env, write=not ctx.read_only)
    try:
        with sandbox.launch([SHELL, "-c", command], plan, env) as launch:
            start = _Start(launch.argv, launch.env, launch.preexec_fn, launch.pass_fds)
            result = await _start(start, root, seconds, limit, show)
    except OSError as exc:  # the sandbox could not be set up: nothing ran
        return ToolResult(f"The sandbox could not start the command ({exc}).", is_error=True)
    code = result.exit_code
    stopped = "" if result.is_error else stopped_by(result.text, code, sandbox.kind, plan.network)
    text = result.text + "".join(f"\n{note}" for note in launch.notes)
    return result._replace(text=text, stopped=stopped)


async def _background(
    ctx: ToolContext, command: str, env: dict[str, str], cwd: str, limit: int
) -> ToolResult:
    """Start `command` as a background command of the session and answer with its id."""
    shells = ctx.shells
    if shells is None:
        return ToolResult("Background commands are not available here.", is_error=True)
    if refusal := shells.refusal():
        return ToolResult(refusal, is_error=True)
    sandbox = None if ctx.unsandboxed else ctx.sandbox
    confined = sandbox is not None and sandbox.active
    # bwrap ends everything with the agent (--die-with-parent, its own pid namespace);
    # elsewhere a watcher in the command's group does, when the agent's pipe end closes.
    watched = not confined or sandbox is None or sandbox.kind != "bwrap"
    argv = [SHELL, "-c", WATCHED, SHELL, command] if watched else [SHELL, "-c", command]
    cleanup = contextlib.ExitStack()
    stdin: int = asyncio.subprocess.DEVNULL
    try:
        start = _Start(argv, env)
        if confined and sandbox is not None:
            plan = sandbox.plan(ctx.workspace.root, env, write=not ctx.read_only)
            launch = cleanup.enter_context(sandbox.launch(argv, plan, env))
            start = _Start(launch.argv, launch.env, launch.preexec_fn, launch.pass_fds)
        if watched:
            stdin, agent_end = os.pipe()
            cleanup.callback(os.close, agent_end)  # closed when the command is done with
        try:
            process = await start_in_group(
                *start.argv, cwd=cwd, env=start.env, stdin=stdin,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                preexec_fn=start.preexec_fn, pass_fds=start.pass_fds,
            )  # fmt: skip
        finally:
            if watched:
                os.close(stdin)
    except (OSError, subprocess.SubprocessError) as exc:
        cleanup.close()
        return ToolResult(f"The command could not be started ({exc}).", is_error=True)
    except BaseException:
        cleanup.close()
        raise
    job = shells.adopt(command, process, limit, cleanup)
    await shells.first_output(job)
    return ToolResult(
        f"Started {job.id} in the background. Read it with shell_output(id={job.id!r}), "
        f"end it with shell_kill.\n{job.report()}"
    )


async def _start(
    start: _Start, cwd: str, seconds: float, limit: int, show: Show | None = None
) -> ToolResult:
    """The result, its exit code None when it did not start or timed out."""
    try:
        text, timed_out, code = await _run(start, cwd, seconds, limit, show)
    except (OSError, subprocess.SubprocessError) as exc:
        return ToolResult(f"The command could not be started ({exc}).", is_error=True)
    return ToolResult(text, is_error=timed_out, exit_code=None if timed_out else code)
