"""The first start's welcome, where the transcript will be: the workspace, the model and
the mode, and where to begin. It goes with the first message."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.widgets import Static

from agent_cli.frontends.tui.steady import Steady

HINTS = (
    ("/help", "the commands and keys"),
    ("@", "attach a file"),
    ("!", "run a shell command"),
    ("Ctrl+J", "a new line"),
)


class Welcome(Steady, Static):
    """A few lines, in the theme's muted colours."""

    def __init__(self, workspace: Path, model: str, mode: str) -> None:
        self.workspace = workspace
        super().__init__(self._lines(model, mode), id="welcome")

    def show(self, model: str, mode: str) -> None:
        """The model and mode as the session has them (it may open after the first frame)."""
        self.update(self._lines(model, mode))

    def _lines(self, model: str, mode: str) -> Content:
        lines = [
            # The folder's name, as on the status line (the full path is its tooltip).
            Content.from_markup("[b]agent[/b] in [b]$where", where=self.workspace.name or "/"),
            Content.from_markup(
                "[$foreground-muted]model [/]$model[$foreground-muted] · mode [/]$mode",
                model=model or "…",
                mode=mode,
            ),
            Content(""),
        ]
        for key, what in HINTS:
            lines.append(Content.from_markup("[b $accent]$key[/]$what", key=f"{key:<8}", what=what))
        return Content("\n").join(lines)
