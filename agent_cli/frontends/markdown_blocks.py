"""Where the finished Markdown blocks of a streamed answer end (for `--plain`).

A block is finished once the next one has begun: after a blank line outside a
code fence comes a line that starts at the margin (an indented one may go on
the block before it, as a list item's paragraph does). `BlockEnds` is fed the
text piece by piece and looks at each piece once, so a long answer costs time in
proportion to its length.
"""

from __future__ import annotations

import re

FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
HEAD = 12  # characters of a line kept: enough to tell a fence


class BlockEnds:
    """Fed an answer's text in pieces; `end` is where its finished blocks end (0: none)."""

    def __init__(self) -> None:
        self.end = 0
        self._offset = 0  # characters fed so far
        self._fence = ""  # the open code fence's marker
        self._blank = False  # the last whole line was blank, outside a fence
        self._new_line()

    def feed(self, text: str) -> int:
        """Take the next piece; where the finished blocks end now."""
        *whole, rest = text.split("\n")
        for part in whole:
            self._go_on(part)
            self._offset += 1
            self._line_ended()
        self._go_on(rest)
        return self.end

    def _new_line(self) -> None:
        self._start = self._offset
        self._head = ""
        self._has_text = False
        self._fence_chars = 0  # of the open fence's character, on this line
        self._other = False  # a character that cannot close the fence

    def _go_on(self, part: str) -> None:
        """More of the line being fed."""
        if not part:
            return
        if self._offset == self._start and self._blank and not part[0].isspace():
            self.end = self._start  # a new block at the margin, after a blank line
        if len(self._head) < HEAD:
            self._head = (self._head + part)[:HEAD]
        if part.strip():
            self._has_text = True
            if self._fence:
                mark = self._fence[0]
                self._fence_chars += part.count(mark)
                self._other = self._other or bool(part.replace(mark, "").strip())
        self._offset += len(part)

    def _line_ended(self) -> None:
        if not self._fence:
            opening = FENCE.match(self._head)
            self._fence = opening.group(1) if opening else ""
        elif self._has_text and not self._other and self._fence_chars >= len(self._fence):
            self._fence = ""
        self._blank = not self._fence and not self._has_text
        self._new_line()


def block_end(text: str) -> int:
    """Where the finished blocks at the start of `text` end (0: none is yet)."""
    ends = BlockEnds()
    return ends.feed(text)
