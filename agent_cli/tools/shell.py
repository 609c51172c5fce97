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
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from typing import Annotated, Any, NamedTuple

from agent_cli.sandbox.failures import stopped_by
from agent_cli.tools.base import Effect, ToolContext, ToolResult, tool
from agent_cli.tools.environment import SECRET_NAME_PATTERNS, scrubbed_env

# SECRET_NAME_PATTERNS and scrubbed_env are environment.py's, kept here for their importers.
__all__ = [
    "SECRET_NAME_PATTERNS",
    "SHELL_MAX_OUTPUT",
    "SHELL_MAX_TIMEOUT",
    "exec_shell_command",
    "kill_group",
    "scrubbed_env",
    "start_in_group",
]

SHELL = "/bin/sh"
SHELL_DEFAULT_TIMEOUT = 10
SHELL_MAX_TIMEOUT = 120
"""Seconds; a longer timeout asked for is cut to this."""
SHELL_MAX_OUTPUT = 12 * 1024
"""Bytes of output kept (head and tail); the rest is counted, not kept."""
SHELL_KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL for the command's process group."""
SHELL_DRAIN_GRACE = 0.5
"""Seconds the output may stay open after the shell exits (background processes)."""
_READ_CHUNK = 64 * 1024
_POLL = 0.05


# ------------------------------------------------------------------ output


def _utf8_head(data: bytes) -> bytes:
    """`data` without a UTF-8 character cut off at its end."""
    for back in range(1, min(4, len(data)) + 1):
        lead = data[-back]
        if lead & 0xC0 == 0x80:
            continue  # a continuation byte: the character started earlier
        size = 2 if 0xC0 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if lead >= 0xF0 else 1
        return data[:-back] if size > back else data
    return data


def _utf8_tail(data: bytes) -> bytes:
    """`data` without the continuation bytes of a character cut off at its start."""
    skip = 0
    while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
        skip += 1
    return data[skip:]


class _Output:
    """The first and last bytes of a stream, and how many came in between."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > 2 * self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    def text(self) -> str:
        tail = bytes(self.tail[-self.tail_limit :]) if self.tail_limit else b""
        cut = self.total - len(self.head) - len(tail)
        if cut <= 0:
            return (bytes(self.head) + tail).decode("utf-8", "replace")
        head, tail = _utf8_head(bytes(self.head)), _utf8_tail(tail)
        cut = self.total - len(head) - len(tail)
        note = f"\n[... {cut} bytes of output cut here ...]\n"
        return head.decode("utf-8", "replace") + note + tail.decode("utf-8", "replace")


async def _pump(stream: asyncio.StreamReader, output: _Output) -> None:
    while chunk := await stream.read(_READ_CHUNK):
        output.feed(chunk)


# ------------------------------------------------------------------ process groups


def _group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies do not count: an init that
    does not reap would otherwise keep a killed group "alive" forever)."""
    if not os.path.isdir("/proc/self"):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


async def _wait_group(pgid: int, seconds: float) -> bool:
    """Wait up to `seconds` for the group to end; True if it did."""
    deadline = time.monotonic() + seconds
    while _group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_POLL)
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def kill_group(pgid: int) -> None:
    """SIGTERM the group, SIGKILL whatever is left after the grace period."""
    _signal_group(pgid, signal.SIGTERM)
    try:
        if await _wait_group(pgid, SHELL_KILL_GRACE):
            return
    except asyncio.CancelledError:
        _signal_group(pgid, signal.SIGKILL)
        raise
    _signal_group(pgid, signal.SIGKILL)
    await _wait_group(pgid, 1.0)


async def start_in_group(*argv: str, **options: Any) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec` in a new session (so its own process group), that
    a stop while it starts cannot leave half done: asyncio alone would kill only the
    leader, and what it had already started would go on. The start is let finish, then
    the whole group is ended."""
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(*argv, start_new_session=True, **options)
    )
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        with contextlib.suppress(OSError):
            started = await starting
            await kill_group(started.pid)
            await started.wait()
        raise


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


class _Start(NamedTuple):
    """How to start the shell: plain, or as the sandbox says."""

    argv: list[str]
    env: dict[str, str]
    preexec_fn: Callable[[], None] | None = None
    pass_fds: tuple[int, ...] = ()


async def _run(start: _Start, cwd: str, timeout: float, limit: int) -> tuple[str, bool, int | None]:
    """The command's result text, whether it timed out, and its exit code."""
    proc = await start_in_group(
        *start.argv, cwd=cwd, env=start.env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        preexec_fn=start.preexec_fn, pass_fds=start.pass_fds,
    )  # fmt: skip
    assert proc.stdout is not None
    output = _Output(limit)
    reader = asyncio.create_task(_pump(proc.stdout, output))
    exited = asyncio.create_task(_until_exit(proc, reader))
    note, timed_out = "", False
    try:
        done, _ = await asyncio.wait({exited}, timeout=timeout)
        if not done:
            timed_out = True
            await kill_group(proc.pid)
            note = f"[timed out after {timeout:g} s; the command's processes were killed]"
        else:
            drained, _ = await asyncio.wait({reader}, timeout=SHELL_DRAIN_GRACE)
            if not drained and _group_alive(proc.pid):
                await kill_group(proc.pid)
                note = "[background processes still holding the output were stopped]"
    except asyncio.CancelledError:
        await kill_group(proc.pid)
        await _finish(proc, reader, exited)
        raise
    await _finish(proc, reader, exited)
    return _result_text(output, proc.returncode, note, timed_out), timed_out, proc.returncode


def _result_text(output: _Output, code: int | None, note: str, timed_out: bool) -> str:
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
) -> ToolResult:
    """Run a shell command in the workspace folder and answer with its output (stdout and
    stderr together) and exit code. It gets no input; long-running commands are stopped
    at the timeout. Prefer read_file, grep_search and file_glob_search for looking at files."""
    seconds = max(1, min(timeout, SHELL_MAX_TIMEOUT))
    limit = max(1, min(max_output_size, SHELL_MAX_OUTPUT))
    env = ctx.env_policy.apply(ctx.env or os.environ)
    root = str(ctx.workspace.root)
    sandbox = None if ctx.unsandboxed else ctx.sandbox
    if sandbox is None or not sandbox.active:
        return (await _start(_Start([SHELL, "-c", command], env), root, seconds, limit))[0]
    plan = sandbox.plan(ctx.workspace.root, env, write=not ctx.read_only)
    try:
        with sandbox.launch([SHELL, "-c", command], plan, env) as launch:
            start = _Start(launch.argv, launch.env, launch.preexec_fn, launch.pass_fds)
            result, code = await _start(start, root, seconds, limit)
    except OSError as exc:  # the sandbox could not be set up: nothing ran
        return ToolResult(f"The sandbox could not start the command ({exc}).", is_error=True)
    stopped = "" if result.is_error else stopped_by(result.text, code, sandbox.kind, plan.network)
    text = result.text + "".join(f"\n{note}" for note in launch.notes)
    return result._replace(text=text, stopped=stopped)


async def _start(
    start: _Start, cwd: str, seconds: float, limit: int
) -> tuple[ToolResult, int | None]:
    """The result, and the exit code (None when it did not start or timed out)."""
    try:
        text, timed_out, code = await _run(start, cwd, seconds, limit)
    except (OSError, subprocess.SubprocessError) as exc:
        return ToolResult(f"The command could not be started ({exc}).", is_error=True), None
    return ToolResult(text, is_error=timed_out), None if timed_out else code
