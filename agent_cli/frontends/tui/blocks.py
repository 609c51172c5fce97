"""Split streamed Markdown into finished blocks and the live tail still being written.

A block is finished once a blank line outside a code fence is followed by a line
that starts at the left margin: nothing written later can change how it renders
(Markdown has no construct that reaches back over such a line, except reference
links defined further down, which a chat answer does not use). The TUI renders
each finished block once and never again; only the tail is redrawn as it grows.

No Textual here: this is plain text work, tested on its own.
"""

from __future__ import annotations

from itertools import pairwise
from typing import NamedTuple

from agent_cli.frontends.markdown_blocks import BlockEnds


class Split(NamedTuple):
    blocks: list[str]  # finished blocks, without the blank lines between them
    tail: str  # the text after the last block boundary (may be empty)


def split_blocks(text: str) -> Split:
    """The finished blocks at the start of `text`, and what follows them (the rule is
    `markdown_blocks.BlockEnds`', which `--plain` draws by too).

    `text` must start at a block boundary (the start of an answer, or a tail
    returned earlier), so a fence opened before it cannot be open here.
    """
    ends = BlockEnds()
    ends.feed(text)
    cuts = [0, *ends.starts]
    blocks = [text[a:b].strip("\n") for a, b in pairwise(cuts)]
    return Split([block for block in blocks if block], text[cuts[-1] :])


def finish_blocks(tail: str) -> list[str]:
    """The last blocks of an answer that has ended: the tail is final too."""
    split = split_blocks(tail)
    last = split.tail.strip("\n")
    return [*split.blocks, last] if last.strip() else split.blocks
