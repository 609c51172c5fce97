"""`agent run` with the sandbox, end to end: the real CLI, a fake model server, real bwrap
or Landlock (SPEC §14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import agent, agent_process, err
from tests.support.fake_openai import FakeOpenAI, text, tool_calls


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def shell(command: str) -> tuple[str, str, str]:
    return ("call_1", "exec_shell_command", json.dumps({"command": command}))


def told(fake: FakeOpenAI) -> str:
    return fake.requests[1]["messages"][-1]["content"]


def test_full_mode_runs_commands_confined_and_the_model_hears_what_was_stopped(
    kind, fake, workspace, outside: Path
):
    target = outside / "planted"
    fake.add(tool_calls(shell(f"echo inside > in.txt; echo x > {target}")), text("done"))
    result = agent_process(workspace, "run", "go", "--yes", "--sandbox", kind, fake=fake)
    assert result.returncode == 0, err(result)
    assert (workspace / "in.txt").read_text() == "inside\n"
    assert not target.exists()
    assert "The sandbox stopped this command" in told(fake)


def test_auto_without_a_terminal_refuses_to_leave_the_sandbox_and_says_so(
    kind, fake, workspace, outside: Path
):
    target = outside / "planted"
    fake.add(tool_calls(shell(f"echo x > {target}")), text("done"))
    result = agent(workspace, "run", "go", "--mode", "auto", "--sandbox", kind, fake=fake)
    assert result.returncode == 0, err(result)
    assert not target.exists()
    assert "the sandbox stopped were not run outside it" in err(result)
    assert "--sandbox off" in err(result)


def test_sandbox_off_is_the_persons_decision(fake, workspace, outside: Path):
    target = outside / "written"
    fake.add(tool_calls(shell(f"echo x > {target}")), text("done"))
    result = agent(workspace, "run", "go", "--yes", "--sandbox", "off", fake=fake)
    assert result.returncode == 0, err(result)
    assert target.read_text() == "x\n"
    assert "without a sandbox: turned off by --sandbox off" in err(result)
