"""The edit card's diff: line numbers in a gutter, the file's syntax colours, drawn lazily."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from agent_cli.frontends.tui.diff_view import DiffView, parse
from tests.frontends.tui.support import until
from tests.frontends.tui.test_snapshots import DIFF


class Shown(App[None]):
    CSS = "DiffView { height: auto; }"  # as diff_view.tcss says

    def __init__(self, diff: str) -> None:
        super().__init__()
        self.diff = diff

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield DiffView(self.diff)


def line_text(view: DiffView, y: int) -> str:
    return "".join(segment.text for segment in view.render_line(y)).rstrip()


async def test_the_diff_has_old_and_new_numbers_and_the_files_colours():
    app = Shown(DIFF)
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(DiffView)
        await until(pilot, lambda: view.size.height > 0)  # laid out
        assert line_text(view, 3) == "1 1  def greet(name: str) -> str:"
        assert line_text(view, 4) == '2   -    return f"hello {name}"'
        assert line_text(view, 5) == '  2 +    return f"hi {name}"'
        colours = {s.style.color for s in view.render_line(3) if s.text.strip() and s.style}
        assert len(colours) >= 3, "a Python line in several colours, not one"


async def test_a_long_diff_draws_only_the_rows_on_screen():
    body = "".join(f"+line {n} = {n}\n" for n in range(5000))
    diff = f"--- a/big.py\n+++ b/big.py\n@@ -0,0 +1,5000 @@\n{body}"
    assert len(parse(diff)[0]) == 5003
    app = Shown(diff)
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(DiffView)
        await until(pilot, lambda: view.size.height == 5003)  # a row a line at 80 columns
        await until(pilot, lambda: bool(view._drawn))  # the first screen is drawn
        assert len(view._drawn) < 50, "a screenful drawn, not 5,000 rows"


def test_a_line_that_looks_like_a_file_header_inside_a_hunk_is_a_line():
    """A removed SQL comment (`-- …`) is the diff line `--- …`, an added `++ x` is
    `+++ x`: inside a hunk's counted lines they are lines, numbered and tinted."""
    diff = (
        "--- a/q.sql\n+++ b/q.sql\n"
        "@@ -1,4 +1,4 @@\n"
        "--- old comment\n"
        "+++ new comment\n"
        " select 1;\n"
        "-select 2;\n"
        "+select 3;\n"
        " \n"
        "--- a/next.sql\n+++ b/next.sql\n"  # a second file's headers, after the counts
        "@@ -7 +7 @@\n"
        "---- gone\n"
        "+-- here\n"
    )
    rows, path = parse(diff)
    body = [(r.kind, r.old, r.new, r.text) for r in rows]
    assert body == [
        ("", 0, 0, "--- a/q.sql"),
        ("", 0, 0, "+++ b/q.sql"),
        ("@", 0, 0, "@@ -1,4 +1,4 @@"),
        ("-", 1, 0, "-- old comment"),
        ("+", 0, 1, "++ new comment"),
        (" ", 2, 2, "select 1;"),
        ("-", 3, 0, "select 2;"),
        ("+", 0, 3, "select 3;"),
        (" ", 4, 4, ""),
        ("", 0, 0, "--- a/next.sql"),
        ("", 0, 0, "+++ b/next.sql"),
        ("@", 0, 0, "@@ -7 +7 @@"),
        ("-", 7, 0, "--- gone"),
        ("+", 0, 7, "-- here"),
    ]
    assert path == "next.sql"


async def test_a_removed_sql_comment_keeps_its_number_and_tint():
    diff = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,1 @@\n--- note\n-select 2;\n+select 3;\n"
    app = Shown(diff)
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(DiffView)
        await until(pilot, lambda: view.size.height > 0)
        assert line_text(view, 3) == "1   --- note"
        assert line_text(view, 4) == "2   -select 2;"
        assert line_text(view, 5) == "  1 +select 3;"
        tint = {s.style.bgcolor for s in view.render_line(3) if s.style}
        assert tint == {s.style.bgcolor for s in view.render_line(4) if s.style}, "tinted"
