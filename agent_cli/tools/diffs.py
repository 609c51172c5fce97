"""Unified diffs of one file's text, and applying only some of their hunks.

The approval card shows the diff an edit will make, so computing it is on the
path between the model's call and the person seeing the card: it must stay
fast for large files. difflib's matcher is quadratic in the worst case and
builds an index of the whole file, so it is only run on the *regions* that can
differ — after trimming the common head and tail, or, for `edit_file`, around
each replaced span it already knows — and the equal stretches between them are
taken as they are.

Hunks are grouped exactly as `difflib.unified_diff` groups them (3 lines of
context, hunks closer than 6 lines merged). `select_hunks` reads only the
`@@` headers of a diff and takes the lines from the two texts, so a hunk index
always means the same hunk the person saw, whatever the lines contain (CRLF,
no final newline).

edit_file's replacements are found here too (`locate_edits`, `replace_spans`):
they yield the regions and line starts the diff then uses instead of searching.
"""

from __future__ import annotations

import bisect
import difflib
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import AnyStr

from agent_cli.errors import ToolError

DIFF_CONTEXT_LINES = 3
NO_NEWLINE_MARKER = "\\ No newline at end of file"

Opcode = tuple[str, int, int, int, int]
Region = tuple[int, int, int, int]  # a0, a1, b0, b1: line ranges that may differ
Anchor = tuple[int, int]  # a 0-based line and the offset where it starts

_LINE_SCAN_CHUNK = 16 * 1024
_BACK_STEPS = 64  # lines a window may start before a known line start and be found backwards
_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on "\\n" only (unlike str.splitlines, which
    also splits on form feeds and Unicode separators that editors treat as text)."""
    if not text:
        return []
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def line_total(text: AnyStr) -> int:
    """How many lines `text` has (a last line without a newline counts)."""
    newline = b"\n" if isinstance(text, bytes) else "\n"
    return text.count(newline) + (0 if not text or text.endswith(newline) else 1)


def line_offset(text: AnyStr, line: int, start_line: int = 0, start: int = 0) -> int:
    """Where 0-based `line` starts (len(text) past the end), counting on from
    `start_line` at offset `start`.

    Newlines are counted a chunk at a time (in C), so finding line 100 000 of
    a big file costs no more than a scan, and no list of lines is built.
    """
    newline = b"\n" if isinstance(text, bytes) else "\n"
    need, pos = line - start_line, start
    while need > 0:
        stop = min(pos + _LINE_SCAN_CHUNK, len(text))
        found = text.count(newline, pos, stop)
        if found < need and stop < len(text):
            need, pos = need - found, stop
            continue
        for _ in range(need):
            pos = text.find(newline, pos) + 1 or len(text)
        break
    return pos


class TextLines:
    """The lines of a text, cut out only where asked (a diff needs a few windows).

    Line starts already found (or known to the caller, `anchors`) are kept, so
    each window is found by counting on from the nearest one before it.
    """

    def __init__(self, text: str, anchors: Iterable[Anchor] = ()) -> None:
        self.text = text
        self.count = line_total(text)
        self._lines, self._offsets = [0], [0]
        for line, offset in sorted(anchors):
            self._remember(line, offset)

    def __len__(self) -> int:
        return self.count

    def _remember(self, line: int, offset: int) -> None:
        at = bisect.bisect_left(self._lines, line)
        if at == len(self._lines) or self._lines[at] != line:
            self._lines.insert(at, line)
            self._offsets.insert(at, offset)

    def offset(self, line: int) -> int:
        if line >= self.count:
            return len(self.text)
        at = bisect.bisect_right(self._lines, line) - 1
        after = at + 1
        if after < len(self._lines) and self._lines[after] - line <= _BACK_STEPS:
            pos = self._offsets[after]  # a few lines before a known start: step back
            for _ in range(self._lines[after] - line):
                pos = self.text.rfind("\n", 0, pos - 1) + 1
        else:
            pos = line_offset(self.text, line, self._lines[at], self._offsets[at])
        self._remember(line, pos)
        return pos

    def __getitem__(self, window: slice) -> list[str]:
        start, stop, _ = window.indices(self.count)
        if start >= stop:
            return []
        begin = self.offset(start)
        return split_lines(self.text[begin : self.offset(stop)])


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix, by halving (each compare is a memcmp)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _common_suffix(a: str, b: str, limit: int) -> int:
    low, high = 0, limit
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid : len(a) - low] == b[len(b) - mid : len(b) - low]:
            low = mid
        else:
            high = mid - 1
    return low


def trimmed_region(before: str, after: str) -> Region | None:
    """The one line region outside the common leading and trailing lines; None if equal.

    Found on the texts, not on lists of lines, so a 1 MiB file costs a few
    memcmps and newline counts.
    """
    if before == after:
        return None
    total_a, total_b = line_total(before), line_total(after)
    head = before.count("\n", 0, _common_prefix(before, after))  # lines ended in the prefix
    start_a = line_offset(before, head)
    start_b = start_a  # the same text precedes it on both sides
    k = _common_suffix(before, after, min(len(before) - start_a, len(after) - start_b))
    # Lines that start inside the common suffix (or exactly where it starts, at a line start).
    tail = before.count("\n", len(before) - k, max(len(before) - 1, len(before) - k))
    at_a, at_b = len(before) - k, len(after) - k
    if (
        k
        and (at_a == start_a or before[at_a - 1] == "\n")
        and (at_b == start_b or after[at_b - 1] == "\n")
    ):
        tail += 1
    tail = min(tail, total_a - head, total_b - head)
    return head, total_a - tail, head, total_b - tail


def opcodes(a: TextLines, b: TextLines, regions: Iterable[Region] | None = None) -> list[Opcode]:
    """difflib-style opcodes for the lines of `a` → `b`.

    `regions`, if given, are ordered line ranges outside of which `a` and `b`
    are known to be equal (the equal stretches between them have the same
    length on both sides); otherwise the region is found by trimming.
    """
    if regions is None:
        region = trimmed_region(a.text, b.text)
        regions = [region] if region else []
    result: list[Opcode] = []
    a_pos = b_pos = 0
    for a0, a_end, b0, b_end in regions:
        a1, b1 = min(a_end, len(a)), min(b_end, len(b))
        if a0 > a_pos:
            result.append(("equal", a_pos, a0, b_pos, b0))
        matcher = difflib.SequenceMatcher(None, a[a0:a1], b[b0:b1], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            result.append((tag, a0 + i1, a0 + i2, b0 + j1, b0 + j2))
        a_pos, b_pos = a1, b1
    if a_pos < len(a) or b_pos < len(b):
        result.append(("equal", a_pos, len(a), b_pos, len(b)))
    return _merge_equal(result)


def _merge_equal(codes: list[Opcode]) -> list[Opcode]:
    """Join neighbouring equal opcodes and drop empty ones, as difflib would produce."""
    merged: list[Opcode] = []
    for code in codes:
        tag, i1, i2, j1, j2 = code
        if i1 == i2 and j1 == j2:
            continue
        if merged and tag == "equal" and merged[-1][0] == "equal":
            merged[-1] = ("equal", merged[-1][1], i2, merged[-1][3], j2)
        else:
            merged.append(code)
    return merged


def grouped(codes: list[Opcode], n: int = DIFF_CONTEXT_LINES) -> list[list[Opcode]]:
    """Hunks of opcodes with `n` lines of context (difflib's get_grouped_opcodes)."""
    if not any(tag != "equal" for tag, *_ in codes):
        return []
    codes = list(codes)
    if codes[0][0] == "equal":
        _, i1, i2, j1, j2 = codes[0]
        codes[0] = ("equal", max(i1, i2 - n), i2, max(j1, j2 - n), j2)
    if codes[-1][0] == "equal":
        _, i1, i2, j1, j2 = codes[-1]
        codes[-1] = ("equal", i1, min(i2, i1 + n), j1, min(j2, j1 + n))
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def _range(start: int, stop: int) -> str:
    """A hunk header's range, as difflib writes it (an empty range names the line before)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


def _emit(out: list[str], prefix: str, lines: Sequence[str]) -> None:
    for line in lines:
        body = line[:-1] if line.endswith("\n") else line
        out.append(prefix + (body[:-1] if body.endswith("\r") else body))
        if not line.endswith("\n"):
            out.append(NO_NEWLINE_MARKER)


def unified_diff(
    relative: str,
    before: str | None,
    after: str,
    regions: Iterable[Region] | None = None,
    anchors: tuple[Iterable[Anchor], Iterable[Anchor]] = ((), ()),
) -> str:
    """A unified diff `a/PATH` → `b/PATH` (`/dev/null` for a new file), "" if equal.

    Line endings are shown without their "\\r" (the diff is for reading;
    `select_hunks` never parses line bodies). `regions` as in `opcodes`;
    `anchors` are line starts the caller already knows, for `before` and `after`.
    """
    a, b = TextLines(before or "", anchors[0]), TextLines(after, anchors[1])
    hunks = grouped(opcodes(a, b, regions))
    if not hunks:
        return ""
    out = [f"--- {'/dev/null' if before is None else 'a/' + relative}", f"+++ b/{relative}"]
    for hunk in hunks:
        first, last = hunk[0], hunk[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@")
        for tag, i1, i2, j1, j2 in hunk:
            if tag == "equal":
                _emit(out, " ", a[i1:i2])
                continue
            _emit(out, "-", a[i1:i2])
            _emit(out, "+", b[j1:j2])
    return "\n".join(out) + "\n"


def hunk_count(diff: str) -> int:
    """How many hunks a unified diff has (what `select_hunks` indexes)."""
    return len(_HUNK_HEADER.findall(diff))


def line_changes(diff: str) -> tuple[int, int]:
    """(added, removed) lines of a unified diff. A hunk's header says how many of its
    lines follow; while some are left, a line is one of them, even `--- x` (a removed
    `-- x` SQL comment) or `+++ x`: only outside those counts are they file headers."""
    added = removed = old_left = new_left = 0
    for line in diff.splitlines():
        if old_left <= 0 and new_left <= 0:
            header = _HUNK_HEADER.match(line)
            if header is not None:
                old_left, new_left = (int(n) if n is not None else 1 for n in header.groups()[1::2])
            continue
        kind = line[:1]
        if kind == "+":
            added, new_left = added + 1, new_left - 1
        elif kind == "-":
            removed, old_left = removed + 1, old_left - 1
        elif kind == " " or not line:
            old_left, new_left = old_left - 1, new_left - 1
    return added, removed


def _hunk_ranges(diff: str) -> list[tuple[int, int, int, int]]:
    """(a_start, a_stop, b_start, b_stop) as 0-based line indexes, per hunk header."""
    ranges = []
    for match in _HUNK_HEADER.finditer(diff):
        a_start, a_len, b_start, b_len = (int(g) if g is not None else 1 for g in match.groups())
        a0 = a_start - 1 if a_len else a_start
        b0 = b_start - 1 if b_len else b_start
        ranges.append((a0, a0 + a_len, b0, b0 + b_len))
    return ranges


def apply_hunks(before: str | None, after: str, diff: str, keep: Sequence[int]) -> str:
    """The text `before` with only the hunks of `diff` (before → after) at `keep` applied."""
    a, b = split_lines(before or ""), split_lines(after)
    ranges = _hunk_ranges(diff)
    bad = [i for i in keep if not 0 <= i < len(ranges)]
    if bad:
        raise IndexError(f"hunk index {bad[0]} is out of range; the diff has {len(ranges)} hunks")
    wanted = set(keep)
    out: list[str] = []
    pos = 0
    for index, (a0, a1, b0, b1) in enumerate(ranges):
        if index not in wanted:
            continue
        out.extend(a[pos:a0])
        out.extend(b[b0:b1])
        pos = a1
    out.extend(a[pos:])
    return "".join(out)


def changed_span(before: str | None, after: str) -> tuple[int, int, int] | None:
    """(first, last, removed): the 1-based lines of `after` that changed and how many
    lines of `before` they replaced; None if the texts are equal."""
    region = trimmed_region(before or "", after)
    if region is None:
        return None
    a0, a1, b0, b1 = region
    return b0 + 1, b1, a1 - a0


# ------------------------------------------------------------------ edit_file's replacements


def _not_found(path: str, work: str, number: int, old: str) -> ToolError:
    """old_text is absent: say so, with the likeliest reason."""
    message = f"old_text of edit #{number} was not found in {path}"
    if all(re.match(r"\s*\d+→", line) for line in old.splitlines() if line.strip()):
        return ToolError(message + "; leave out the 'N→' line-number prefixes that read_file adds.")
    words = old.split()
    if words:
        loose = re.search(r"\s+".join(re.escape(w) for w in words), work)
        if loose:
            first = work.count("\n", 0, loose.start()) + 1
            last = first + loose.group().count("\n")
            where = f"line {first}" if first == last else f"lines {first}–{last}"
            return ToolError(
                f"{message}, but {where} matches it if whitespace is ignored; "
                "copy the text exactly (indentation, line breaks) from read_file."
            )
    return ToolError(message + "; read the file again and copy old_text exactly from it.")


def locate_edits(
    path: str, work: str, edits: Sequence[tuple[str, str]]
) -> list[tuple[int, int, str]]:
    """(start, end, new_text) of each edit in the original text, in order, or ToolError:
    each old_text must occur exactly once, and no two may overlap."""
    spans: list[tuple[int, int, str, int]] = []
    for number, (old, new) in enumerate(edits, start=1):
        if not old:
            raise ToolError(
                f"old_text of edit #{number} is empty; give the exact text to replace "
                "(to create a file, use write_file)."
            )
        start = work.find(old)
        if start < 0:
            raise _not_found(path, work, number, old)
        if work.find(old, start + 1) >= 0:
            count = max(work.count(old), 2)
            raise ToolError(
                f"old_text of edit #{number} occurs {count} times in {path}; "
                "add surrounding lines so it matches exactly once."
            )
        spans.append((start, start + len(old), new, number))
    spans.sort()
    for (_, end, _, first), (start, _, _, second) in itertools.pairwise(spans):
        if start < end:
            raise ToolError(
                f"edits #{first} and #{second} overlap in {path}; merge them into one edit."
            )
    return [(start, end, new) for start, end, new, _ in spans]


@dataclass
class Edited:
    """Where an edit_file change is: line regions, and known (line, offset) anchors."""

    regions: list[Region]
    anchors_a: list[tuple[int, int]]
    anchors_b: list[tuple[int, int]]

    def crlf(self) -> Edited:
        """The same for the CRLF text: each line before an anchor has one more char."""
        return Edited(
            self.regions,
            [(line, offset + line) for line, offset in self.anchors_a],
            [(line, offset + line) for line, offset in self.anchors_b],
        )


def replace_spans(work: str, spans: Sequence[tuple[int, int, str]]) -> tuple[str, Edited]:
    """The edited text, the line regions outside which old and new are equal, and
    where those regions start (so the diff need not count lines again)."""
    pieces: list[str] = []
    edited = Edited([], [], [])
    pos, line, shift, chars = 0, 0, 0, 0
    for start, end, new in spans:
        pieces += [work[pos:start], new]
        line += work.count("\n", pos, start)
        old_lines, new_lines = work.count("\n", start, end), new.count("\n")
        a1, b1 = line + old_lines + 1, line + shift + new_lines + 1
        if edited.regions and line < edited.regions[-1][1]:  # same or touching line
            a0, _, b0, _ = edited.regions.pop()
            edited.regions.append((a0, a1, b0, b1))
        else:
            edited.regions.append((line, a1, line + shift, b1))
            line_start = work.rfind("\n", 0, start) + 1
            edited.anchors_a.append((line, line_start))
            edited.anchors_b.append((line + shift, line_start + chars))
        shift += new_lines - old_lines
        chars += len(new) - (end - start)
        line += old_lines
        pos = end
    pieces.append(work[pos:])
    return "".join(pieces), edited
