"""`!command`: a command the person typed, run as their own (SPEC: issue 17 item 4).

It runs in the workspace through their `$SHELL`, with their environment, as
if typed at their own prompt: not sandboxed and without an approval card,
since the person typed it — which is why only the interactive front ends
offer it, and never for text that came from a model, a file or a pipe (a
prompt command's body or `agent run "!x"` is only a prompt). Its output is
shown as it comes and kept (capped) as an attachment the model reads with
the person's next message; it is not a model turn by itself.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from agent_cli.media import Attachment, Prompt

HEAD_CAP = 4_000  # characters of the output's start kept for the model
TAIL_CAP = 12_000  # and of its end (what failed is usually last)
READ_SIZE = 4096
KILL_SECONDS = 2.0  # after SIGTERM, the group gets SIGKILL if it is still there


class OwnCommand:
    """One `!command`: `run` it (output to `on_output` as it comes), `stop` it (Ctrl+C)."""

    def __init__(self, command: str, workspace: Path, on_output: Callable[[str], None]) -> None:
        self.command = command
        self.workspace = workspace
        self.on_output = on_output
        self.exit_code: int | None = None
        self.stopped = False
        self._process: asyncio.subprocess.Process | None = None
        self._head = ""
        self._tail = ""
        self._total = 0

    async def run(self) -> Attachment:
        """Run it to its end (or its stop); the command and its output for the model."""
        shell = os.environ.get("SHELL") or "/bin/sh"
        process = await asyncio.create_subprocess_exec(
            shell,
            "-c",
            self.command,
            cwd=self.workspace,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a stop ends everything it started
        )
        self._process = process
        if self.stopped:  # stopped while it was starting: its output may be out already
            self._end()
        assert process.stdout is not None
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        while chunk := await process.stdout.read(READ_SIZE):
            self._keep(decoder.decode(chunk))
        self._keep(decoder.decode(b"", final=True))
        self.exit_code = await process.wait()
        return Attachment("command", f"!{self.command}", self._for_model())

    def stop(self) -> None:
        """End the command's whole process group: SIGTERM, then SIGKILL if it lingers."""
        if self.stopped or self.exit_code is not None:
            return
        self.stopped = True
        if self._process is not None:  # else `run` ends it as soon as it has started
            self._end()

    def _end(self) -> None:
        self._signal(signal.SIGTERM)
        asyncio.get_running_loop().call_later(KILL_SECONDS, self._signal, signal.SIGKILL)

    @property
    def outcome(self) -> str:
        """How it ended, in a few words."""
        if self.stopped:
            return "stopped"
        return f"exit code {self.exit_code}"

    def _signal(self, number: int) -> None:
        process = self._process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, number)

    def _keep(self, text: str) -> None:
        if not text:
            return
        self.on_output(text)
        self._total += len(text)
        if len(self._head) < HEAD_CAP:
            room = HEAD_CAP - len(self._head)
            self._head += text[:room]
            text = text[room:]
        self._tail = (self._tail + text)[-TAIL_CAP:]

    def _for_model(self) -> str:
        left_out = self._total - len(self._head) - len(self._tail)
        middle = f"\n[… {left_out:,} characters left out …]\n" if left_out > 0 else ""
        output = (self._head + middle + self._tail).rstrip("\n")
        said = "The person ran this command in the workspace themselves"
        return f"{said} ({self.outcome}):\n$ {self.command}\n{output}"


class OwnCommands:
    """An interactive front end's `!command`s: the one running (one at a time, never
    during a run), and what they gave, sent with the next message."""

    def __init__(self) -> None:
        self.running: OwnCommand | None = None
        self.context: list[Attachment] = []

    def start(
        self, line: str, workspace: Path, on_output: Callable[[str], None], busy: bool
    ) -> OwnCommand | str:
        """`!command` ready to `run`, or why it cannot run now (`busy`: a run goes on)."""
        command = line.removeprefix("!").strip()
        if not command:
            return "Type a command after `!`, like `!git status`."
        if busy or self.running is not None:
            return "Something is running — wait for it, or stop it with Ctrl+C."
        self.running = OwnCommand(command, workspace, on_output)
        return self.running

    async def run(self, own: OwnCommand) -> tuple[str, bool]:
        """Run it; what to say of how it ended, and whether that went wrong."""
        try:
            self.context.append(await own.run())
        except OSError as e:
            return f"`!{own.command}` could not start: {e} — check $SHELL.", True
        finally:
            self.running = None
        said = f"`!{own.command}` ended ({own.outcome}); the model reads its output with your "
        return said + "next message.", own.stopped or bool(own.exit_code)

    def message(self, message: str | Prompt) -> str | Prompt:
        """`message` with the output of the `!command`s run since the last one."""
        if not self.context:
            return message
        context, self.context = tuple(self.context), []
        if isinstance(message, str):
            return Prompt(message, attachments=context)
        return replace(message, attachments=(*context, *message.attachments))
