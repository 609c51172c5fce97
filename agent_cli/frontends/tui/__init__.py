"""The Textual TUI (SPEC §12). Importing this package is cheap: Textual loads in `run_tui`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_cli.frontends.interactive import Interactive
    from agent_cli.settings import Settings

__all__ = ["run_tui"]


async def run_tui(
    interactive: Interactive | None,
    settings: Settings,
    *,
    opening: Callable[[], Awaitable[Interactive]] | None = None,
) -> int:
    """Run the TUI on this terminal until the person quits; 0 on a normal quit.

    Without `interactive`, `opening` builds it after the first frame; then the session
    it opened is closed here, and an error opening it is raised once the app has ended."""
    from agent_cli.frontends.tui.app import AgentApp

    app = AgentApp(interactive, settings, opening=opening)
    try:
        result = await app.run_async()
    finally:
        app.close_feed()  # the session outlives the app: stop listening to it
        if interactive is None and app.ready:
            await app.interactive.aclose()
    if app.opening_error is not None:
        raise app.opening_error
    if app.ready:
        _resume_line(app.interactive)
    if app.return_code:
        return app.return_code
    return result if isinstance(result, int) else 0


def _resume_line(interactive: Interactive) -> None:
    """On quit, one line on the terminal saying how to come back (as Codex does): only
    for a conversation that has a message in it and is stored."""
    from agent_cli.engine.items import UserItem

    conversation = interactive.session.conversation
    if interactive.store is None or not any(
        isinstance(item, UserItem) for item in conversation.items
    ):
        return
    print(f"To go on: agent --continue (or agent --resume {conversation.id})")
