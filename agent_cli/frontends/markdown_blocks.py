"""Where the finished Markdown blocks of a streamed answer end (`--plain`, the TUI).

A block is finished once the next one has begun: after a blank line outside a
code fence comes a line that starts at the margin (an indented one may go on
the block before it, as a list item's paragraph does). `BlockEnds` is fed the
text piece by piece; each line is looked at once, when it ends, so a long answer
costs time in proportion to its length.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


class BlockEnds:
    """Fed an answer's text in pieces; `end` is where its finished blocks end (0: none),
    `starts` where each block after the first begins."""

    def __init__(self) -> None:
        self.end = 0
        self.starts: list[int] = []
        self._offset = 0  # characters fed so far
        self._line: list[str] = []  # the pieces of the line being fed
        self._fence = ""  # the open code fence's marker
        self._blank = False  # the last whole line was blank, outside a fence

    def feed(self, text: str) -> int:
        """Take the next piece; where the finished blocks end now."""
        *whole, rest = text.split("\n")
        for part in whole:
            self._go_on(part)
            line = "".join(self._line)
            self._fence = _fence_after(line, self._fence)
            self._blank = not self._fence and not line.strip()
            self._line = []
            self._offset += 1
        self._go_on(rest)
        return self.end

    def _go_on(self, part: str) -> None:
        """More of the line being fed."""
        if not part:
            return
        if not self._line and self._blank and not part[0].isspace():
            self.end = self._offset  # a new block at the margin, after a blank line
            self.starts.append(self._offset)
        self._line.append(part)
        self._offset += len(part)


def _fence_after(line: str, fence: str) -> str:
    """The open fence after `line`: opened, closed, or unchanged (CommonMark: indented at
    most 3 spaces; a closing run as long as the opening one, with nothing after it)."""
    match = _FENCE.match(line)
    if match is None:
        return fence
    marker = match.group(1)
    if not fence:
        return marker
    closes = marker[0] == fence[0] and len(marker) >= len(fence)
    if closes and not line[match.end() :].strip():
        return ""
    return fence


def block_end(text: str) -> int:
    """Where the finished blocks at the start of `text` end (0: none is yet)."""
    ends = BlockEnds()
    return ends.feed(text)
