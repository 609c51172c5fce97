"""A tool card's header counts what language servers and checks said after the edit."""

from __future__ import annotations

from agent_cli.engine.items import ToolItem
from agent_cli.frontends.tui.tool_card import ToolCard
from agent_cli.lsp.diagnostics import Diagnostic


def test_the_header_counts_new_and_existing_diagnostics() -> None:
    item = ToolItem("edit_file", "c1", title="Edit a.py", state="done")
    item.diagnostics = (
        Diagnostic("a.py", 2, 1, "error", "Undefined name `x`", "F821", "ruff"),
        Diagnostic("a.py", 1, 1, "warning", "unused", "F401", "ruff", existing=True),
    )
    header = str(ToolCard(item).header.render())
    assert "Edit a.py" in header and "done · 1 new error, 1 existing warning" in header
    plain = ToolItem("edit_file", "c2", title="Edit b.py", state="done")
    assert "error" not in str(ToolCard(plain).header.render())


def header_of(item: ToolItem) -> str:
    return str(ToolCard(item).header.render())


def test_a_command_that_exited_non_zero_is_shown_failed_with_its_exit_code() -> None:
    failed = ToolItem("exec_shell_command", "c1", title="Run make", state="done")
    failed.result = "make: *** [all] Error 5\n[exit code: 5]"
    card = ToolCard(failed)
    assert "✗" in header_of(failed) and "failed · exit 5" in header_of(failed)
    assert card.has_class("-failed") and not card.has_class("-done")
    killed = ToolItem("exec_shell_command", "c2", title="Run x", state="done")
    killed.result = "[exit code: -9 (killed by SIGKILL)]\n[the sandbox keeps .git as it was]"
    assert "failed · exit -9" in header_of(killed)
    passed = ToolItem("exec_shell_command", "c3", title="Run true", state="done")
    passed.result = "ok\n[exit code: 0]"
    assert "✓" in header_of(passed) and "failed" not in header_of(passed)
    assert ToolCard(passed).has_class("-done")


def test_a_card_turns_failed_when_its_command_finishes_non_zero() -> None:
    item = ToolItem("exec_shell_command", "c1", title="Run make", state="running")
    card = ToolCard(item)
    item.state, item.result = "done", "[exit code: 2]"
    card.update_item(item)
    assert card.has_class("-failed") and not card.has_class("-running")
    assert "failed · exit 2" in str(card.header.render())


def test_a_read_says_how_many_lines_and_an_edit_its_counts() -> None:
    read = ToolItem("read_file", "c1", title="Read a.py", state="done", result="a\nb\nc\n")
    assert "done · 3 lines" in header_of(read)
    cut = "1→a\n[... truncated: showing lines 1–300 of 2000; continue with start_line=301]"
    long = ToolItem("read_file", "c2", title="Read big.py", state="done", result=cut)
    assert "done · lines 1–300 of 2000" in header_of(long)
    toml = ToolItem("read_file", "c3", title="Read a.toml", state="done", result="[tool]")
    assert "done · 1 line" in header_of(toml)
    diff = "--- a/a.sql\n+++ b/a.sql\n@@ -1,2 +1,3 @@\n--- a comment\n+-- the comment\n keep\n+new"
    edit = ToolItem("edit_file", "c4", title="Edit a.sql", state="done", diff=diff)
    assert "done · +2 −1" in header_of(edit)
