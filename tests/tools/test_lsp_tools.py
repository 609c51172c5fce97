"""lsp_definition, lsp_references, lsp_hover and lsp_symbols against basedpyright."""

from __future__ import annotations

from pathlib import Path

from agent_cli.lsp.config import KNOWN
from agent_cli.lsp.options import LspSettings
from agent_cli.tools.base import ToolContext
from agent_cli.tools.feedback import Feedback
from agent_cli.tools.files import read_file
from agent_cli.tools.lsp_tools import lsp_definition, lsp_hover, lsp_references, lsp_symbols
from agent_cli.tools.workspace import Workspace
from tests.lsp.conftest import program
from tests.support.waiting import eventually, within

A = 'def greet(name: str) -> str:\n    """Say hello."""\n    return f"hello {name}"\n'
B = 'from a import greet\n\nprint(greet("x"))\n'


async def test_questions_to_a_real_server(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(A)
    (tmp_path / "b.py").write_text(B)
    only = {config.name: {"enabled": False} for config in KNOWN}
    only["basedpyright"] = {"command": [program("basedpyright-langserver"), "--stdio"]}
    feedback = Feedback(tmp_path, LspSettings(user=only))
    ctx = ToolContext(Workspace(tmp_path), feedback=feedback)
    try:
        before = await lsp_definition.run(ctx, {"path": "b.py", "line": 3, "column": 7})
        assert before.is_error and before.text.startswith("No language server runs yet")
        await read_file.run(ctx, {"path": "b.py"})
        await eventually(feedback.any_running, "basedpyright to start")

        found = await within(lsp_definition.run(ctx, {"path": "b.py", "line": 3, "column": 7}))
        assert found.text == "a.py:1:5: def greet(name: str) -> str:"

        uses = await within(lsp_references.run(ctx, {"path": "a.py", "line": 1, "column": 6}))
        assert sorted(uses.text.splitlines()) == [
            "a.py:1:5: def greet(name: str) -> str:",
            "b.py:1:15: from a import greet",
            'b.py:3:7: print(greet("x"))',
        ]

        hover = await within(lsp_hover.run(ctx, {"path": "b.py", "line": 3, "column": 8}))
        assert "def greet(name: str) -> str" in hover.text and "Say hello." in hover.text

        mine = await within(lsp_symbols.run(ctx, {"query": "", "path": "a.py"}))
        assert mine.text == "greet (function) a.py:1:5\nname (variable in greet) a.py:1:11"

        # The server reads the workspace's files once it has a quiet spell (pyright: 250 ms
        # after the last request); until then a.py, which no tool opened, is not searched,
        # and the answer says so rather than that there is no such symbol.
        async def until_indexed() -> list[str]:
            while True:
                named = await lsp_symbols.run(ctx, {"query": "GREE"})
                if named.text.startswith("greet"):
                    return named.text.splitlines()
                assert named.text.startswith("No symbol matching 'GREE' found in what the")
                assert "ask again" in named.text

        assert "greet (function) a.py:1:5" in await within(until_indexed())
        nothing = await within(lsp_symbols.run(ctx, {"query": "zzz", "path": "a.py"}))
        assert nothing.text == "No symbol matching 'zzz' found."

        past = await lsp_hover.run(ctx, {"path": "b.py", "line": 40, "column": 1})
        assert past.is_error and past.text == "b.py has 3 lines; line 40 is not one of them."
        outside = await lsp_hover.run(ctx, {"path": "../x.py", "line": 1, "column": 1})
        assert outside.is_error
    finally:
        await feedback.aclose()
