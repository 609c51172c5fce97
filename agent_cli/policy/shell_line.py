"""A command line split into the simple commands sh runs, each word in one canonical text.

An allow rule is matched against each simple command of a line (SPEC §8), so the
split must be exact: a word sh would run as a command must never hide inside
another. `parse` therefore follows only a small subset of sh and answers None
for anything else — substitutions and variables (`$`, backticks), groups and
subshells, redirections other than to `/dev/null` or between descriptors,
background jobs, comments, brace and tilde expansion, backslashes outside single
quotes, reserved words (`if`, `for`, ...). None means no allow rule can cover
the line, so the person is asked.

Each word is shown the way `shlex.quote` would write it (`$'…'` for control
characters, so a canonical command is one line), except that a word sh expands
as a glob keeps its unquoted `*`/`?`: `'*.py'` and `*.py` stay different
words. Two commands have the same canonical text only if sh runs the same words.
"""

from __future__ import annotations

import itertools
import re
import shlex
from dataclasses import dataclass

MAX_LINE = 50_000  # longer lines are asked about: no rule could be read, or matched, in time
# Unquoted characters a word may hold; anything else (`$ \\ ~ # ! { } ( ) [ ] ^ &`) rejects.
_WORD_RUN = re.compile(r"[A-Za-z0-9_./=,:+@%*?-]+")
_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")  # shown without quotes
_SPACE = " \t"
_BOUNDARY = frozenset(" \t;\n|&")  # what may follow a redirection like 2>&1
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_DESCRIPTOR = re.compile(r"[0-9]+|-")
_NULL = "/dev/null"
_NAMED = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_RESERVED = _words(
    "if then else elif fi do done case esac while until for in select function coproc"
)


@dataclass(frozen=True)
class ShellWord:
    """One word of a simple command."""

    text: str  # after quote removal, what the program is given (before globbing)
    shown: str  # the canonical text
    literal: str  # as a rule pattern that matches exactly this word (`*` escaped as `\*`)
    assigns: bool = False  # NAME=VALUE with NAME= unquoted: before the program, an assignment


def parse(line: str) -> list[list[ShellWord]] | None:
    """The simple commands of LINE, in order, or None if it is outside the subset we follow."""
    if not isinstance(line, str) or len(line) > MAX_LINE:
        return None
    commands: list[list[ShellWord]] = [[]]
    word: list[tuple[str, bool]] | None = None  # (segment, was it quoted)
    i = 0
    while i < len(line):
        c = line[i]
        if c in "'\"":
            end = line.find(c, i + 1)
            body = line[i + 1 : end]
            if end < 0 or (c == '"' and any(ch in "$`\\" for ch in body)):
                return None
            word = word if word is not None else []
            word.append((body, True))
            i = end + 1
        elif c in _SPACE or c in ";\n|" or line.startswith("&&", i):
            if word is not None:
                commands[-1].append(_word(word))
                word = None
            if c not in _SPACE:
                if line.startswith("|&", i):
                    return None
                commands.append([])
            i += 2 if line.startswith(("&&", "||"), i) else 1
        elif c in "<>":
            if word is not None and not all(not q and s.isdigit() for s, q in word):
                return None  # `a>x`: only a descriptor number may touch the operator
            word = None  # `2>&1`: the 2 is the descriptor, not a word
            i = _redirection(line, i)
            if i < 0:
                return None
        elif (run := _WORD_RUN.match(line, i)) is not None:
            word = word if word is not None else []
            word.append((run.group(), False))
            i = run.end()
        else:
            return None
    if word is not None:
        commands[-1].append(_word(word))
    commands = [command for command in commands if command]  # `a;` and blank lines run nothing
    if not commands or not all(_plain_start(command) for command in commands):
        return None
    return commands


def _plain_start(command: list[ShellWord]) -> bool:
    """No reserved word (`if`, `for`...) runs it, and its program is not a quoted `A=1`."""
    program = next((word for word in command if not word.assigns), None)
    if program is None:
        return True  # only assignments
    if command[0].text in _RESERVED or program.text in _RESERVED:
        return False
    return _ASSIGNMENT.match(program.text) is None


def _redirection(line: str, i: int) -> int:
    """Where the redirection at I ends, if it only duplicates, closes or discards; else -1."""
    op = line[i]
    i += 1
    if op == ">" and line.startswith(">", i):
        i += 1  # >>
    elif line.startswith(("<", ">", "|"), i):
        return -1  # <<, <>, >| and here-documents
    if line.startswith("&", i):  # N>&M, >&-: only a descriptor, never a file name
        match = _DESCRIPTOR.match(line, i + 1)
        if match is None:
            return -1
        end = match.end()
    else:
        while line.startswith(tuple(_SPACE), i):
            i += 1
        if not line.startswith(_NULL, i):
            return -1
        end = i + len(_NULL)
    return end if end == len(line) or line[end] in _BOUNDARY else -1


def _word(segments: list[tuple[str, bool]]) -> ShellWord:
    text = "".join(segment for segment, _ in segments)
    unquoted = "".join(s for s, _ in itertools.takewhile(lambda part: not part[1], segments))
    assigns = _ASSIGNMENT.match(unquoted) is not None
    if not any(not quoted and ("*" in s or "?" in s) for s, quoted in segments):
        return ShellWord(text, quote(text), quote(text), assigns)
    # A glob: its unquoted parts stay unquoted (they hold only word characters).
    shown = "".join(s if not quoted else quote(s) for s, quoted in segments if s or not quoted)
    literal = "".join(
        s.replace("*", r"\*") if not quoted else quote(s) for s, quoted in segments if s
    )
    return ShellWord(text, shown, literal, assigns)


def quote(text: str) -> str:
    """`shlex.quote`, but one line: a word with control characters is written `$'…'`."""
    if _PLAIN.fullmatch(text):
        return text
    if all(ch.isprintable() for ch in text):
        return shlex.quote(text)
    escaped = "".join(_escape(ch) for ch in text)
    return f"$'{escaped}'"


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    if ch.isprintable():
        return ch
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\U{ord(ch):08x}"


def shown(command: list[ShellWord]) -> str:
    """A simple command's canonical text: the subject its allow rules are matched against."""
    return " ".join(word.shown for word in command)
