"""What the model is told after it changes files: language servers' diagnostics and
the project's check commands, added to the result of the call that made the change.

One `Feedback` per backend, lent to the tools through `ToolContext.feedback`:

- `touch` (read_file, and an edit being planned): the file's language servers
  start in the background and are told the file as it is, so they know the
  text before a change comes;
- `after_edit` (write_file, edit_file, from `apply_change`): the servers are
  told the new text and their diagnostics awaited within the settle time; the
  checks whose glob matches run meanwhile;
- `after_command` (exec_shell_command, wrapped by `equip`): the files a command
  changed (told from their size and mtime before and after) are fed back alike;
- `end_round` (the loop, after a round's calls): the `{files}` checks, once,
  with every file the round changed.

What the workspace's own config file defines (its `[[checks]]` and
`[lsp.NAME]` tables) runs only once `trust` said yes, as for its hooks.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, NamedTuple

from agent_cli.lsp.options import LspSettings
from agent_cli.tools.base import Effect, FileChange, Tool, ToolContext, ToolRegistry, ToolResult

if TYPE_CHECKING:  # the rest is imported at its first use: this module is built per session
    from agent_cli.lsp.diagnostics import Diagnostic
    from agent_cli.lsp.servers import Findings, LanguageServers
    from agent_cli.sandbox.launch import Sandbox
    from agent_cli.tools.checks import Check, CheckRun

__all__ = ["COMMAND_FILES", "Feedback", "Report", "Snapshot"]

COMMAND_FILES = 5
"""Files of one command's changes that the language servers and checks are asked about."""
SNAPSHOT_MAX_FILES = 20_000
"""Past this many watched files, what a command changed is not told."""

NONE = "(?!)"  # a regex that matches nothing
Snapshot = dict[str, tuple[int, int]]  # workspace-relative path → (size, mtime in ns)
Trust = Callable[[], Awaitable[bool]]


class Report(NamedTuple):
    """What is added to a result: text for the model and the card, and the diagnostics."""

    text: str = ""
    diagnostics: tuple[Diagnostic, ...] = ()

    def added_to(self, result: ToolResult) -> ToolResult:
        if not self.text and not self.diagnostics:
            return result
        return result._replace(
            text=result.text + self.text, diagnostics=result.diagnostics + self.diagnostics
        )


class Feedback:
    """The language servers and check commands of one backend's workspace."""

    def __init__(
        self,
        workspace: Path,
        lsp: LspSettings,
        checks: Sequence[Check] = (),
        project_checks: Sequence[Check] = (),
        trust: Trust | None = None,
        sandbox: Sandbox | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.workspace = workspace.resolve()  # the servers know files by their real paths
        self.lsp = lsp
        self.sandbox = sandbox
        self.env = dict(os.environ if env is None else env)
        self._checks = list(checks)
        self._project_checks = list(project_checks)
        self._trust = trust
        self._trusted: bool | None = None if (project_checks or lsp.project) else False
        self._names_found: re.Pattern[str] | None = None  # see _names
        self._servers: LanguageServers | None = None
        self._making: asyncio.Lock | None = None
        self._round: list[str] = []  # files changed in this round, in order
        self._said: set[str] = set()  # notes said once
        self._background: set[asyncio.Task[None]] = set()
        self.closed = False

    # ------------------------------------------------------------ what is watched

    @property
    def servers(self) -> LanguageServers | None:
        """The language servers, once the first file of theirs was read or changed."""
        return self._servers

    def any_running(self) -> bool:
        return self._servers is not None and self._servers.any_running

    @property
    def _names(self) -> re.Pattern[str]:
        """One regex for the name patterns of every server found (a command's snapshot asks
        it of each file); looked up on PATH at the first need, not when a session starts."""
        if self._names_found is None:
            from agent_cli.lsp.config import find_servers

            found = find_servers(self.lsp.configs(project_trusted=True), self.env.get("PATH"))
            patterns = [p for entry in found if entry.program for p in entry.config.files]
            self._names_found = re.compile("|".join(map(fnmatch.translate, patterns)) or NONE)
        return self._names_found

    def _lsp_wants(self, name: str) -> bool:
        return self._names.match(name) is not None

    def _checks_want(self, relative: str) -> bool:
        return any(c.matches(relative) for c in (*self._checks, *self._project_checks))

    def wants(self, relative: str) -> bool:
        """Whether a change of `relative` is fed back (by a server or a check)."""
        name = PurePosixPath(relative).name
        return self._lsp_wants(name) or self._checks_want(relative)

    @property
    def watches(self) -> bool:
        """Whether anything may be fed back at all (language servers on, or checks)."""
        return self.lsp.enabled or bool(self._checks or self._project_checks)

    def watching(self) -> bool:
        """Whether a server was found or there are checks (else commands are not watched)."""
        return self._names.pattern != NONE or bool(self._checks or self._project_checks)

    # ------------------------------------------------------------ trust

    async def _is_trusted(self) -> bool:
        """Whether the workspace's own checks and servers may run (asked once)."""
        if self._trusted is None:
            self._trusted = bool(self._trust is not None and await self._trust())
        return self._trusted

    def _untrusted_note(self) -> list[str]:
        if self._trusted is not False or not (self._project_checks or self.lsp.project):
            return []
        return self._once(
            "the workspace's checks and language servers (.agent/config.toml) were left out: "
            "that file is not trusted yet; start agent on a terminal here to be asked"
        )

    def _once(self, note: str) -> list[str]:
        if note in self._said:
            return []
        self._said.add(note)
        return [note]

    async def _language_servers(self) -> LanguageServers | None:
        """Made on first need, with the workspace's own tables once it is trusted."""
        if self._servers is not None or self.closed:
            return self._servers
        if self._making is None:
            self._making = asyncio.Lock()
        async with self._making:
            if self._servers is None and not self.closed:
                from agent_cli.lsp.config import find_servers
                from agent_cli.lsp.servers import LanguageServers

                trusted = not self.lsp.project or await self._is_trusted()
                found = find_servers(self.lsp.configs(trusted), self.env.get("PATH"))
                self._servers = LanguageServers(
                    found,
                    self.workspace,
                    self.sandbox,
                    self.env,
                    self.lsp.settle_time,
                    self.lsp.start_timeout,
                )
        return self._servers

    async def _checks_for(self, relative: str, per_round: bool) -> list[Check]:
        mine = [c for c in self._checks if c.per_round == per_round and c.matches(relative)]
        theirs = [c for c in self._project_checks if c.per_round == per_round]
        theirs = [c for c in theirs if c.matches(relative)]
        if theirs and await self._is_trusted():
            mine += theirs
        return mine

    # ------------------------------------------------------------ events

    def touch(self, ctx: ToolContext, path: str) -> None:
        """A file is read, or about to change: start its servers (in the background)."""
        if self.closed or not self._lsp_wants(PurePosixPath(path).name):
            return
        try:
            real = ctx.workspace.resolve(path)
        except (ValueError, OSError):
            return
        if self._servers is not None:
            self._servers.touch(real)
            return
        task = asyncio.ensure_future(self._touch_later(real))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _touch_later(self, real: Path) -> None:
        servers = await self._language_servers()
        if servers is not None:
            servers.touch(real)

    async def after_edit(self, ctx: ToolContext, change: FileChange, text: str) -> Report:
        """After `change` was written (as `text`): what the servers and checks say."""
        from agent_cli.tools.checks import run_check

        relative, path = change.relative, change.path
        if not self.wants(relative) or self.closed:
            return Report()
        self._changed(relative)
        servers = await self._language_servers() if self._lsp_wants(path.name) else None
        checks = await self._checks_for(relative, per_round=False)
        lsp = servers.check(path, change.before, text) if servers is not None else _nothing()
        running = asyncio.gather(*(run_check(check, [relative], ctx) for check in checks))
        findings, runs = await asyncio.gather(lsp, running)
        return self._report([(relative, findings)], runs)

    def snapshot(self) -> Snapshot | None:
        """Size and mtime of each watched file (blocking: call it in a thread)."""
        from agent_cli.tools.search import file_stats

        return file_stats(self.workspace, SNAPSHOT_MAX_FILES, self.wants)

    async def after_command(self, ctx: ToolContext, before: Snapshot | None) -> Report:
        """After a command: what the servers and checks say of the files it changed."""
        from agent_cli.tools.checks import run_check

        if before is None or self.closed:
            return Report()
        after = await asyncio.to_thread(self.snapshot)
        if after is None:
            return Report()
        changed = sorted(path for path, seen in after.items() if before.get(path) != seen)
        for relative in changed:
            self._changed(relative)
        servers = await self._language_servers() if changed else None
        if servers is not None:  # files the servers know first: their before is known
            changed.sort(key=lambda relative: not servers.knows(self.workspace / relative))
        picked = changed[:COMMAND_FILES]
        checks = [(rel, await self._checks_for(rel, per_round=False)) for rel in picked]
        findings = await asyncio.gather(*(self._recheck(servers, rel) for rel in picked))
        runs = await asyncio.gather(
            *(run_check(check, [rel], ctx) for rel, found in checks for check in found)
        )
        report = self._report(list(zip(picked, findings, strict=True)), list(runs))
        if len(changed) > COMMAND_FILES:
            more = f"\n[{len(changed) - COMMAND_FILES} more changed files were not checked]"
            report = report._replace(text=report.text + more)
        return report

    async def _recheck(self, servers: LanguageServers | None, relative: str) -> Findings | None:
        path = self.workspace / relative
        if servers is None or not self._lsp_wants(path.name):
            return None
        try:
            text = await asyncio.to_thread(path.read_text, encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return await servers.check(path, None, text, known=False)

    def _changed(self, relative: str) -> None:
        if relative not in self._round:
            self._round.append(relative)

    async def end_round(self, ctx: ToolContext) -> Report:
        """After a round's calls: the `{files}` checks, with the files the round changed."""
        from agent_cli.tools.checks import run_check

        files, self._round = self._round, []
        if not files or self.closed:
            return Report()
        wanted: dict[Check, list[str]] = {}
        for relative in files:
            for check in await self._checks_for(relative, per_round=True):
                wanted.setdefault(check, []).append(relative)
        runs = await asyncio.gather(*(run_check(c, found, ctx) for c, found in wanted.items()))
        return self._report([], list(runs))

    # ------------------------------------------------------------ what the model reads

    def _report(
        self, findings: Sequence[tuple[str, Findings | None]], runs: Sequence[CheckRun]
    ) -> Report:
        from agent_cli.lsp.diagnostics import lines, ordered, summary

        parts: list[str] = []
        diagnostics: list[Diagnostic] = []
        notes: list[str] = self._untrusted_note()
        for relative, found in findings:
            if found is None:
                continue
            if found.servers:
                said = summary(found.diagnostics, found.fixed, found.compared)
                parts.append(
                    f"[diagnostics of {relative} after this change, from "
                    f"{', '.join(found.servers)}: {said}]"
                )
                parts += lines(found.diagnostics)
            diagnostics += ordered(found.diagnostics)
            notes += [note for text in found.notes for note in self._once_unless_fresh(text)]
        for run in runs:
            if run.failed:
                parts.append(run.report())
                diagnostics.append(run.diagnostic())
        parts += [f"[lsp: {note}]" for note in notes]
        if not parts:
            return Report()
        return Report("\n\n" + "\n".join(parts), tuple(diagnostics))

    def _once_unless_fresh(self, note: str) -> list[str]:
        """A server's note; one about a failed start is said once in a session."""
        return self._once(note) if "could not be started" in note else [note]

    # ------------------------------------------------------------ tools and end

    def equip(self, tools: ToolRegistry) -> ToolRegistry:
        """`tools` with the shell tool watched for changed files, and the LSP tools added
        (offered while a language server runs)."""
        if not self.watches:
            return tools
        from agent_cli.tools.lsp_tools import LSP_TOOLS

        equipped = [_watched(t) if t.effect is Effect.EXEC else t for t in tools]
        if self.lsp.enabled:
            equipped += [replace(t, available=self.any_running) for t in LSP_TOOLS]
        return ToolRegistry(equipped)

    async def aclose(self) -> None:
        self.closed = True
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        if self._servers is not None:
            await self._servers.aclose()


async def _nothing() -> None:
    return None


def _watched(tool: Tool) -> Tool:
    """A command tool that, when it may change files, tells what changed afterwards."""
    inner = tool.function

    async def watched(ctx: ToolContext, **arguments: Any) -> ToolResult:
        feedback = ctx.feedback
        if feedback is None or ctx.read_only or arguments.get("background"):
            return await inner(ctx, **arguments)
        if not await asyncio.to_thread(feedback.watching):  # looks on PATH, once
            return await inner(ctx, **arguments)
        before = await asyncio.to_thread(feedback.snapshot)
        result = await inner(ctx, **arguments)
        return (await feedback.after_command(ctx, before)).added_to(result)

    return replace(tool, function=watched)
