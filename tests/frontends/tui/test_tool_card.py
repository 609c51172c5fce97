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
