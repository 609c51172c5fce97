"""Split streamed Markdown into finished blocks and the live tail still being written.

A block is finished once a blank line outside a code fence is followed by a line
that starts at the left margin: nothing written later can change how it renders
(Markdown has no construct that reaches back over such a line, except reference
links defined further down, which a chat answer does not use). The TUI renders
each finished block once and never again; only the tail is redrawn as it grows.

No Textual here: this is plain text work, tested on its own.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


class Split(NamedTuple):
    blocks: list[str]  # finished blocks, without the blank lines between them
    tail: str  # the text after the last block boundary (may be empty)


def split_blocks(text: str) -> Split:
    """The finished blocks at the start of `text`, and what follows them.

    `text` must start at a block boundary (the start of an answer, or a tail
    returned earlier), so a fence opened before it cannot be open here.
    """
    blocks: list[str] = []
    start = 0  # where the current block begins
    fence = ""  # the opening fence marker while inside a fenced code block
    blank = False  # the previous line was blank (outside a fence)
    position = 0
    length = len(text)
    while position < length:
        end = text.find("\n", position)
        if end < 0:
            line, complete = text[position:], False
        else:
            line, complete = text[position:end], True
        if not fence and blank and line and not line[0].isspace() and position > start:
            block = text[start:position].strip("\n")
            if block:
                blocks.append(block)
            start = position
        if not complete:
            break
        fence = _fence_after(line, fence)
        blank = not fence and not line.strip()
        position = end + 1
    return Split(blocks, text[start:])


def finish_blocks(tail: str) -> list[str]:
    """The last blocks of an answer that has ended: the tail is final too."""
    split = split_blocks(tail)
    last = split.tail.strip("\n")
    return [*split.blocks, last] if last.strip() else split.blocks


def _fence_after(line: str, fence: str) -> str:
    """The open fence after `line`: opened, closed, or unchanged."""
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
