"""Check commands: which files they are for, how files are quoted, how a run ends."""

from __future__ import annotations

from pathlib import Path

from agent_cli.tools.base import ToolContext
from agent_cli.tools.checks import Check, run_check
from agent_cli.tools.workspace import Workspace


def test_globs_match_as_the_search_tools_read_them() -> None:
    check = Check(("**/*.py",), "x {file}")
    assert check.matches("a.py") and check.matches("src/deep/a.py")
    assert not check.matches("a.pyc") and not check.matches("a.txt")
    only_src = Check(("src/*.py",), "x")
    assert only_src.matches("src/a.py") and not only_src.matches("a.py")


def test_files_are_quoted_for_the_shell() -> None:
    check = Check(("*",), "lint {file}")
    assert check.command_for(["my file.py"]) == "lint 'my file.py'"
    assert check.command_for(["a;rm -rf x.py"]) == "lint 'a;rm -rf x.py'"
    many = Check(("*",), "lint {files}")
    assert many.per_round and not check.per_round
    assert many.command_for(["a.py", "b c.py"]) == "lint a.py 'b c.py'"


async def test_a_failing_check_keeps_its_output_and_exit_code(tmp_path: Path) -> None:
    ctx = ToolContext(Workspace(tmp_path))
    (tmp_path / "my file.py").write_text("x\n")
    run = await run_check(Check(("*",), "cat {file}; echo oops; exit 3"), ["my file.py"], ctx)
    assert run.failed and run.code == 3
    assert run.output == "x\noops\n"
    assert (
        run.report()
        == "[check `cat 'my file.py'; echo oops; exit 3` failed with exit code 3:]\nx\noops"
    )
    diagnostic = run.diagnostic()
    assert (diagnostic.path, diagnostic.code, diagnostic.severity) == (
        "my file.py",
        "exit 3",
        "error",
    )


async def test_a_passing_check_has_failed_nothing(tmp_path: Path) -> None:
    run = await run_check(Check(("*",), "true {file}"), ["a.py"], ToolContext(Workspace(tmp_path)))
    assert not run.failed and run.code == 0


async def test_a_check_that_takes_too_long_is_stopped_at_its_timeout(tmp_path: Path) -> None:
    check = Check(("*",), "sleep 3600", timeout=1)
    run = await run_check(check, ["a.py"], ToolContext(Workspace(tmp_path)))
    assert run.failed and run.code is None
    assert run.report() == (
        "[check `sleep 3600` did not finish: timed out after 1 s; the command's processes "
        "were killed]"
    )
    assert run.diagnostic().code == "timeout"


async def test_a_missing_program_is_its_output_not_an_error(tmp_path: Path) -> None:
    run = await run_check(
        Check(("*",), "no-such-linter {file}"), ["a.py"], ToolContext(Workspace(tmp_path))
    )
    assert run.code == 127
    assert "no-such-linter" in run.output and "not found" in run.output


async def test_a_check_that_prints_an_exit_line_and_hangs_has_not_passed(tmp_path: Path) -> None:
    """The code comes from the process, never from the output: a script that prints
    `[exit code: 0]` and then hangs past its timeout has failed."""
    check = Check(("*",), "echo '[exit code: 0]'; sleep 3600", timeout=1)
    run = await run_check(check, ["a.py"], ToolContext(Workspace(tmp_path)))
    assert run.failed and run.code is None
    assert "timed out" in run.report()
