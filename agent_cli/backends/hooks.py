"""Hooks: the person's commands run at points of a run, the event as JSON on stdin.

Configured in `[hooks]` (settings.py reads them), each event a list of
commands run one after another by `/bin/sh -c` in the workspace, in their own
process group, with the hook's timeout (the whole group is killed when it
passes, and a warning notice says so):

- `user_prompt_submit`: a message starts a run, before the model sees it;
- `pre_tool_use`: a call is about to be decided on (before its approval card);
  a hook that exits 2 blocks it, and its stderr is what the model reads;
- `post_tool_use`: a call ran (done or error);
- `notification`: an approval card appears, or the loop gives a warning
  (a limit stopped the run, a retry, tools left out) — what would make a
  person look at the screen; started without waiting, so a card is never held
  up, and waited for before the `stop` hook;
- `stop`: a run ended by itself (answered, a limit, an error); not after a stop
  the person asked for.

Any other non-zero exit is a warning notice and the run goes on; stdout is
ignored. A hook's `tools` patterns (fnmatch) limit its tool events to matching
tool names. Hooks never get secrets: the environment is the user's without
variables named like keys, tokens, secrets or passwords, and the JSON holds
only the event. The workspace's own hooks (`.agent/config.toml`) run only
after the person trusted that file, as for the workspace's MCP servers.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from agent_cli.engine.backend import Run
from agent_cli.engine.items import ToolItem
from agent_cli.settings import HOOK_EVENTS, Hook
from agent_cli.tools.environment import EnvironmentPolicy
from agent_cli.tools.processes import kill_group, start_in_group
from agent_cli.tools.shell import SHELL

log = logging.getLogger(__name__)

BLOCK_EXIT_CODE = 2  # a pre_tool_use hook exiting with this blocks the call
HOOK_RESULT_CAP = 4096  # characters of a call's result in the post_tool_use JSON
HOOK_STDERR_CAP = 8192  # characters of a hook's stderr kept (what a blocked call's model reads)
COMMAND_SHOWN = 60  # characters of a hook's command in a notice


class ProjectHook(NamedTuple):
    """A workspace hook, as the person is asked to trust it."""

    event: str
    hook: Hook


# Asked once per backend when the workspace has hooks: True when they may run.
TrustHooks = Callable[[list[ProjectHook]], Awaitable[bool]]


class HookRun(NamedTuple):
    """How one hook command ended."""

    code: int | None  # None: it timed out or could not start
    stderr: str
    problem: str = ""  # why it did not run to an exit code


class Hooks:
    """The hooks of one conversation's backend, and running them."""

    def __init__(
        self,
        workspace: Path,
        hooks: Mapping[str, Sequence[Hook]],
        project: Mapping[str, Sequence[Hook]] | None = None,
        trust: TrustHooks | None = None,
        environ: Mapping[str, str] | None = None,
        env_policy: EnvironmentPolicy | None = None,
    ) -> None:
        self.workspace = workspace
        self._hooks = {event: list(hooks.get(event, ())) for event in HOOK_EVENTS}
        self._project = [
            ProjectHook(event, hook) for event, found in (project or {}).items() for hook in found
        ]
        self._trust = trust
        # What commands get ([shell_environment]; by default all but secret-looking names).
        policy = env_policy or EnvironmentPolicy()
        self._env = policy.apply(environ if environ is not None else os.environ)
        self._background: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------ trust

    async def prepare(self, run: Run) -> None:
        """Decide once whether the workspace's hooks run; a no leaves them out with a notice."""
        project, self._project = self._project, []
        if not project:
            return
        if self._trust is not None and await self._trust(project):
            for entry in project:
                self._hooks[entry.event].append(entry.hook)
            return
        source = project[0].hook.source
        run.notice(
            f"The hooks in {source} were ignored: this workspace's hooks are not trusted yet. "
            "Start agent on a terminal here to be asked about them.",
            "warn",
        )

    # ----------------------------------------------------------- events

    async def user_prompt_submit(self, run: Run, prompt: str) -> None:
        await self._fire(run, "user_prompt_submit", {"prompt": prompt})

    async def pre_tool_use(self, run: Run, item: ToolItem, args: Mapping[str, Any]) -> str | None:
        """Run the pre_tool_use hooks; the text the model reads when one blocks the call."""
        data = _call_data(item) | {"arguments": dict(args)}
        for hook in self._for_tool("pre_tool_use", item.tool):
            done = await self._run_one(run, "pre_tool_use", hook, data)
            if done.code == BLOCK_EXIT_CODE:
                return done.stderr.strip() or "A pre_tool_use hook blocked this call."
        return None

    async def post_tool_use(self, run: Run, item: ToolItem, args: Mapping[str, Any]) -> None:
        if not self._for_tool("post_tool_use", item.tool):
            return
        result = item.result
        data = _call_data(item) | {
            "arguments": dict(args),
            "state": item.state,
            "is_error": item.is_error,
            "result": result[:HOOK_RESULT_CAP],
            "result_truncated": len(result) > HOOK_RESULT_CAP,
            "file": item.file,
        }
        await self._fire(run, "post_tool_use", data, tool=item.tool)

    def notify(self, run: Run, data: dict[str, Any]) -> None:
        """Start the notification hooks without waiting: an approval card is not held up."""
        if not self._hooks["notification"]:
            return
        task = asyncio.ensure_future(self._fire(run, "notification", data))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def approval(self, run: Run, item: ToolItem, kind: str) -> None:
        """An approval card appears: tell the notification hooks."""
        self.notify(run, approval_note(item, kind))

    async def stop(self, run: Run, reason: str, error: str = "") -> None:
        data = {"reason": reason, "rounds": run.rounds}
        if error:
            data["error"] = error
        await self._fire(run, "stop", data)

    async def drain(self) -> None:
        """Wait for notification hooks still running (each within its timeout)."""
        while self._background:
            tasks = list(self._background)
            await asyncio.gather(*tasks, return_exceptions=True)
            self._background.difference_update(tasks)

    async def aclose(self) -> None:
        """Stop notification hooks still running (their process groups are killed)."""
        for task in self._background:
            task.cancel()
        await self.drain()

    # ---------------------------------------------------------- running

    def _for_tool(self, event: str, tool: str) -> list[Hook]:
        return [
            h
            for h in self._hooks[event]
            if not h.tools or any(fnmatch.fnmatchcase(tool, p) for p in h.tools)
        ]

    async def _fire(self, run: Run, event: str, data: dict[str, Any], tool: str = "") -> None:
        hooks = self._for_tool(event, tool) if tool else self._hooks[event]
        for hook in hooks:
            await self._run_one(run, event, hook, data)

    async def _run_one(self, run: Run, event: str, hook: Hook, data: dict[str, Any]) -> HookRun:
        payload = {
            "event": event,
            "conversation": run.conversation.id,
            "workspace": str(self.workspace),
            "mode": run.mode,
            **data,
        }
        done = await run_hook(hook, payload, self.workspace, self._env)
        blocked = event == "pre_tool_use" and done.code == BLOCK_EXIT_CODE
        if done.problem or (done.code != 0 and not blocked):
            run.notice(_warning(event, hook, done), "warn")
        return done


async def run_hook(hook: Hook, payload: dict[str, Any], cwd: Path, env: dict[str, str]) -> HookRun:
    """Run one hook command with `payload` as JSON on stdin, within its timeout."""
    data = json.dumps(payload, ensure_ascii=False, default=str).encode()
    try:
        proc = await start_in_group(  # its own process group: a timeout kills all of it
            SHELL, "-c", hook.command, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
    except OSError as e:
        return HookRun(None, "", f"could not be started ({e.strerror or e})")
    talk = asyncio.ensure_future(proc.communicate(data))
    try:
        done, _ = await asyncio.wait({talk}, timeout=hook.timeout)
    except asyncio.CancelledError:
        await _end(proc.pid, talk)
        raise
    if not done:
        await _end(proc.pid, talk)
        return HookRun(None, "", f"took longer than {hook.timeout:g} s and was stopped")
    _, stderr = talk.result()
    text = stderr.decode("utf-8", "replace")[:HOOK_STDERR_CAP]
    log.debug("hook %r exited %s", hook.command, proc.returncode)
    return HookRun(proc.returncode, text)


async def _end(pgid: int, talk: asyncio.Future[Any]) -> None:
    """Kill the hook's whole process group, then let its pipes close and the shell be reaped."""
    await kill_group(pgid)
    with contextlib.suppress(TimeoutError, OSError):
        await asyncio.wait_for(asyncio.shield(talk), 1.0)
    talk.cancel()


def _call_data(item: ToolItem) -> dict[str, Any]:
    return {
        "tool": item.tool,
        "title": item.title,
        "call_id": item.call_id,
        "item": item.id,
        "parent": item.parent,
    }


def _warning(event: str, hook: Hook, done: HookRun) -> str:
    command = " ".join(hook.command.split())
    if len(command) > COMMAND_SHOWN:
        command = command[: COMMAND_SHOWN - 1] + "…"
    where = f"The {event} hook `{command}`" + (f" (from {hook.source})" if hook.source else "")
    if done.problem:
        return f"{where} {done.problem}; the run goes on."
    said = done.stderr.strip().splitlines()
    reason = f": {said[-1]}" if said else ""
    return f"{where} failed with exit code {done.code}{reason}; the run goes on."


def approval_note(item: ToolItem, kind: str) -> dict[str, str]:
    """The notification hooks' JSON when an approval card appears."""
    return {
        "kind": "approval",
        "approval": kind,
        "text": f"Waiting for a yes: {item.title or item.tool}",
        "tool": item.tool,
        "title": item.title,
        "item": item.id,
        "parent": item.parent,
    }


def trust_question(file: Path, hooks: Sequence[ProjectHook]) -> str:
    """What the person is asked about a workspace's hooks: exactly what would run."""
    lines = [f"{file} wants to run these commands (as hooks, checks, language servers):"]
    lines += [f"  {entry.event}: {entry.hook.command}" for entry in hooks]
    lines.append("They run as you, with your files. Trust them in this workspace?")
    return "\n".join(lines)
