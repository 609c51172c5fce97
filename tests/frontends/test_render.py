"""The line REPL's printer: a sub-agent's work shows under its task, not as the answer."""

from __future__ import annotations

import io
import re

from rich.console import Console

from agent_cli.engine.events import Delta, ItemAdded, ItemUpdated, RunFinished
from agent_cli.engine.items import AssistantItem, ToolItem
from agent_cli.frontends.markdown_blocks import BlockEnds, block_end
from agent_cli.frontends.render import Printer, tool_line


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


def stream(printer: Printer, text: str, piece: int = 7) -> AssistantItem:
    """`text` streamed as an answer in pieces of `piece` characters, then finished."""
    answer = AssistantItem("")
    printer(ItemAdded(answer))
    for start in range(0, len(text), piece):
        printer(Delta(answer.id, text[start : start + piece]))
    answer.text, answer.streaming = text, False
    printer(ItemUpdated(answer))
    return answer


def test_a_block_ends_at_a_blank_line_outside_a_fence_once_the_next_one_begins():
    def blocks(text: str) -> tuple[str, str]:
        return text[: block_end(text)], text[block_end(text) :]

    assert blocks("Use **bold**:\n\n- one") == ("Use **bold**:\n\n", "- one")
    assert blocks("a\n\nb\n\nc") == ("a\n\nb\n\n", "c"), "the last one goes on"
    assert blocks("para\n\n") == ("", "para\n\n"), "no next block yet"
    assert blocks("- item\n\n  more of it") == ("", "- item\n\n  more of it"), "indented: same"
    assert blocks("```\ncode\n\nmore\n") == ("", "```\ncode\n\nmore\n"), "inside a fence"
    fenced = "````\n```\n\nx\n````\n\n"
    assert blocks(fenced + "after") == (fenced, "after"), "a fence ends at its own marker"


async def test_each_block_is_drawn_again_as_markdown_in_its_place_once_complete():
    buffer = io.StringIO()
    printer = Printer(terminal(buffer))
    answer = AssistantItem("")
    printer(ItemAdded(answer))
    for piece in ("Use **bold** and ", "`code`:\n\n- one\n", "- two"):
        printer(Delta(answer.id, piece))
    streaming = buffer.getvalue()
    assert streaming.startswith("Use **bold** and \r\x1b[J"), "raw, then its row erased"
    assert "Use bold and code:" in streaming, "drawn as the next block begins"
    assert streaming.endswith("Use bold and code:" + " " * 42 + "\n\n- one\n- two")
    answer.text, answer.streaming = ANSWER_MD, False
    printer(ItemUpdated(answer))
    printer(RunFinished("answered", ""))
    after = buffer.getvalue()[len(streaming) :]
    assert after.startswith("\n\x1b[2A\r\x1b[J"), "the last block's 2 rows erased"
    drawn = after.split("\x1b[J", 1)[1]
    assert drawn.split("\n")[:2] == [" • one" + " " * 54, " • two" + " " * 54]


async def test_a_tall_answer_is_drawn_block_by_block_and_a_block_taller_than_the_screen_not():
    long_list = "\n".join(f"- item {n}" for n in range(8))
    parts = [f"Part **{n}** of many." for n in range(12)]
    buffer = io.StringIO()
    stream(Printer(terminal(buffer, height=6)), "\n\n".join([*parts, long_list, "The **end**."]))
    shown = buffer.getvalue()
    for n in range(12):
        assert f"\x1b[JPart {n} of many." in shown, f"block {n} drawn, scrolled off or not"
    assert long_list in shown and "• item" not in shown, "too tall to erase: left as streamed"
    assert shown.rstrip().endswith("The end."), "the last block is drawn too"
    assert shown.count("\x1b[J") == 13


async def test_plain_text_is_left_as_streamed():
    buffer = io.StringIO()
    text = "Just words.\n\nNothing to render."
    stream(Printer(terminal(buffer)), text)
    assert "\x1b[J" not in buffer.getvalue() and text in buffer.getvalue()


async def test_nothing_is_erased_once_something_was_printed_after_the_answer():
    buffer = io.StringIO()
    printer = Printer(terminal(buffer))
    answer = AssistantItem("")
    printer(ItemAdded(answer))
    printer(Delta(answer.id, ANSWER_MD))
    raw_end = len(buffer.getvalue())
    printer(ItemUpdated(ToolItem("read_file", "c1", title="Read a.py", state="running")))
    answer.text, answer.streaming = ANSWER_MD, False
    printer(ItemUpdated(answer))
    assert buffer.getvalue()[:raw_end].endswith("- one\n- two"), "the last block, raw"
    assert "\x1b[J" not in buffer.getvalue()[raw_end:]


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


def test_blocks_found_piece_by_piece_are_those_found_at_once():
    texts = [
        "Use **bold**:\n\n- one\n- two\n\n## Next\n\n  indented\n\nend",
        "```py\nx = 1\n\ny = 2\n```\n\nafter\n\n~~~\n\n~~~~\n\nlast",
        "a\n \nb\n\n\n\n    code\n\nc",
    ]
    for text in texts:
        whole = block_end(text)
        for cut in range(len(text) + 1):
            ends = BlockEnds()
            ends.feed(text[:cut])
            assert ends.feed(text[cut:]) == whole, (text, cut)
        ends = BlockEnds()
        for char in text:
            ends.feed(char)
        assert ends.end == whole


async def test_under_a_live_prompt_only_whole_lines_are_written_and_the_rest_is_shown_by_it():
    # The prompt draws over a partial line (prompt-toolkit's patch_stdout), so it shows it.
    from agent_cli.frontends.render import LivePrompt

    buffer = io.StringIO()
    printer = Printer(terminal(buffer, height=12))
    redrawn: list[str] = []
    printer.live = LivePrompt(lambda: redrawn.append(printer.held[0]), lambda: 1)
    answer = AssistantItem("")
    printer(ItemAdded(answer))
    for piece in ("Use **bo", "ld** here", ":\n\n- one", "\n- two"):
        printer(Delta(answer.id, piece))
    assert redrawn[:2] == ["Use **bo", "Use **bold** here"]
    assert buffer.getvalue().startswith("Use bold here:"), "drawn; nothing raw to erase"
    assert buffer.getvalue().endswith("\n\n- one\n"), "the whole lines, the last one held"
    assert printer.held == ("- two", False)
    answer.text, answer.streaming = "Use **bold** here:\n\n- one\n- two", False
    printer(ItemUpdated(answer))
    assert printer.held == ("", False) and redrawn[-1] == ""
    assert buffer.getvalue().endswith(
        "\n\n- one\n- two\n\x1b[2A\r\x1b[J • one" + " " * 54 + "\n • two" + " " * 54 + "\n"
    )


async def test_the_models_escape_sequences_never_reach_the_terminal():
    """An answer, reasoning or command output with escapes (OSC 52 sets the clipboard,
    `ESC[2J` clears the screen, a cursor move could forge a tool line): written without
    them, and the rows erased to redraw a block counted without them."""
    buffer = io.StringIO()
    printer = Printer(terminal(buffer))
    answer = AssistantItem("")
    printer(ItemAdded(answer))
    printer(Delta(answer.id, reasoning="thinking\x1b]52;c;c2VjcmV0\x07 hard\x1b[3A\n"))
    clipboard = "\x1b]52;c;" + "ZXZpbA==" * 8 + "\x07"  # counted, it would be a row more
    first = f"Use{clipboard} **bold**\x1b[2J\x1b[1A:\ttab\n\n"
    text = first + "- one\n- two"
    for piece in (first, "- one\n- two"):
        printer(Delta(answer.id, piece))
    answer.text, answer.streaming = text, False
    printer(ItemUpdated(answer))
    call = ToolItem("exec_shell_command", "c1", title="Run it", state="running")
    printer(ItemUpdated(call))
    call.state, call.result = "done", "out\x1b]52;c;eA==\x07put\x1b[2J\n"
    printer(ItemUpdated(call))
    shown = buffer.getvalue()
    assert "\x1b]" not in shown and "\x07" not in shown, "no OSC (the clipboard)"
    own = {"\x1b[J", "\x1b[2A", "\x1b[1A", "\x1b[2K"}  # the printer's erasing and redrawing
    assert set(re.findall(r"\x1b\[[0-9;]*[A-Za-z]", shown)) <= own, "the model's: none"
    assert "\x1b[1A" not in shown.split("Run it")[0], "no cursor move in the answer"
    assert "thinking hard" in shown and "output" in shown
    assert "Use bold:" in shown and "tab" in shown, "drawn as Markdown, the tab kept"
    assert shown.startswith("thinking hard\nUse **bold**:\ttab\n\n\x1b[2A\r\x1b[J"), (
        "the raw block's 2 rows erased, no more (the escapes were not counted)"
    )


def test_a_finished_calls_line_says_what_it_came_to_and_a_failed_command_gets_no_tick():
    failed = ToolItem("exec_shell_command", "c1", title="Run make", state="done", exit_code=5)
    failed.result = "make: *** [all] Error 5\n[exit code: 5]"
    passed = ToolItem("exec_shell_command", "c2", title="Run true", state="done", exit_code=0)
    diff = "--- a/a.sql\n+++ b/a.sql\n@@ -1,2 +1,2 @@\n--- a comment\n+-- the comment\n x\n"
    edit = ToolItem("edit_file", "c3", title="Edit a.sql", state="done", diff=diff)
    read = ToolItem("read_file", "c4", title="Read a.txt", state="done", result="one\ntwo\n")
    lines = {item.call_id: tool_line(item, 80) for item in (failed, passed, edit, read)}
    assert lines["c1"].plain == "✗ Run make · failed · exit 5"
    assert lines["c1"].spans[0].style == "red"
    assert lines["c2"].plain == "✓ Run true"
    assert lines["c3"].plain == "✓ Edit a.sql · +1 −1"
    assert lines["c4"].plain == "✓ Read a.txt · 2 lines"
