"""Keys typed during a run on a dumb terminal: read unechoed, given back as text."""

from __future__ import annotations

import asyncio
import os
import termios

import pytest

from agent_cli.frontends.type_ahead import TypeAhead, edited
from tests.support.waiting import eventually


def test_the_text_is_what_the_keys_leave():
    assert edited("fix tha\x7fe bug\r") == "fix the bug", "Backspace edits, Enter ends a line"
    assert edited("one\rtwo\x15three") == "one\nthree", "Ctrl-U takes the line back"
    assert edited("a\x1b[Ab\x1bOPc\x04") == "abc", "arrows, function keys, Ctrl-D are not text"
    assert edited("é\tü") == "é\tü"


async def test_keys_on_a_terminal_are_read_unechoed_and_the_terminal_put_back():
    leader, follower = os.openpty()
    try:
        before = termios.tcgetattr(follower)
        ahead = TypeAhead(follower)
        ahead.start()
        assert not termios.tcgetattr(follower)[3] & (termios.ECHO | termios.ICANON)
        assert termios.tcgetattr(follower)[3] & termios.ISIG, "Ctrl-C still stops the run"
        os.write(leader, b"half a lin")
        await eventually(lambda: ahead.keys == b"half a lin", "the first keys to be read")
        os.write(leader, b"e\x7fe")
        await eventually(lambda: ahead.keys.endswith(b"\x7fe"), "the last keys to be read")
        ahead.stop()
        assert termios.tcgetattr(follower) == before
        os.write(leader, b"!")  # echoed now: whatever the terminal echoed comes before it
        echoed = b""
        while not echoed.endswith(b"!"):
            echoed += await asyncio.to_thread(os.read, leader, 1024)
        assert echoed == b"!", "nothing typed during the run was echoed"
        assert ahead.take() == "half a line"
        assert ahead.take() == "", "taken once"
    finally:
        os.close(leader)
        os.close(follower)


def reading(fd: int) -> bool:
    """Whether the running loop has a reader for `fd` (asked of its selector: the loop
    itself can only say so by removing it)."""
    key = asyncio.get_running_loop()._selector.get_map().get(fd)  # type: ignore[attr-defined]
    return key is not None and key.data[0] is not None


async def test_a_hung_up_terminal_is_no_longer_read():
    """Its other end closed, the terminal reads empty (or EIO) at once, forever: the
    reader is removed, not called again and again at full speed."""
    leader, follower = os.openpty()
    ahead = TypeAhead(follower)
    try:
        ahead.start()
        assert reading(follower)
        os.write(leader, b"typed")
        await eventually(lambda: ahead.keys == b"typed", "the keys to be read")
        os.close(leader)
        leader = -1
        await eventually(lambda: not reading(follower), "the reader to be removed")
        ahead.stop()
        assert ahead.take() == "typed", "what was typed before the hang-up is kept"
    finally:
        asyncio.get_running_loop().remove_reader(follower)
        if leader >= 0:
            os.close(leader)
        os.close(follower)


def test_a_start_that_fails_halfway_puts_the_terminal_back():
    """No running loop: the reader cannot be added after echo went off; echo comes back."""
    leader, follower = os.openpty()
    try:
        before = termios.tcgetattr(follower)
        ahead = TypeAhead(follower)
        with pytest.raises(RuntimeError):
            ahead.start()
        assert termios.tcgetattr(follower) == before, "echo is on again"
        ahead.stop()  # nothing to undo
        assert termios.tcgetattr(follower) == before
    finally:
        os.close(leader)
        os.close(follower)
