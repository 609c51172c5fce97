"""Keys typed during a run on a terminal that cannot host a live prompt (TERM=dumb).

There the run has the terminal: without this, the terminal would echo what is
typed into the streaming answer. `TypeAhead` turns the echo off and reads the
keys as they come (Ctrl-C still stops the run: signals stay on), and gives back
what was typed, edited by its Backspaces, as the next prompt's text.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import termios

# A key's escape sequence (arrows, function keys): not text to keep.
ESCAPE_SEQUENCE = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O.|.)?", re.S)
ERASE = ("\x7f", "\b")
KILL_LINE = "\x15"  # Ctrl-U


class TypeAhead:
    """Reads the keys typed on `fd` while started, unechoed; `text()` is what they typed."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._saved: list[int | list[bytes | int]] | None = None
        self._typed = bytearray()

    def start(self) -> None:
        """Echo off, each key readable as it comes; the keys are read on the event loop."""
        if self._saved is not None:
            return
        try:
            self._saved = termios.tcgetattr(self.fd)
        except termios.error:  # not a terminal after all: nothing to keep from echoing
            return
        quiet = termios.tcgetattr(self.fd)
        quiet[3] &= ~(termios.ECHO | termios.ICANON)  # lflags; ISIG stays: Ctrl-C stops
        quiet[6][termios.VMIN], quiet[6][termios.VTIME] = 1, 0
        try:
            termios.tcsetattr(self.fd, termios.TCSANOW, quiet)
            asyncio.get_running_loop().add_reader(self.fd, self._read)
        except BaseException:  # halfway: the terminal as it was, echo on
            saved, self._saved = self._saved, None
            with contextlib.suppress(termios.error):
                termios.tcsetattr(self.fd, termios.TCSANOW, saved)
            raise

    def stop(self) -> None:
        """The terminal as it was; what was typed meanwhile is kept (read on)."""
        if self._saved is None:
            return
        asyncio.get_running_loop().remove_reader(self.fd)
        self._read_waiting()
        saved, self._saved = self._saved, None
        with contextlib.suppress(termios.error):
            termios.tcsetattr(self.fd, termios.TCSANOW, saved)

    @property
    def keys(self) -> bytes:
        """What was typed since the last `take`, as read (bytes)."""
        return bytes(self._typed)

    def take(self) -> str:
        """What was typed since the last `take`, as text to edit (keys, not bytes)."""
        typed, self._typed = self._typed, bytearray()
        return edited(typed.decode(errors="ignore"))

    def _read(self) -> None:
        try:
            chunk = os.read(self.fd, 4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # hung up (EIO): nothing more will come
            chunk = b""
        if not chunk:  # the terminal hung up: left readable forever, it would spin the loop
            asyncio.get_running_loop().remove_reader(self.fd)
            return
        self._typed += chunk

    def _read_waiting(self) -> None:
        """The keys that came after the last read: taken without waiting for more."""
        blocking = os.get_blocking(self.fd)
        os.set_blocking(self.fd, False)
        try:
            while True:
                try:
                    chunk = os.read(self.fd, 4096)
                except (BlockingIOError, InterruptedError):
                    return
                except OSError:  # hung up
                    return
                if not chunk:
                    return
                self._typed += chunk
        finally:
            os.set_blocking(self.fd, blocking)


def edited(keys: str) -> str:
    """The text `keys` leave: Backspace takes the last character, Ctrl-U the line, Enter
    is a new line; escape sequences and other control keys are left out."""
    text: list[str] = []
    for key in ESCAPE_SEQUENCE.sub("", keys):
        if key in ERASE:
            if text and text[-1] != "\n":
                text.pop()
        elif key == KILL_LINE:
            while text and text[-1] != "\n":
                text.pop()
        elif key in "\r\n":
            text.append("\n")
        elif key == "\t" or key >= " ":
            text.append(key)
    return "".join(text).strip("\n")
