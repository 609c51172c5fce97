"""The line REPL's printer: a sub-agent's work shows under its task, not as the answer."""

from __future__ import annotations

import io

from rich.console import Console

from agent_cli.engine.events import Delta, ItemAdded, ItemUpdated, RunFinished
from agent_cli.engine.items import AssistantItem, ToolItem
from agent_cli.frontends.render import Printer


async def test_a_sub_agents_text_is_not_printed_and_its_calls_are_indented():
    buffer = io.StringIO()
    printer = Printer(Console(file=buffer, width=80, color_system=None))
    task = ToolItem("task", "t1", title="Task: find it", state="running")
    child = AssistantItem("", parent=task.id)
    child_call = ToolItem("read_file", "c1", title="Read a.py", state="running", parent=task.id)
    answer = AssistantItem("")
    printer(ItemUpdated(task))
    printer(ItemAdded(child))
    printer(Delta(child.id, "the child's own words"))
    printer(ItemUpdated(child_call))
    printer(ItemAdded(answer))
    printer(Delta(answer.id, "The answer."))
    printer(RunFinished("answered", ""))
    shown = buffer.getvalue()
    assert "the child's own words" not in shown
    assert "The answer." in shown
    task_line = next(line for line in shown.splitlines() if "Task: find it" in line)
    call_line = next(line for line in shown.splitlines() if "Read a.py" in line)
    indent = len(call_line) - len(call_line.lstrip())
    assert indent == len(task_line) - len(task_line.lstrip()) + 2


async def test_an_edits_diagnostics_are_printed_under_it_new_ones_first():
    from agent_cli.lsp.diagnostics import Diagnostic

    buffer = io.StringIO()
    printer = Printer(Console(file=buffer, width=120, color_system=None))
    edit = ToolItem("edit_file", "c1", title="Edit a.py", state="done")
    edit.diagnostics = (
        Diagnostic("a.py", 1, 1, "warning", "`os` imported but unused", "F401", "ruff", True),
        *(
            Diagnostic("a.py", n, 1, "error", f"Undefined name `x{n}`", "F821", "ruff")
            for n in range(2, 9)
        ),
    )
    printer(ItemUpdated(edit))
    lines = buffer.getvalue().splitlines()
    assert lines[0].endswith("Edit a.py")
    assert lines[1:] == [
        *(f"  a.py:{n}: error F821 Undefined name `x{n}` (ruff)" for n in range(2, 7)),
        "  … and 3 more",
    ]


ANSWER_MD = "Use **bold** and `code`:\n\n- one\n- two"


def terminal(buffer: io.StringIO, height: int = 40) -> Console:
    """A capable terminal (the printer may write over what it wrote), without colour."""
    return Console(file=buffer, width=60, height=height, force_terminal=True, color_system=None)


async def test_a_finished_answer_is_drawn_again_as_markdown_in_its_place():
    buffer = io.StringIO()
    printer = Printer(terminal(buffer))
    answer = AssistantItem("")
    printer(ItemAdded(answer))
    for piece in ("Use **bold** and ", "`code`:\n\n- one\n", "- two"):
        printer(Delta(answer.id, piece))
    raw_end = len(buffer.getvalue())
    assert "**bold**" in buffer.getvalue(), "streamed raw first"
    answer.text, answer.streaming = ANSWER_MD, False
    printer(ItemUpdated(answer))
    printer(RunFinished("answered", ""))
    after = buffer.getvalue()[raw_end:]
    assert after.startswith("\n\x1b[4A\r\x1b[J"), "its 4 rows erased"
    assert "Use bold and code:" in after and "• one" in after and "**" not in after


async def test_an_answer_taller_than_the_screen_or_plain_is_left_as_streamed():
    for text, height in ((ANSWER_MD, 5), ("Just words, nothing to render.", 40)):
        buffer = io.StringIO()
        printer = Printer(terminal(buffer, height))
        answer = AssistantItem("")
        printer(ItemAdded(answer))
        printer(Delta(answer.id, text))
        answer.text, answer.streaming = text, False
        printer(ItemUpdated(answer))
        assert "\x1b[J" not in buffer.getvalue() and text in buffer.getvalue()


async def test_nothing_is_erased_once_something_was_printed_after_the_answer():
    buffer = io.StringIO()
    printer = Printer(terminal(buffer))
    answer = AssistantItem("")
    printer(ItemAdded(answer))
    printer(Delta(answer.id, ANSWER_MD))
    printer(ItemUpdated(ToolItem("read_file", "c1", title="Read a.py", state="running")))
    answer.text, answer.streaming = ANSWER_MD, False
    printer(ItemUpdated(answer))
    assert "\x1b[J" not in buffer.getvalue()


async def test_a_commands_output_tail_is_printed_under_its_line():
    buffer = io.StringIO()
    printer = Printer(Console(file=buffer, width=80, color_system=None))
    output = "\n".join(f"test {n} ok" for n in range(1, 21)) + "\n[exit code: 1]"
    call = ToolItem("exec_shell_command", "c1", title="Run pytest", state="running")
    printer(ItemUpdated(call))
    call.state, call.result = "error", output
    printer(ItemUpdated(call))
    shown = buffer.getvalue().splitlines()
    at = next(i for i, line in enumerate(shown) if "Run pytest" in line and "✗" in line)
    tail = [line.strip() for line in shown[at + 1 :]]
    assert tail == ["test 17 ok", "test 18 ok", "test 19 ok", "test 20 ok", "[exit code: 1]"]
