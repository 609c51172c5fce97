"""Splitting a line into the simple commands sh runs, each in one canonical text.

An allow rule is matched against each simple command, so the split must never
miss a command sh would run: anything outside the subset it follows is None.
"""

from __future__ import annotations

import shlex
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_cli.policy.shell_line import MAX_LINE, parse, shown


def commands(line: str) -> list[str] | None:
    parsed = parse(line)
    return None if parsed is None else [shown(command) for command in parsed]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("pytest -q", ["pytest -q"]),
        ("  pytest\t -q  ", ["pytest -q"]),
        ("a && b || c; d | e\nf", ["a", "b", "c", "d", "e", "f"]),
        ("a;", ["a"]),
        ("\n\na\n\n", ["a"]),
        ("'pytest' \"-q\"", ["pytest -q"]),
        ("python3 -c 'print(1)'", ["python3 -c 'print(1)'"]),
        ('python3 -c "print(1)"', ["python3 -c 'print(1)'"]),
        ("python3 -c 'a; rm -rf ~'", ["python3 -c 'a; rm -rf ~'"]),  # one word: not run
        ('echo "it\'s"', ["echo 'it'\"'\"'s'"]),
        ("echo ''", ["echo ''"]),
        ("python3 -c 'import os\nprint(1)'", ["python3 -c $'import os\\nprint(1)'"]),
        ("ls *.py", ["ls *.py"]),  # a glob sh expands ...
        ("ls '*.py'", ["ls '*.py'"]),  # ... is not the same word as a quoted star
        ("ls 'a'*", ["ls a*"]),
        ("pytest 2>&1 | tail -5", ["pytest", "tail -5"]),
        ("pytest >/dev/null 2>/dev/null", ["pytest"]),
        ("pytest > /dev/null", ["pytest"]),
        ("pytest >&2", ["pytest"]),
        ("pytest 2>&-", ["pytest"]),
        ("FOO=1 make test", ["FOO=1 make test"]),
        ("make CC='gcc -O2'", ["make 'CC=gcc -O2'"]),
    ],
)
def test_lines_split_into_the_simple_commands_sh_runs(line: str, expected: list[str]) -> None:
    assert commands(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "",
        "   ",
        ";",
        "pytest $(rm x)",
        "pytest `rm x`",
        'echo "$HOME"',
        'echo "a\\"b"',
        "echo $HOME",
        "pytest > out.txt",
        "pytest >> out.txt",
        "pytest 2> err.txt",
        "pytest >&out.txt",  # bash: stdout and stderr to a file
        "pytest 2>&1x",
        "pytest >/dev/nullx",
        "pytest >| /dev/null",
        "cat < in.txt",
        "cat <<EOF\nx\nEOF",
        "cat <> f",
        "pytest >'/dev/null'",
        "a>/dev/null",  # a word touching the operator
        "pytest &",
        "pytest & rm x",
        "pytest |& tee x",
        "(rm x)",
        "{ rm x; }",
        "if pytest; then rm x; fi",
        "while true; do rm x; done",
        "for f in a; do rm $f; done",
        "pytest # ; rm x",
        "ls ~",
        "ls ~/x",
        "ls a{b,c}",
        "ls [ab]",
        "\\rm x",
        "ls a\\ b",
        "'A=1' ls",  # quoted, `A=1` would be the program
        "'unterminated",
        "! pytest",
        "pytest\r",
        "x" * (MAX_LINE + 1),
    ],
)
def test_what_the_subset_does_not_follow_is_not_split(line: str) -> None:
    assert parse(line) is None


def test_the_first_word_that_is_no_assignment_is_the_program() -> None:
    parsed = parse("A=1 B='x y' make A=2")
    assert parsed is not None
    assert [word.assigns for word in parsed[0]] == [True, True, False, True]
    assert shown(parsed[0]) == "A=1 'B=x y' make A=2"


# Printable words, quoted the way shlex.join does, come back as the same words.
WORDS = st.lists(
    st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=0, max_size=8),
    min_size=1,
    max_size=5,
)


@given(WORDS)
def test_a_quoted_line_parses_back_to_its_words(words: list[str]) -> None:
    line = shlex.join(["prog", *words])
    parsed = parse(line)
    assert parsed is not None and len(parsed) == 1
    assert [word.text for word in parsed[0]] == ["prog", *words]


@given(WORDS, WORDS)
def test_two_commands_share_a_canonical_text_only_if_their_words_are_the_same(
    first: list[str], second: list[str]
) -> None:
    a = parse(shlex.join(["prog", *first]))
    b = parse(shlex.join(["prog", *second]))
    assert a is not None and b is not None
    assert (shown(a[0]) == shown(b[0])) == (first == second)


@pytest.mark.parametrize(
    "line",
    [
        "printf '%s|' a 'b c' \"d e\" && printf '%s|' x; printf '%s|' '*' y",
        "printf '%s|' a 2>&1 | cat",
        "printf '%s|' 'it'\"'\"'s' '' z",
    ],
)
def test_the_split_matches_what_sh_runs(line: str) -> None:
    """Each simple command here prints its own words; sh's output shows how it split them."""
    parsed = parse(line)
    assert parsed is not None
    expected = "".join("".join(f"{word.text}|" for word in command[2:]) for command in parsed)
    ran = subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=True)
    assert ran.stdout == expected
