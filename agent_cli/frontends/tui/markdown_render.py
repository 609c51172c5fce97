"""Markdown and plain text rendered once into lines of segments, in the theme's colours.

Textual's `Markdown` widget builds several widgets per block (a paragraph, each
list item, each fence...), and every widget costs CSS matching, layout and
messages: an 80 KB answer is ~2,000 widgets and takes seconds to mount. The
transcript instead renders a finished block with Rich's Markdown into lines of
segments exactly once per width and theme, and shows them from a Line-API widget
(`MarkdownFlow`): no widget per block, nothing re-laid-out when more text comes.

Colours come from the Textual theme's variables (the same `$primary`,
`$accent`... the `.tcss` files use), so a theme change recolours answers too.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from rich.cells import chop_cells
from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.text import Text
from rich.theme import Theme as RichTheme
from textual.color import Color

from agent_cli.frontends.tui.themes import CODE_THEMES

if TYPE_CHECKING:
    from textual.app import App

Line = list[Segment]
DARK_CODE_THEME = "monokai"
LIGHT_CODE_THEME = "friendly"


@dataclass(frozen=True)
class Palette:
    """The few theme colours the renderer needs, as hex strings Rich can parse."""

    foreground: str
    muted: str
    primary: str
    accent: str
    secondary: str
    surface: str
    code_theme: str

    @classmethod
    def from_app(cls, app: App) -> Palette:
        variables = app.get_css_variables()
        theme = app.current_theme
        background = Color.parse(variables.get("background", "#000000"))
        foreground = Color.parse(variables.get("foreground", "#ffffff"))

        def color(name: str, fallback: Color) -> str:
            try:
                return Color.parse(variables[name]).hex6
            except (KeyError, ValueError):
                return fallback.hex6

        code_theme = CODE_THEMES.get(
            theme.name, DARK_CODE_THEME if theme.dark else LIGHT_CODE_THEME
        )
        return cls(
            foreground=foreground.hex6,
            muted=foreground.blend(background, 0.4).hex6,
            primary=color("text-primary", foreground),
            accent=color("text-accent", foreground),
            secondary=color("text-secondary", foreground),
            surface=color("surface", background),
            code_theme=code_theme,
        )

    def rich_theme(self) -> RichTheme:
        """Rich's markdown styles in these colours (Rich's defaults are fixed ANSI ones)."""
        return RichTheme(
            {
                "markdown.code": f"bold {self.accent}",
                "markdown.code_block": f"{self.foreground} on {self.surface}",
                "markdown.block_quote": f"italic {self.muted}",
                "markdown.list": self.accent,
                "markdown.item.bullet": f"bold {self.accent}",
                "markdown.item.number": self.accent,
                "markdown.hr": self.muted,
                "markdown.h1.border": self.primary,
                "markdown.h1": f"bold underline {self.primary}",
                "markdown.h2": f"bold {self.primary}",
                "markdown.h3": f"bold {self.secondary}",
                "markdown.h4": f"italic {self.secondary}",
                "markdown.h5": "italic",
                "markdown.h6": self.muted,
                "markdown.link": self.accent,
                "markdown.link_url": f"underline {self.muted}",
                "markdown.table.border": self.muted,
                "markdown.table.header": f"bold {self.primary}",
                "markdown.kbd": f"bold {self.accent}",
            },
            inherit=True,
        )


class Renderer:
    """Renders Markdown and plain text into lines of segments for one theme."""

    def __init__(self, console: Console, palette: Palette) -> None:
        self.console = console
        self.palette = palette
        self._theme = palette.rich_theme()
        self.theme_name = ""

    def markdown(self, source: str, width: int) -> list[Line]:
        # Imported here: markdown-it and Pygments cost ~70 ms that a start need not pay.
        from agent_cli.frontends.tui.chat_markdown import ChatMarkdown

        document = ChatMarkdown(source, self.palette.code_theme, self.palette.surface)
        lines = self._lines(document, width)
        # Rich opens some blocks (lists, quotes, tables) with a blank line; the flow
        # puts exactly one blank line between blocks itself.
        start, end = 0, len(lines)
        while start < end and not _text(lines[start]).strip():
            start += 1
        while end > start and not _text(lines[end - 1]).strip():
            end -= 1
        return lines[start:end]

    def plain(self, text: str, width: int, style: str = "") -> list[Line]:
        """Text as written, wrapped (the live tail of a streaming answer)."""
        return self._lines(Text(text, style=style, end=""), width)

    def chopped(self, text: str, width: int) -> list[Line]:
        """Text cut into lines of `width` cells, no word wrapping: a block's stand-in until
        it is rendered (at a model's pace for a moment; in a flood, as it scrolls by).
        Far cheaper than `plain`, and as many lines as the flow estimates for ASCII."""
        width = max(1, width)
        lines: list[Line] = []
        for line in text.expandtabs(8).split("\n"):
            pieces = chop_cells(line, width) if line else []
            lines += [[Segment(piece)] for piece in pieces] if pieces else [[]]
        return lines

    def syntax(self, code: str, lexer: str, width: int) -> list[Line]:
        """Code or a diff, coloured with the theme's Pygments style."""
        from rich.syntax import Syntax

        syntax = Syntax(
            code,
            lexer,
            theme=self.palette.code_theme,
            word_wrap=True,
            background_color=self.palette.surface,
        )
        return self._lines(syntax, width)

    def _lines(self, renderable: RenderableType, width: int) -> list[Line]:
        width = max(1, width)
        console = self.console
        options = console.options.update(width=width, max_width=width, height=None)
        with console.use_theme(self._theme):
            segments = list(console.render(renderable, options))
        return list(
            Segment.split_and_crop_lines(segments, width, pad=False, include_new_lines=False)
        )


def _text(line: Line) -> str:
    return "".join(segment.text for segment in line)


WARM_UP_SAMPLE = """\
# Title

Some *text*, `code` and a [link](https://example.com).

- a point

1. a step

> a quote

| a | b |
|---|---|
| 1 | 2 |

```python
def f(x: int) -> int:
    return x  # a comment
```
"""


_warmed = threading.Event()


def warm_up(palette: Palette) -> None:
    """Render a sample once, off the event loop, so the first answer does not pay for
    importing markdown-it and Pygments' lexers and compiling their patterns (~0.1 s)."""
    console = Console(file=io.StringIO(), width=80, color_system="truecolor")
    renderer = Renderer(console, palette)
    renderer.markdown(WARM_UP_SAMPLE, 80)
    renderer.syntax("--- a\n+++ b\n@@ -1 +1 @@\n-a\n+b\n", "diff", 80)
    _warmed.set()


def warmed() -> bool:
    """Whether a `warm_up` has finished in this process (the benchmarks wait for it)."""
    return _warmed.is_set()


_renderers: WeakKeyDictionary[App, Renderer] = WeakKeyDictionary()


def renderer_for(app: App) -> Renderer:
    """The app's renderer for its current theme (built again after a theme change)."""
    renderer = _renderers.get(app)
    if renderer is None or renderer.theme_name != app.current_theme.name:
        renderer = _renderers[app] = Renderer(app.console, Palette.from_app(app))
        renderer.theme_name = app.current_theme.name
    return renderer
