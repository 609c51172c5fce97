"""The pickers slash commands open in the TUI: what each lists, marks and runs.

A slash command's reply asks for one (`pick_model`, `pick_theme`, ...); `build`
makes the picker and says which command line the choice completes (`/model`
+ the id chosen). Every list comes from `Interactive` and its ports, as the
commands' own tables do, so the picker and the table never disagree.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from textual.app import App
from textual.content import Content
from textual.widgets.option_list import Option

from agent_cli.frontends.interactive import Interactive
from agent_cli.frontends.tui.picker import Picker, labelled_option, message_option, session_option
from agent_cli.policy.modes import MODES

MODE_NOTES = {
    "ask": "asks before each change or command",
    "auto": "edits and safe commands run; the rest asks",
    "read-only": "reads only; nothing changes",
    "full": "everything runs without asking",
    "plan": "reads, then ends with a plan to approve",
}

Chooser = tuple[Picker, str]  # the picker, and the command its choice is appended to


async def build(action: str, interactive: Interactive, app: App[int]) -> Chooser | None:
    """The picker for a reply's `pick_…` action; None when there is nothing to pick."""
    builders: dict[str, Callable[[], Awaitable[Chooser | None]]] = {
        "pick_session": lambda: _sessions(interactive),
        "pick_model": lambda: _models(interactive),
        "pick_agent": lambda: _agents(interactive),
        "pick_shell": lambda: _shells(interactive),
        "pick_mode": lambda: _modes(interactive),
        "pick_theme": lambda: _themes(app),
        "pick_skill": lambda: _skills(interactive),
        "pick_mcp": lambda: _servers(interactive),
        "pick_rewind": lambda: _rewind(interactive),
    }
    return await builders[action]()


async def _sessions(interactive: Interactive) -> Chooser | None:
    store = interactive.store
    summaries = store.list(str(interactive.workspace)) if store else []
    if not summaries:
        return None
    options = [session_option(summary) for summary in summaries]
    current = interactive.session.conversation.id
    return Picker("Resume a conversation", options, current), "/sessions"


async def _models(interactive: Interactive) -> Chooser | None:
    route = interactive.route
    models = await route.models() if route is not None else []
    if not models:
        return None
    options = [
        labelled_option(m.id, f"{m.context_window:,} tokens" if m.context_window else "")
        for m in models
    ]
    conversation = interactive.session.conversation
    current = conversation.model.partition("/")[2]
    note = f"The model is {conversation.model}. {interactive.usage_text()}"
    return Picker("Switch the model", options, current, note=note), "/model"


async def _agents(interactive: Interactive) -> Chooser | None:
    agents = interactive.agents
    if agents is None:
        return None
    options = [labelled_option("builtin", "this agent")]
    for choice in agents.choices():
        note = choice.name if not choice.missing else f"missing {', '.join(choice.missing)}"
        options.append(labelled_option(choice.id, note, enabled=not choice.missing))
    current = interactive.session.conversation.agent
    return Picker("Hand the conversation to", options, current), "/agent"


async def _shells(interactive: Interactive) -> Chooser | None:
    shells = interactive.session.shells
    running = shells.running() if shells is not None else []
    if not running:
        return None
    options = [labelled_option(job.id, job.command.split("\n", 1)[0]) for job in running]
    return Picker("End a background command", options), "/shells kill"


async def _modes(interactive: Interactive) -> Chooser:
    options = [labelled_option(mode, MODE_NOTES.get(mode, "")) for mode in MODES]
    return Picker("Switch the mode", options, interactive.session.mode), "/mode"


async def _themes(app: App[int]) -> Chooser | None:
    names = list(app.available_themes)
    if not names:
        return None
    ours = sorted(n for n in names if n.startswith("agent-"))
    others = sorted(n for n in names if n not in ours)
    was = app.theme

    def preview(name: str | None) -> None:
        app.theme = was if name is None else name  # Escape puts the theme back

    options = [labelled_option(name, "dark" if app.available_themes[name].dark else "light")
               for name in [*ours, *others]]  # fmt: skip
    return Picker("Switch the theme", options, was, preview=preview), "/theme"


async def _skills(interactive: Interactive) -> Chooser | None:
    bench = interactive.bench
    if bench is None:
        return None
    rows = (await asyncio.to_thread(bench.skills)).rows
    if not rows:
        return None
    options = []
    for name, state, source, _what in rows:
        switch = "off" if state == "on" else "on"
        note = f"{state} · {source} · Enter switches it {switch}"
        label = Content.from_markup("$name  [$foreground-muted]$note", name=name, note=note)
        options.append(Option(label, id=f"{switch} {name}"))
    return Picker("Switch a skill on or off", options), "/skills"


async def _servers(interactive: Interactive) -> Chooser | None:
    bench = interactive.bench
    if bench is None:
        return None
    rows = (await asyncio.to_thread(bench.mcp_servers)).rows
    if not rows:
        return None
    options = [
        labelled_option(name, f"{state} · {where} · Enter restarts it")
        for name, _how, where, state in rows
    ]
    return Picker("Restart an MCP server", options), "/mcp restart"


async def _rewind(interactive: Interactive) -> Chooser | None:
    points = interactive.session.rewind_points()  # `/rewind` checked it can be done
    if not points:
        return None
    options = [message_option(n, point.text, point.id) for n, point in enumerate(points, 1)]
    return Picker("Rewind to a message", options, points[-1].id, mark=False), "/rewind"
