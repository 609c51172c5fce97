"""One run of a task: a headless `agent run` whose conversation is stored and marked.

It lives with the commands, not in `tasks`: it drives a run through `wiring`
and `agent run`'s front end, which sit above everything `tasks` may import.

It is `agent run`'s own path (the wiring, `run_once` and its printer) with
nobody at the screen: every approval is answered "no" at once by `run_once`'s
`Refusals`, and the count is said on stderr and kept in the conversation as a
notice, since a scheduled run is read later, not watched.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agent_cli.engine.events import Event, RunFinished
from agent_cli.errors import UsageError
from agent_cli.tasks.model import Task
from agent_cli.tasks.scheduler import Outcome

if TYPE_CHECKING:
    from agent_cli.engine.items import Conversation
    from agent_cli.engine.store import Store
    from agent_cli.settings import Settings


def refused_notice(count: int) -> str:
    return (
        f"{count} change(s) were refused: nobody is there to approve a scheduled task's "
        "changes — add the task with --mode full to allow them."
    )


def run_task(task: Task, quiet: bool = False) -> Outcome:
    """Run the task's prompt as a new conversation in its workspace, printing like `agent run`.

    Raises an AgentError when it cannot start (the workspace is gone, no
    provider is configured, a bad config file); a run that fails once started
    ends with stopped_reason "error" and its conversation says why.
    """
    from agent_cli import wiring
    from agent_cli.settings import Flags, load_settings

    workspace = Path(task.workspace)
    if not workspace.is_dir():
        raise UsageError(
            f"The workspace {workspace} of task {task.name} is not a folder any more — "
            f"remove the task (`agent tasks rm {task.id}`) and add it again with another one."
        )
    settings = load_settings(workspace, Flags(mode=task.mode))
    for warning in settings.warnings:
        print(f"agent: {warning}", file=sys.stderr)
    settings.require_provider()  # said before a conversation is left behind
    store = wiring.make_store()
    conversation = wiring.open_conversation(settings, store, wiring.Opening(), task.mode)
    conversation.set_title_from(f"{task.title} {task.prompt}")
    return asyncio.run(_converse(task, settings, conversation, store, quiet))


async def _converse(
    task: Task, settings: Settings, conversation: Conversation, store: Store, quiet: bool
) -> Outcome:
    from agent_cli import wiring
    from agent_cli.frontends.run import Refusals, run_once

    route = wiring.Route(settings)
    finished: list[RunFinished] = []
    refusals = Refusals()  # passed as the approver, so `run_once` says no text of its own

    def remember(event: Event) -> None:
        if type(event) is RunFinished:
            finished.append(event)

    try:
        session = wiring.routed_session(settings, conversation, store, route)
        session.events.subscribe(remember)
        exit_code = await run_once(session, task.prompt, "text", quiet, refusals)
    finally:
        await route.aclose()
    if refusals.count:
        text = refused_notice(refusals.count)
        print(f"agent: {text}", file=sys.stderr)
        session.notice(text, "warn")
    last = finished[-1] if finished else RunFinished("error", "The run did not finish.")
    return Outcome(
        stopped_reason=last.reason,
        conversation=conversation.id,
        error=last.error,
        refused=refusals.count,
        exit_code=exit_code,
    )
