"""Rich's Markdown for chat answers: left-aligned headings, themed code blocks, one parser.

Imported only when a block is first rendered (markdown-it and Pygments are
slow to import), by `markdown_render.Renderer.markdown`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from markdown_it import MarkdownIt
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, Markdown, MarkdownElement
from rich.syntax import Syntax

if TYPE_CHECKING:
    from markdown_it.token import Token
    from rich.console import JustifyMethod


class _Heading(Heading):
    """Every heading left-aligned: a centred h1 reads oddly in a chat transcript."""

    LEVEL_ALIGN: ClassVar[dict[str, JustifyMethod]] = dict.fromkeys(
        ("h1", "h2", "h3", "h4", "h5", "h6"), "left"
    )


class _CodeBlock(CodeBlock):
    """A fence on the theme's surface colour instead of the Pygments style's own."""

    background: str | None = None

    @classmethod
    def create(cls, markdown: Markdown, token: Token) -> CodeBlock:
        block = super().create(markdown, token)
        block.background = getattr(markdown, "code_background", None)  # type: ignore[attr-defined]
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        yield Syntax(
            code,
            self.lexer_name,
            theme=self.theme,
            word_wrap=True,
            padding=(0, 1),
            background_color=self.background,
        )


class ChatMarkdown(Markdown):
    """Rich's Markdown with left headings and themed code blocks.

    Rich builds a new MarkdownIt parser for every document (~0.5 ms); a block is a
    small document, so the parser is built once and shared.
    """

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "heading_open": _Heading,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
    }
    code_background: str | None = None
    _parser: ClassVar[MarkdownIt | None] = None

    def __init__(self, markup: str, code_theme: str, code_background: str | None) -> None:
        parser = ChatMarkdown._parser
        if parser is None:
            parser = ChatMarkdown._parser = MarkdownIt().enable("strikethrough").enable("table")
        self.markup = markup
        self.parsed = parser.parse(markup)
        self.code_theme = code_theme
        self.code_background = code_background
        self.justify = None
        self.style = "none"
        self.hyperlinks = False
        self.inline_code_lexer = None
        self.inline_code_theme = code_theme
