"""A unified diff with old and new line numbers in a gutter and the file's syntax colours.

Drawn a line at a time (Textual's line API): only the rows on screen are coloured,
each when first shown, so a 5,000-line diff costs a screenful, not the whole diff.
A row is lexed alone (Pygments, the language from the file's extension): a
string that spans lines may be coloured as code, a small price for never lexing
the whole file. Added and removed rows keep their tinted background.
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING, NamedTuple

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.color import Color
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from agent_cli.frontends.tui.markdown_render import renderer_for

if TYPE_CHECKING:
    from pygments.lexer import Lexer
    from rich.syntax import PygmentsSyntaxTheme

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class Row(NamedTuple):
    kind: str  # "+", "-", " " (a line of the file), "@" (a hunk's header), "" (other)
    old: int  # its line number before the change (0: none)
    new: int  # and after
    text: str


def parse(diff: str) -> tuple[list[Row], str]:
    """The diff's rows with their line numbers, and the (last) file it changes.

    A hunk's header says how many old and new lines follow; while some are left, a
    line is one of them, even `--- x` (a removed `-- x`, an SQL or Lua comment) or
    `+++ x`. Only outside those counts are `--- `/`+++ ` a file's headers."""
    rows: list[Row] = []
    path = ""
    old = new = 0
    old_left = new_left = 0  # the current hunk's lines still to come
    for line in diff.rstrip("\n").split("\n"):
        in_hunk = old_left > 0 or new_left > 0
        hunk = None if in_hunk else _HUNK.match(line)
        if hunk:
            old, new = int(hunk[1]), int(hunk[3])
            old_left = int(hunk[2]) if hunk[2] is not None else 1
            new_left = int(hunk[4]) if hunk[4] is not None else 1
            rows.append(Row("@", 0, 0, line))
        elif not in_hunk and line.startswith(("+++ ", "--- ")):
            if line.startswith("+++ "):
                path = line[4:].split("\t")[0].removeprefix("b/")
            rows.append(Row("", 0, 0, line))
        elif line[:1] == "+":
            rows.append(Row("+", 0, new, line[1:]))
            new, new_left = new + 1, new_left - 1
        elif line[:1] == "-":
            rows.append(Row("-", old, 0, line[1:]))
            old, old_left = old + 1, old_left - 1
        elif line[:1] == " " or (in_hunk and not line):  # an empty line: a blank context line
            rows.append(Row(" ", old, new, line[1:]))
            old, new = old + 1, new + 1
            old_left, new_left = old_left - 1, new_left - 1
        else:  # "\ No newline at end of file", or text that is no diff
            rows.append(Row("", 0, 0, line))
    return rows, path


def lexer_for(path: str) -> Lexer | None:
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def syntax_theme(name: str) -> PygmentsSyntaxTheme:
    from rich.syntax import PygmentsSyntaxTheme  # Pygments: not before the first frame

    return PygmentsSyntaxTheme(name)


def highlighted(code: str, lexer: Lexer, theme: PygmentsSyntaxTheme) -> Text:
    """One line of code in the theme's token colours (no background: the row has its own)."""
    text = Text(code)
    offset = 0
    for token, value in lexer.get_tokens(code):
        style = theme.get_style_for_token(token)
        colour = Style(color=style.color, bold=style.bold, italic=style.italic)
        text.stylize(colour, offset, offset + len(value))
        offset += len(value)
    return text


class DiffView(Widget):
    """Coloured from the current theme; a theme switch draws it again in the new one."""

    DEFAULT_CSS = "DiffView { height: auto; }"  # as tall as its rows, wherever it is shown

    def __init__(self, diff: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows, path = parse(diff)
        self.lexer = lexer_for(path) if path else None
        numbers = [max(r.old, r.new) for r in self.rows]
        self.digits = len(str(max(numbers, default=0)))
        self._starts: list[int] = []  # the first screen line of each row, at `_width`
        self._width = -1
        self._drawn: dict[int, list[Strip]] = {}  # row -> its screen lines
        self._look: tuple[object, ...] = ()
        self._total = 0
        self._theme: PygmentsSyntaxTheme | None = None

    @property
    def numbers_width(self) -> int:
        return 2 * self.digits + 3  # "old new " and the sign

    def _layout(self, width: int) -> None:
        if width == self._width:
            return
        self._width, self._drawn = width, {}
        room = max(1, width - self.numbers_width)
        starts, line = [], 0
        for row in self.rows:
            starts.append(line)
            wrap = max(1, width) if row.kind in ("@", "") else room  # headers have no gutter
            line += max(1, -(-len(row.text.expandtabs()) // wrap))
        self._starts, self._total = starts, line

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._layout(width)
        return self._total

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        self._layout(width)
        look = (self.app.theme, width)
        if look != self._look:
            self._look, self._drawn, self._theme = look, {}, None
        if not self.rows or y >= self._total:
            return Strip.blank(width)
        index = bisect.bisect_right(self._starts, y) - 1
        lines = self._drawn.get(index)
        if lines is None:
            lines = self._drawn[index] = self._draw(self.rows[index], width)
        part = y - self._starts[index]
        return lines[part] if part < len(lines) else Strip.blank(width)

    def _draw(self, row: Row, width: int) -> list[Strip]:
        palette = renderer_for(self.app).palette
        variables = self.app.get_css_variables()
        muted = Style(color=palette.muted)
        surface = Color.parse(palette.surface).rich_color
        if row.kind in ("@", ""):
            style = Style(color=palette.accent) if row.kind == "@" else muted
            text = Text(row.text.expandtabs(), style=style)
            return self._strips(Text(), text, width, Style(bgcolor=surface), wrap_at=width)
        tint = {"+": "success-muted", "-": "error-muted"}.get(row.kind)
        background = Color.parse(variables[tint]).rich_color if tint in variables else surface
        old = str(row.old) if row.old else ""
        new = str(row.new) if row.new else ""
        gutter = Text(f"{old:>{self.digits}} {new:>{self.digits}} ", style=muted)
        sign = {"+": variables.get("text-success"), "-": variables.get("text-error")}
        said = sign.get(row.kind)
        gutter.append(row.kind, Style(color=Color.parse(said).rich_color) if said else muted)
        code = self._highlight(row.text.expandtabs(), palette.code_theme)
        return self._strips(
            gutter, code, width, Style(bgcolor=background), width - self.numbers_width
        )

    def _highlight(self, code: str, theme_name: str) -> Text:
        if self.lexer is None:
            return Text(code)
        if self._theme is None:
            self._theme = syntax_theme(theme_name)
        return highlighted(code, self.lexer, self._theme)

    def _strips(
        self, gutter: Text, text: Text, width: int, background: Style, wrap_at: int
    ) -> list[Strip]:
        """The row's screen lines: its text cut at `wrap_at`, the gutter on the first."""
        wrap_at = max(1, wrap_at)
        pieces = text.divide(range(wrap_at, len(text.plain), wrap_at)) if text.plain else [text]
        console = self.app.console
        strips = []
        for number, piece in enumerate(pieces):
            lead = gutter if number == 0 else Text(" " * gutter.cell_len)
            line = Text.assemble(lead, piece)
            segments = list(line.render(console))
            strip = Strip(Segment.apply_style(segments, post_style=None, style=background))
            strips.append(strip.extend_cell_length(width, background).crop(0, width))
        return strips
