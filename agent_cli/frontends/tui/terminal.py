"""Handing the terminal to a program of the person's (their editor) and taking it back."""

from __future__ import annotations

import subprocess
from typing import Any

from textual.app import App, SuspendNotSupported


def run_in_terminal(app: App[Any], command: list[str]) -> int:
    """Run `command` on the terminal the app gives up meanwhile; its exit code.

    A headless driver (tests, a pipe) has no terminal to hand over: the program
    then runs with no input. A program that cannot start raises only once the
    app is back: `App.suspend` would not resume after an error inside it.
    """
    failure: OSError | None = None

    def call(stdin: int | None = None) -> int:
        nonlocal failure
        try:
            return subprocess.call(command, stdin=stdin)
        except OSError as e:
            failure = e
            return -1

    try:
        with app.suspend():
            code = call()
    except SuspendNotSupported:
        code = call(subprocess.DEVNULL)
    if failure is not None:
        raise failure
    return code
