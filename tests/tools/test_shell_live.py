"""A running command's last lines reach the front ends while it runs, at a bounded rate."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from agent_cli.engine.events import Event
from agent_cli.engine.items import ToolItem
from agent_cli.providers.scripted import answer, calls
from agent_cli.tools.processes import Output, last_lines
from agent_cli.tools.shell import LIVE_LINES, LIVE_SECONDS
from tests.support.sessions import make_session
from tests.support.waiting import eventually, within


def command_session(tmp_path: Path, command: str):
    arguments = json.dumps({"command": command, "timeout": 100})
    turns = [calls(("c1", "exec_shell_command", arguments)), answer("ran")]
    session, _, _ = make_session(tmp_path, turns)
    session.set_mode("full")
    said: list[str] = []  # the call's progress as each update published it

    def note(event: Event) -> None:
        item = getattr(event, "item", None)
        if isinstance(item, ToolItem) and item.tool == "exec_shell_command" and item.progress:
            said.append(item.progress)

    session.events.subscribe(note)
    return session, said


async def test_a_running_commands_last_lines_are_shown_as_they_come(tmp_path: Path):
    command = "seq 1 8; while [ ! -e gate ]; do sleep 0.02; done; echo after"
    session, said = command_session(tmp_path, command)
    run = asyncio.ensure_future(session.send("count"))
    await eventually(lambda: said, "the command's first lines, while it runs")
    assert said[-1] == "\n".join(str(n) for n in range(4, 9)), "its last 5 lines"
    (tmp_path / "gate").touch()
    await within(run)
    (item,) = [i for i in session.conversation.items if isinstance(i, ToolItem)]
    assert item.progress == "" and "after" in item.result  # the result, once it ended


async def test_a_flood_of_output_is_shown_a_few_times_a_second_and_bounded(tmp_path: Path):
    session, said = command_session(tmp_path, "seq 1 100000; seq 1 100000 >&2; sleep 0.6")
    started = time.monotonic()
    await within(session.send("flood"))
    elapsed = time.monotonic() - started
    assert said, "shown while it ran"
    assert len(said) <= elapsed / LIVE_SECONDS + 1, (len(said), elapsed)
    for shown in said:
        assert len(shown.split("\n")) <= LIVE_LINES and len(shown) <= LIVE_LINES * 200


def test_the_last_lines_are_what_a_terminal_showed_last():
    assert last_lines("a\n\nb\r\n 10%\r 50%\r100%\nc", 3) == "b\n100%\nc"
    assert last_lines("x" * 500, 1) == "x" * 199 + "…"
    coloured = "\x1b[32mPASSED\x1b[0m\x1b]0;title\x07 ok\x07\x1b(B"
    assert last_lines(coloured, 1) == "PASSED ok", "no escape sequence reaches the screen"
    output = Output(64)
    output.feed(b"head\n" + b"y" * 100 + b"\nlast\n")
    assert output.recent(10).endswith("\nlast\n") and len(output.recent(10)) <= 10
