"""Check commands: the project's linters and tests, run after an edit of a matching file.

`[[checks]] files = "**/*.py", command = "ruff check --output-format concise {file}"`:
after an edit of a file the glob matches, the command runs in the workspace,
in the sandbox, within its timeout, through the shell tool itself. `{file}` is
the changed file, quoted for the shell; a command with `{files}` runs once
after the round's calls, with every changed file it matches. A command that
exits non-zero adds its output (capped) to the edit's result; one that passes
adds nothing. A project file's checks run programs, so they run only after the
person trusted that file (as for its hooks).
"""

from __future__ import annotations

import functools
import math
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import NamedTuple

from agent_cli.lsp.diagnostics import Diagnostic
from agent_cli.tools.base import ToolContext
from agent_cli.tools.search import GlobMatcher

__all__ = ["CHECK_OUTPUT_CAP", "DEFAULT_CHECK_TIMEOUT", "Check", "CheckRun", "run_check"]

DEFAULT_CHECK_TIMEOUT = 60.0
"""Seconds a check may run (at most the shell tool's own limit, 120)."""
CHECK_OUTPUT_CAP = 4 * 1024
"""Characters of a failing check's output the result keeps (head and tail)."""


@dataclass(frozen=True)
class Check:
    """One `[[checks]]` entry."""

    files: tuple[str, ...]  # globs, as the search tools read them ("**/*.py")
    command: str  # `{file}`: the changed file; `{files}`: all of a round's
    timeout: float = DEFAULT_CHECK_TIMEOUT
    source: str = ""  # the config file it comes from

    @property
    def per_round(self) -> bool:
        return "{files}" in self.command

    def matches(self, relative: str) -> bool:
        name = PurePosixPath(relative).name
        return any(_matcher(glob).matches(relative, name) for glob in self.files)

    def command_for(self, files: Sequence[str]) -> str:
        """The command line for `files`, each quoted for the shell."""
        quoted = [shlex.quote(file) for file in files]
        text = self.command.replace("{files}", " ".join(quoted))
        return text.replace("{file}", quoted[0] if quoted else "")


class CheckRun(NamedTuple):
    """How one check ended for some files."""

    command: str  # as run
    files: tuple[str, ...]
    code: int | None  # None: it timed out, or could not run
    output: str

    @property
    def failed(self) -> bool:
        return self.code != 0

    def report(self) -> str:
        """What the model reads of a failed check: a line saying so, then its output."""
        output = _capped(self.output.rstrip())
        if self.code is None:
            return f"[check `{self.command}` did not finish: {output}]"
        return f"[check `{self.command}` failed with exit code {self.code}:]\n{output}"

    def diagnostic(self) -> Diagnostic:
        return Diagnostic(
            path=self.files[0] if len(self.files) == 1 else "",
            line=0,
            column=0,
            severity="error",
            message=_capped(self.output.rstrip()),
            code="timeout" if self.code is None else f"exit {self.code}",
            source=f"check: {self.command}",
        )


async def run_check(check: Check, files: Sequence[str], ctx: ToolContext) -> CheckRun:
    """Run `check` for `files` with the shell tool (sandbox, timeout, output cap)."""
    from agent_cli.tools.shell import (
        SHELL_MAX_OUTPUT,
        SHELL_MAX_TIMEOUT,
        exec_shell_command,
        exit_line,
    )

    command = check.command_for(files)
    seconds = max(1, min(math.ceil(check.timeout), SHELL_MAX_TIMEOUT))
    arguments = {"command": command, "timeout": seconds, "max_output_size": SHELL_MAX_OUTPUT}
    context = replace(ctx, read_only=False, unsandboxed=False, extra={})
    result = await exec_shell_command.run(context, arguments)
    text = result.text
    if result.stopped:
        return CheckRun(command, tuple(files), None, f"the sandbox stopped it ({result.stopped})")
    if result.exit_code is None:  # it timed out, or could not be started
        last = text.strip().splitlines()[-1] if text.strip() else "it did not run"
        return CheckRun(command, tuple(files), None, last.strip("[]"))
    line = exit_line(text)
    output = text[: line.start()] if line else text
    return CheckRun(command, tuple(files), result.exit_code, output)


@functools.lru_cache(maxsize=256)
def _matcher(glob: str) -> GlobMatcher:
    return GlobMatcher(glob)


def _capped(text: str, limit: int = CHECK_OUTPUT_CAP) -> str:
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 2 // 3], text[-(limit // 3) :]
    cut = len(text) - len(head) - len(tail)
    return f"{head}\n[... {cut} characters cut ...]\n{tail}"
