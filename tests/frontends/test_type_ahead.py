"""Keys typed during a run on a dumb terminal: read unechoed, given back as text."""

from __future__ import annotations

import asyncio
import os
import termios

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
