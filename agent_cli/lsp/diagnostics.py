"""What a server (or a check command) says is wrong with a file, in the model's words.

A change is judged by comparing what was said about the file before it with
what is said after: a diagnostic that was there before (same source, code,
severity, message, on a line of the same text) is marked `existing`, so the
model fixes what it broke first; one that is gone was fixed. Errors come
first; the lines the model reads are capped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

__all__ = [
    "DIAGNOSTICS_SHOWN",
    "REPORTED",
    "SEVERITIES",
    "Diagnostic",
    "compare",
    "lines",
    "ordered",
    "summary",
]

SEVERITIES = ("error", "warning", "info", "hint")
"""LSP's severities 1–4, by name."""
REPORTED = frozenset({"error", "warning"})
"""What the model reads: information and hints are left out (they are not problems)."""
DIAGNOSTICS_SHOWN = 20
"""Lines of diagnostics in one result; the rest are counted."""
MESSAGE_CHARS = 300
"""A message longer than this (its first line) is cut."""


@dataclass(frozen=True)
class Diagnostic:
    """One problem in one file. `line` and `column` count from 1 (0: the whole file)."""

    path: str  # workspace-relative, POSIX
    line: int
    column: int
    severity: str  # one of SEVERITIES
    message: str
    code: str = ""
    source: str = ""  # the server's name, or the check's command
    existing: bool = False  # it was there before the change

    def text(self) -> str:
        """`bad.py:2: error F821 Undefined name 'x' (ruff)`: one line for the model."""
        where = f"{self.path}:{self.line}" if self.line else self.path
        code = f" {self.code}" if self.code else ""
        said = self.source + ("; there before this change" if self.existing else "")
        return f"{where}: {self.severity}{code} {first_line(self.message)} ({said})"


def first_line(message: str) -> str:
    """A message's first line (servers add help and notes below it), capped."""
    line = next((part.strip() for part in message.strip().splitlines() if part.strip()), "")
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"


def compare(
    before: Sequence[Diagnostic] | None,
    before_text: str | None,
    after: Sequence[Diagnostic],
    after_text: str,
) -> tuple[list[Diagnostic], int]:
    """`after` with each one that was already there before marked `existing`, and how
    many of `before` are gone (fixed). `before` None: not known, nothing is marked."""
    if before is None:
        return list(after), 0
    old_lines = (before_text or "").splitlines()
    new_lines = after_text.splitlines()
    left = Counter(_key(d, old_lines) for d in before if d.severity in REPORTED)
    marked = []
    for diagnostic in after:
        key = _key(diagnostic, new_lines)
        if left[key] > 0:
            left[key] -= 1
            diagnostic = replace(diagnostic, existing=True)
        marked.append(diagnostic)
    return marked, sum(left.values())


def _key(diagnostic: Diagnostic, lines: Sequence[str]) -> tuple[str, ...]:
    index = diagnostic.line - 1
    text = lines[index].strip() if 0 <= index < len(lines) else ""
    return (
        diagnostic.source,
        diagnostic.code,
        diagnostic.severity,
        first_line(diagnostic.message),
        text,
    )


def ordered(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Errors first, then the new before the existing, then by file and line."""

    def rank(d: Diagnostic) -> tuple[int, bool, str, int, int]:
        severity = SEVERITIES.index(d.severity) if d.severity in SEVERITIES else 0
        return severity, d.existing, d.path, d.line, d.column

    return sorted(diagnostics, key=rank)


def summary(diagnostics: Sequence[Diagnostic], fixed: int = 0, compared: bool = True) -> str:
    """`1 new error, 2 existing warnings; 1 fixed`, or `none` (with what was fixed);
    without `compared` (what was there before is not known) neither new nor existing."""
    counts = Counter((d.existing, d.severity) for d in diagnostics)
    parts = []
    for existing in (False, True):
        for severity in SEVERITIES:
            count = counts[existing, severity]
            if count:
                age = ("existing " if existing else "new ") if compared else ""
                parts.append(f"{count} {age}{severity}{'' if count == 1 else 's'}")
    text = ", ".join(parts) or "none"
    return f"{text}; {fixed} fixed" if fixed else text


def lines(diagnostics: Sequence[Diagnostic], shown: int = DIAGNOSTICS_SHOWN) -> list[str]:
    """Each diagnostic's line, in order, capped with a line counting the rest."""
    ranked = ordered(diagnostics)
    out = [d.text() for d in ranked[:shown]]
    if len(ranked) > shown:
        out.append(f"… and {len(ranked) - shown} more")
    return out
