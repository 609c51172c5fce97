"""`agent undo` end to end: the real CLI (in this process, once in its own), checkpoints
recorded directly."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_cli import wiring
from agent_cli.engine.items import Conversation
from agent_cli.git import Checkpoints, checkpoints_available
from tests.support.cli import TIMEOUT, agent_process, err, out
from tests.support.cli import agent as in_process

pytestmark = pytest.mark.skipif(not checkpoints_available(), reason="git is not installed")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    (folder / "old.txt").write_text("old\n")
    return folder.resolve()


def agent(workspace: Path, *args: str, process: bool = False) -> subprocess.CompletedProcess[str]:
    """`agent ARGS` in `workspace`, its output as text; in its own process if `process`."""
    done = (agent_process if process else in_process)(workspace, *args)
    return subprocess.CompletedProcess(done.args, done.returncode, out(done), err(done))


def conversation(workspace: Path, title: str = "") -> Conversation:
    """A stored conversation of this workspace, newer than any stored before it."""
    stored = Conversation(workspace=str(workspace), title=title)
    wiring.make_store().save(stored)
    time.sleep(0.01)  # the store orders by modification time
    return stored


def test_no_conversation_is_exit_2_with_one_sentence(workspace: Path):
    result = agent(workspace, "undo")
    assert result.returncode == 2
    assert "no conversation" in result.stderr and str(workspace) in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_nothing_to_undo_is_exit_1_with_one_sentence(workspace: Path):
    stored = conversation(workspace)
    result = agent(workspace, "undo")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"agent: Nothing to undo in conversation {stored.id}: "
        "it has no change of the agent left to take back."
    )
    assert result.stdout == ""


def test_undo_restores_the_files_and_lists_them(workspace: Path):
    stored = conversation(workspace)
    checkpoints = Checkpoints(workspace)
    checkpoints.record(stored.id, "Edit a.txt")
    (workspace / "a.txt").write_text("changed\n")
    checkpoints.record(stored.id, "Run shell command: rm old.txt; echo > new.txt")
    (workspace / "old.txt").unlink()
    (workspace / "new.txt").write_text("new\n")
    (workspace / "a.txt").write_text("changed again\n")

    result = agent(workspace, "undo", process=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "Restored 3 files to before 'Run shell command: rm old.txt; echo > new.txt' "
        f"(conversation {stored.id}):\n"
        "  M a.txt\n"
        "  D new.txt\n"
        "  A old.txt\n"
        "(M changed back, A brought back, D removed.) Run agent undo again to step further "
        "back.\n"
    )
    assert (workspace / "a.txt").read_text() == "changed\n"
    assert (workspace / "old.txt").read_text() == "old\n" and not (workspace / "new.txt").exists()

    again = agent(workspace, "undo", "--cwd", str(workspace))
    assert again.returncode == 0, again.stderr
    assert "to before 'Edit a.txt'" in again.stdout and "  M a.txt\n" in again.stdout
    assert (workspace / "a.txt").read_text() == "alpha\n"
    assert agent(workspace, "undo").returncode == 1


def test_conversation_option_chooses_which_conversation(workspace: Path):
    older = conversation(workspace, "older")
    Checkpoints(workspace).record(older.id, "Edit a.txt")
    (workspace / "a.txt").write_text("changed\n")
    conversation(workspace, "newer")  # the last one here, with nothing to undo

    assert agent(workspace, "undo").returncode == 1
    assert (workspace / "a.txt").read_text() == "changed\n"
    result = agent(workspace, "undo", "--conversation", older.id)
    assert result.returncode == 0, result.stderr
    assert f"(conversation {older.id})" in result.stdout and "  M a.txt" in result.stdout
    assert (workspace / "a.txt").read_text() == "alpha\n"


def test_unknown_or_foreign_conversation_is_a_usage_error(workspace: Path, tmp_path: Path):
    missing = agent(workspace, "undo", "--conversation", "nope")
    assert missing.returncode == 2 and "No conversation 'nope'" in missing.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    foreign = conversation(elsewhere.resolve())
    result = agent(workspace, "undo", "--conversation", foreign.id)
    assert result.returncode == 2
    assert f"belongs to {elsewhere.resolve()}" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_never_imports_gitpython(workspace: Path):
    result = agent(workspace, "undo", "--help")
    assert result.returncode == 0 and "--conversation" in result.stdout
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from agent_cli.cli import _app; import agent_cli.git; "
            "_app(['undo', '--help']); _app([]); print('git' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert probe.stdout.strip() == "False", probe.stderr
