"""What the model reads of diagnostics: a line each, errors first, compared with before."""

from __future__ import annotations

from agent_cli.lsp.diagnostics import DIAGNOSTICS_SHOWN, Diagnostic, compare, lines, summary


def d(line: int, code: str, message: str, severity: str = "error", **more: object) -> Diagnostic:
    return Diagnostic("bad.py", line, 1, severity, message, code, "ruff", **more)  # type: ignore[arg-type]


def test_a_diagnostic_is_one_line_with_its_place_code_and_source() -> None:
    assert d(2, "F821", "Undefined name 'x'\n\nhelp: define it").text() == (
        "bad.py:2: error F821 Undefined name 'x' (ruff)"
    )
    assert d(1, "", "bad", "warning", existing=True).text() == (
        "bad.py:1: warning bad (ruff; there before this change)"
    )


def test_one_on_a_line_of_the_same_text_is_existing_even_when_the_line_moved() -> None:
    before = "import os\nprint(x)\n"
    after = "import os\n\n\nprint(x)\nprint(y)\n"
    marked, fixed = compare(
        [d(1, "F401", "unused"), d(2, "F821", "x")],
        before,
        [d(1, "F401", "unused"), d(4, "F821", "x"), d(5, "F821", "y")],
        after,
    )
    assert [(m.line, m.existing) for m in marked] == [(1, True), (4, True), (5, False)]
    assert fixed == 0


def test_one_gone_is_counted_as_fixed_and_one_on_a_changed_line_is_new() -> None:
    marked, fixed = compare(
        [d(2, "F821", "x")], "a\nprint(x)\n", [d(2, "F821", "x")], "a\nprint(x, 1)\n"
    )
    assert [m.existing for m in marked] == [False]
    assert fixed == 1


def test_without_a_before_nothing_is_marked() -> None:
    marked, fixed = compare(None, None, [d(1, "F821", "x")], "print(x)\n")
    assert [m.existing for m in marked] == [False] and fixed == 0


def test_errors_come_first_then_the_new_ones_and_the_lines_are_capped() -> None:
    many = [d(n, "W1", "w", "warning") for n in range(1, DIAGNOSTICS_SHOWN + 5)]
    shown = lines([*many, d(9, "E1", "old", existing=True), d(30, "E1", "new")])
    assert shown[0].startswith("bad.py:30: error E1 new")
    assert shown[1].startswith("bad.py:9: error E1 old")
    assert len(shown) == DIAGNOSTICS_SHOWN + 1
    assert shown[-1] == "… and 6 more"


def test_the_summary_counts_new_and_existing_by_severity() -> None:
    found = [d(1, "E", "a"), d(2, "E", "b"), d(3, "W", "c", "warning", existing=True)]
    assert summary(found, fixed=1) == "2 new errors, 1 existing warning; 1 fixed"
    assert summary([], fixed=2) == "none; 2 fixed"
    assert summary([d(1, "E", "a")], compared=False) == "1 error"
