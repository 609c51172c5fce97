"""Background commands: what `exec_shell_command(background=true)` started, and the
tools that read and end them (`shell_output`, `shell_kill`).

A background command starts as a foreground one does (`/bin/sh -c`, its own
process group, in the sandbox when there is one; see shell.py) but the call
returns at once with an id (`bg1`, `bg2`, … per session). What it prints is
kept, capped as any result is, until `shell_output` reads it. Every one is
ended, its whole process group, when the session ends, and when the agent
itself dies, even by SIGKILL (a watcher in the group, see shell.py's WATCHED;
in bwrap, its `--die-with-parent`).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from agent_cli.tools.base import Effect, ToolContext, ToolResult, tool
from agent_cli.tools.processes import READ_CHUNK, Output, group_alive, kill_group

MAX_RUNNING = 8
"""Background commands at once; a model that starts more is told to end one first."""
FIRST_OUTPUT_WAIT = 1.0
"""Seconds a start waits for the command's first output (less when it exits)."""
MAX_WAIT = 30
LAST_LINES = 5


@dataclass(eq=False)
class Job:
    """One background command, and what it printed that the model has not read yet."""

    id: str
    command: str
    process: asyncio.subprocess.Process
    limit: int
    cleanup: contextlib.ExitStack  # the sandbox's launch, closed when the command is done
    started: float = field(default_factory=time.time)
    unread: Output = field(init=False)
    last: deque[str] = field(default_factory=lambda: deque(maxlen=LAST_LINES))
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _partial: str = ""

    def __post_init__(self) -> None:
        self.unread = Output(self.limit)

    @property
    def exited(self) -> bool:
        return self.process.returncode is not None

    @property
    def state(self) -> str:
        code = self.process.returncode
        if code is None:
            return "running"
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exited with code {code}"

    def take(self) -> str:
        """What it printed since the last take; the next starts empty."""
        text, self.unread = self.unread.text(), Output(self.limit)
        return text

    def report(self) -> str:
        text = self.take()
        if text and not text.endswith("\n"):
            text += "\n"
        return f"{text or '(no new output)' + chr(10)}[{self.id}: {self.state}]"

    def feed(self, chunk: bytes) -> None:
        self.unread.feed(chunk)
        lines = (self._partial + chunk.decode("utf-8", "replace")).split("\n")
        self._partial = lines.pop()[-200:]
        self.last.extend(line[-200:] for line in lines if line.strip())
        self.changed.set()

    def last_lines(self) -> list[str]:
        return [*self.last, *([self._partial] if self._partial.strip() else [])][-LAST_LINES:]


class BackgroundShells:
    """The background commands of one session; `aclose` ends them all."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._count = 0
        self._closed = False

    def all(self) -> list[Job]:
        return list(self._jobs.values())

    def running(self) -> list[Job]:
        return [job for job in self._jobs.values() if not job.exited]

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id.strip())

    def refusal(self) -> str:
        """Why another may not start now; "" when it may."""
        if self._closed:
            return "The session is ending, so no background command can start."
        running = self.running()
        if len(running) < MAX_RUNNING:
            return ""
        ids = ", ".join(job.id for job in running)
        return f"{MAX_RUNNING} background commands run already ({ids}): end one with shell_kill."

    def adopt(
        self,
        command: str,
        process: asyncio.subprocess.Process,
        limit: int,
        cleanup: contextlib.ExitStack,
    ) -> Job:
        """Keep a started command: read its output from now on."""
        self._count += 1
        job = Job(f"bg{self._count}", command, process, limit, cleanup)
        assert process.stdout is not None
        job.tasks.append(asyncio.create_task(_read(job, process.stdout)))
        self._jobs[job.id] = job
        return job

    async def first_output(self, job: Job) -> None:
        """Wait (a little) for the command's first output or its end."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(job.changed.wait(), FIRST_OUTPUT_WAIT)

    def prompt_note(self) -> str:
        """The running ones, for the system prompt: a compacted conversation still knows."""
        running = self.running()
        if not running:
            return ""
        lines = "\n".join(f"- {job.id}: `{_one_line(job.command)}`" for job in running)
        return (
            "\n\nBackground commands running in this session (read one with shell_output, "
            f"end it with shell_kill):\n{lines}"
        )

    async def kill(self, job: Job) -> None:
        """End the command's whole group (if anything of it still runs) and let it go."""
        if group_alive(job.process.pid):
            await kill_group(job.process.pid)
        await _settle(job)

    async def aclose(self) -> None:
        """End every background command, whole process groups, and wait for them."""
        self._closed = True
        await asyncio.gather(*(self.kill(job) for job in self.all()), return_exceptions=True)


async def _read(job: Job, stream: asyncio.StreamReader) -> None:
    """Feed the job what it prints; at the end of the pipe, wait for the shell's exit."""
    with contextlib.suppress(OSError):
        while chunk := await stream.read(READ_CHUNK):
            job.feed(chunk)
    await job.process.wait()
    job.changed.set()


async def _settle(job: Job) -> None:
    """After the group is gone: reap the shell, stop reading, close the sandbox's launch."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(job.process.wait(), 2.0)
    for task in job.tasks:
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    transport = getattr(job.process, "_transport", None)  # no public way to close the pipes
    if transport is not None:
        transport.close()
    job.cleanup.close()
    job.changed.set()


def _one_line(command: str) -> str:
    line = command.strip().split("\n", 1)[0]
    return line if len(line) <= 80 else line[:79] + "…"


def _job(ctx: ToolContext, job_id: str) -> Job | ToolResult:
    shells = ctx.shells
    job = shells.get(job_id) if shells is not None else None
    if job is not None:
        return job
    known = ", ".join(j.id for j in shells.all()) if shells is not None else ""
    return ToolResult(
        f"No background command is called {job_id!r} in this session (they end with the "
        f"session); the ones there are: {known or 'none'}.",
        is_error=True,
    )


def _read_title(args: Mapping[str, Any]) -> str:
    return f"Read background command {args.get('id', '')}"


def _kill_title(args: Mapping[str, Any]) -> str:
    return f"End background command {args.get('id', '')}"


@tool("shell_output", Effect.READ, title=_read_title)
async def shell_output(
    ctx: ToolContext,
    id: Annotated[str, "The background command's id, e.g. bg1."],
    wait: Annotated[int, f"Seconds to wait for new output or its end (0 to {MAX_WAIT})."] = 0,
) -> ToolResult:
    """Read what a background command (exec_shell_command with background: true) printed
    since the last read, and whether it still runs or how it ended."""
    job = _job(ctx, id)
    if isinstance(job, ToolResult):
        return job
    seconds = max(0, min(wait, MAX_WAIT))
    if seconds and not job.exited and not job.unread.total:
        job.changed.clear()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(job.changed.wait(), seconds)
    return ToolResult(job.report())


@tool("shell_kill", Effect.READ, title=_kill_title)
async def shell_kill(
    ctx: ToolContext, id: Annotated[str, "The background command's id, e.g. bg1."]
) -> ToolResult:
    """End a background command and every process it started; answers with its last output."""
    job = _job(ctx, id)
    if isinstance(job, ToolResult):
        return job
    said = "ended" if not job.exited else "had ended already"
    assert ctx.shells is not None
    await ctx.shells.kill(job)
    return ToolResult(f"{job.id} {said}.\n{job.report()}")
