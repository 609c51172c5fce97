"""Splitting a streamed answer into finished Markdown blocks and the live tail."""

from __future__ import annotations

import random

from agent_cli.frontends.tui.blocks import finish_blocks, split_blocks


def test_a_block_is_finished_once_the_next_one_starts():
    assert split_blocks("Para one.\n\nPara") == (["Para one."], "Para")
    waiting = "Para one.\n\n"
    assert split_blocks(waiting) == ([], waiting), "the next line may continue it (indented)"


def test_a_blank_line_inside_a_fence_does_not_split():
    text = "```python\na = 1\n\nb = 2\n```\n\nAfter"
    assert split_blocks(text) == (["```python\na = 1\n\nb = 2\n```"], "After")
    open_fence = "```\ncode\n\nmore code"
    assert split_blocks(open_fence) == ([], open_fence)


def test_indented_continuations_stay_with_their_block():
    text = "- item\n\n  still the item\n\nNext"
    assert split_blocks(text) == (["- item\n\n  still the item"], "Next")


def test_a_longer_fence_is_closed_only_by_as_long_a_one():
    text = "````\n```\ninner\n```\n\nstill code\n````\n\nDone"
    assert split_blocks(text).blocks == ["````\n```\ninner\n```\n\nstill code\n````"]


def test_finishing_makes_the_tail_a_block():
    assert finish_blocks("Last words.\n") == ["Last words."]
    assert finish_blocks("a\n\nb") == ["a", "b"]
    assert finish_blocks("\n\n") == []


def test_any_cut_of_the_stream_gives_the_same_blocks():
    answer = "# Title\n\nText **bold**.\n\n- a\n- b\n\n```\nx\n\ny\n```\n\n1. one\n\n2. two\n\nEnd."
    whole = finish_blocks(answer)
    rng = random.Random(4)
    for _ in range(50):
        blocks: list[str] = []
        tail = ""
        position = 0
        while position < len(answer):
            step = rng.randint(1, 7)
            split = split_blocks(tail + answer[position : position + step])
            blocks += split.blocks
            tail = split.tail
            position += step
        assert blocks + finish_blocks(tail) == whole


def test_a_fence_is_closed_only_by_a_run_indented_three_spaces_at_most_with_nothing_after():
    """CommonMark's rule, shared with `--plain` (markdown_blocks.BlockEnds): inside the
    fence, `    ````, `` ``` x`` and `` ``` ``` `` are code, so no block ends after them."""
    for inside in ("    ```", "``` x", "``` ```"):
        text = f"```py\n{inside}\n\nstill code\n"
        assert split_blocks(text) == ([], text), inside
    closed = "```py\ncode\n   ```\n\nAfter"
    assert split_blocks(closed) == (["```py\ncode\n   ```"], "After")
