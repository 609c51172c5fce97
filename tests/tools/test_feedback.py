"""What the model is told after it changes files, through the real tools: language
servers (the fake one, and ruff for real) and check commands."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from agent_cli.lsp.config import KNOWN
from agent_cli.lsp.options import LspSettings
from agent_cli.policy.modes import offered
from agent_cli.tools.base import ToolContext, ToolRegistry, ToolResult
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.checks import Check
from agent_cli.tools.feedback import Feedback
from agent_cli.tools.workspace import Workspace
from tests.lsp.conftest import FAKE, program
from tests.support.waiting import GENEROUS, eventually, within

OFF = {config.name: {"enabled": False} for config in KNOWN}  # no server found on PATH


def servers(**tables: dict) -> LspSettings:
    """Only the servers named (the known ones off), waiting generously for answers."""
    return LspSettings(settle_time=GENEROUS, user={**OFF, **tables})


FAKE_TABLE = {"command": [sys.executable, str(FAKE)], "files": ["*.py"], "source": "test"}
NO_SERVERS = LspSettings(enabled=False)


class Tools:
    """The equipped tools over one Feedback, as the loop calls them."""

    def __init__(self, workspace: Path, feedback: Feedback) -> None:
        self.feedback = feedback
        self.registry: ToolRegistry = feedback.equip(builtin_tools())
        self.ctx = ToolContext(Workspace(workspace), feedback=feedback)

    async def __call__(self, name: str, **arguments: object) -> ToolResult:
        tool = self.registry.get(name)
        assert tool is not None, name
        return await within(tool.run(self.ctx, arguments))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
async def make(workspace: Path) -> AsyncIterator[Callable[..., Tools]]:
    made: list[Feedback] = []

    def build(lsp: LspSettings = NO_SERVERS, **options: object) -> Tools:
        feedback = Feedback(workspace, lsp, **options)  # type: ignore[arg-type]
        made.append(feedback)
        return Tools(workspace, feedback)

    yield build
    for feedback in made:
        await feedback.aclose()


async def test_an_edit_answers_with_what_its_language_server_now_says(workspace, make) -> None:
    (workspace / "code.py").write_text("x = 1  # ERROR: there before\ny = 2\n")
    tools = make(servers(fake=FAKE_TABLE))
    await tools("read_file", path="code.py")
    edits = [{"old_text": "y = 2", "new_text": "y = 3  # ERROR: broken now"}]
    result = await tools("edit_file", path="code.py", edits=edits)
    head = "[diagnostics of code.py after this change, from fake: 1 new error, 1 existing error]"
    assert result.text.endswith(
        f"\n\n{head}\n"
        "code.py:2: error E1 broken now (fake)\n"
        "code.py:1: error E1 there before (fake; there before this change)"
    )
    assert [(d.line, d.existing) for d in result.diagnostics] == [(2, False), (1, True)]
    fixed = await tools("write_file", path="code.py", content="x = 1\n")
    assert "[diagnostics of code.py after this change, from fake: none; 2 fixed]" in fixed.text
    assert fixed.diagnostics == ()


async def test_ruff_through_a_real_edit(workspace, make) -> None:
    (workspace / "bad.py").write_text("import os\n\nprint(undefined_name_xyz)\n")
    ruff = {"command": [program("ruff"), "server"], "files": ["*.py"]}
    tools = make(servers(mine=ruff))
    await tools("read_file", path="bad.py")
    edits = [{"old_text": "print(undefined_name_xyz)", "new_text": "print('fixed')\nprint(other)"}]
    result = await tools("edit_file", path="bad.py", edits=edits)
    lines = result.text.splitlines()
    assert (
        "[diagnostics of bad.py after this change, from mine: "
        "1 new error, 1 existing warning; 1 fixed]" in lines
    )
    assert "bad.py:4: error F821 Undefined name `other` (mine)" in lines
    assert (
        "bad.py:1: warning F401 `os` imported but unused (mine; there before this change)" in lines
    )
    assert "undefined_name_xyz" not in result.text.split("[diagnostics")[1]


async def test_a_failing_check_adds_its_output_and_a_passing_one_nothing(workspace, make) -> None:
    checks = [
        Check(("**/*.py",), "echo 'lint says no' {file}; exit 1"),
        Check(("**/*.py",), "true {file}"),
        Check(("*.txt",), "echo 'never for python files'; exit 1"),
    ]
    tools = make(checks=checks)
    result = await tools("write_file", path="src/a.py", content="x = 1\n")
    assert result.text == (
        "Created src/a.py (1 lines, 6 bytes).\n\n"
        "[check `echo 'lint says no' src/a.py; exit 1` failed with exit code 1:]\n"
        "lint says no src/a.py"
    )
    (diagnostic,) = result.diagnostics
    assert diagnostic.source == "check: echo 'lint says no' src/a.py; exit 1"
    passing = make(checks=[Check(("**/*.py",), "true {file}")])
    quiet = await passing("write_file", path="b.py", content="x = 1\n")
    assert quiet.text == "Created b.py (1 lines, 6 bytes)." and quiet.diagnostics == ()


async def test_a_check_that_does_not_finish_is_said_and_the_edit_still_answers(
    workspace, make
) -> None:
    tools = make(checks=[Check(("*.py",), "sleep 3600", timeout=1)])
    result = await tools("write_file", path="a.py", content="x = 1\n")
    assert result.text.endswith(
        "[check `sleep 3600` did not finish: timed out after 1 s; the command's processes "
        "were killed]"
    )
    assert (workspace / "a.py").read_text() == "x = 1\n", "the edit itself was made"


async def test_a_files_check_runs_once_after_the_round_with_every_changed_file(
    workspace, make
) -> None:
    tools = make(checks=[Check(("*.py",), "echo checked {files}; exit 2")])
    first = await tools("write_file", path="a.py", content="1\n")
    second = await tools("write_file", path="b c.py", content="2\n")
    await tools("write_file", path="notes.txt", content="3\n")
    assert "[check" not in first.text + second.text
    report = await tools.feedback.end_round(tools.ctx)
    assert (
        report.text == "\n\n[check `echo checked a.py 'b c.py'; exit 2` failed with exit code 2:]\n"
        "checked a.py b c.py"
    )
    assert (await tools.feedback.end_round(tools.ctx)).text == "", (
        "a round's files are checked once"
    )


async def test_the_workspaces_own_checks_wait_for_a_yes(workspace, make) -> None:
    asked: list[str] = []

    def trust(answer: bool) -> Callable:
        async def ask() -> bool:
            asked.append("asked")
            return answer

        return ask

    project = [Check(("*.py",), "echo from the project; exit 1", source=".agent/config.toml")]
    refused = make(project_checks=project, trust=trust(False))
    first = await refused("write_file", path="a.py", content="1\n")
    again = await refused("write_file", path="a.py", content="2\n")
    assert "from the project" not in first.text + again.text
    assert first.text.endswith(
        "[lsp: the workspace's checks and language servers (.agent/config.toml) were left out: "
        "that file is not trusted yet; start agent on a terminal here to be asked]"
    )
    assert again.text == "Replaced a.py (1 lines, 2 bytes); line 1 changed.", "said once"
    assert asked == ["asked"], "asked once"
    allowed = make(project_checks=project, trust=trust(True))
    ran = await allowed("write_file", path="b.py", content="1\n")
    assert "[check `echo from the project; exit 1` failed with exit code 1:]" in ran.text


async def test_a_command_that_changed_files_is_fed_back_too(workspace, make) -> None:
    tools = make(servers(fake=FAKE_TABLE), checks=[Check(("*.py",), "echo seen {file}; exit 1")])
    result = await tools(
        "exec_shell_command", command="printf 'x = 1  # ERROR: from sed\\n' > made.py"
    )
    assert result.text.startswith("[exit code: 0]\n\n")
    assert "[diagnostics of made.py after this change, from fake: 1 error]" in result.text
    assert "made.py:1: error E1 from sed (fake)" in result.text
    assert "[check `echo seen made.py; exit 1` failed with exit code 1:]" in result.text
    untouched = await tools("exec_shell_command", command="echo nothing changes")
    assert untouched.text == "nothing changes\n[exit code: 0]"


async def test_a_read_only_command_is_not_watched(workspace, make) -> None:
    tools = make(checks=[Check(("*.py",), "exit 1")])
    (workspace / "a.py").write_text("1\n")
    tool = tools.registry.get("exec_shell_command")
    assert tool is not None
    from dataclasses import replace

    result = await tool.run(replace(tools.ctx, read_only=True), {"command": "cat a.py"})
    assert result.text == "1\n[exit code: 0]"


async def test_the_lsp_tools_are_offered_only_while_a_server_runs(workspace, make) -> None:
    tools = make(servers(fake=FAKE_TABLE))
    names = {t.name for t in offered(tools.registry, "ask")}
    assert "lsp_definition" not in names and "lsp_definition" in tools.registry.names()
    (workspace / "a.py").write_text("def greet():\n    pass\n\ngreet()\n")
    await tools("read_file", path="a.py")
    await eventually(tools.feedback.any_running, "the language server to start")
    assert {"lsp_definition", "lsp_references", "lsp_hover", "lsp_symbols"} <= {
        t.name for t in offered(tools.registry, "read-only")
    }
    found = await tools("lsp_definition", path="a.py", line=4, column=1)
    assert found.text == "a.py:1:1: def greet():"


async def test_without_servers_or_checks_there_is_nothing_to_equip(workspace) -> None:
    feedback = Feedback(workspace, NO_SERVERS)
    assert not feedback.watches
    registry = builtin_tools()
    assert feedback.equip(registry) is registry
