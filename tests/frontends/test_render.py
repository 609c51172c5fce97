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
