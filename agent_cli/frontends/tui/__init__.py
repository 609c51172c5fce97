"""The Textual TUI (SPEC §12). Importing this package is cheap: Textual loads in `run_tui`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_cli.frontends.interactive import Interactive
    from agent_cli.settings import Settings

__all__ = ["run_tui"]


async def run_tui(interactive: Interactive, settings: Settings) -> int:
    """Run the TUI on this terminal until the person quits; 0 on a normal quit."""
    from agent_cli.frontends.tui.app import AgentApp

    app = AgentApp(interactive, settings)
    try:
        result = await app.run_async()
    finally:
        app.close_feed()  # the session outlives the app: stop listening to it
    if app.return_code:
        return app.return_code
    return result if isinstance(result, int) else 0
