"""The CLI's commands, one module per command (group), all registered by `register`.

They live apart from `cli.py` so that `agent --version` never imports Typer.
"""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    from agent_cli.commands import mcp, models, providers, root, run, skills, undo

    mcp.register(app)
    models.register(app)
    providers.register(app)
    root.register(app)
    run.register(app)
    skills.register(app)
    undo.register(app)
