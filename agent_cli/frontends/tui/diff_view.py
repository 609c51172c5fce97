"""A unified diff (or any code), coloured with the theme's Pygments style."""

from __future__ import annotations

from textual.app import RenderResult
from textual.widget import Widget

from agent_cli.frontends.tui.markdown_render import renderer_for


class DiffView(Widget):
    """Rendered from the current theme each time, so a theme switch recolours it."""

    def __init__(self, code: str, lexer: str = "diff") -> None:
        super().__init__()
        self.code = code.rstrip("\n")
        self.lexer = lexer

    def render(self) -> RenderResult:
        from rich.syntax import Syntax  # imported when a diff is first shown

        palette = renderer_for(self.app).palette
        return Syntax(
            self.code,
            self.lexer,
            theme=palette.code_theme,
            background_color=palette.surface,
            word_wrap=True,
        )
