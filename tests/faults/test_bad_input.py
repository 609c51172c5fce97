"""Bad input (issue #8): a broken config file, an unknown mode, a missing workspace, a
file that is not UTF-8, and a 100 MB paste.

Each is one clear sentence on stderr (no traceback) with the right exit code
(SPEC §1: 2 for usage and config errors); a conversation stored before stays as
it was and goes on once the input is put right.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli import paths
from agent_cli.commands.run import STDIN_CAP
from tests.support.cli import agent, agent_process, err, out, saved
from tests.support.fake_openai import FakeOpenAI, text, tool_calls
from tests.support.measured import agent_measured

PEAK_RSS_MIB = 120
"""Far below what keeping a 100 MB paste would need; well above the agent's own
footprint (about 40 MiB)."""
MIB = 1024 * 1024


def one_sentence(stderr: str) -> str:
    """The single line a user error prints, checked to be just that."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line, got:\n{stderr}"
    assert lines[0].startswith("agent: ") and "Traceback" not in stderr
    return lines[0]


def first_conversation(fake: FakeOpenAI, workspace: Path) -> dict:
    fake.add(text("First answer."))
    result = agent(workspace, "run", "first", fake=fake)
    assert result.returncode == 0, err(result)
    return saved()[0]


def assert_goes_on(fake: FakeOpenAI, workspace: Path, stored: dict) -> None:
    """The conversation is as it was stored, and `--continue` adds to it."""
    assert saved() == [stored]
    fake.add(text("Going on."))
    again = agent(workspace, "run", "--continue", "go on", fake=fake)
    assert again.returncode == 0, err(again)
    assert [i["kind"] for i in saved()[0]["items"]][len(stored["items"]) :] == [
        "user",
        "assistant",
    ]


# ------------------------------------------------------------------ config and flags


@pytest.mark.parametrize("where", ["user", "project"])
def test_invalid_config_toml_is_exit_2_naming_file_and_line(fake, workspace, where):
    stored = first_conversation(fake, workspace)
    config = paths.user_config_file() if where == "user" else paths.project_config_file(workspace)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('model = "m1"\nmax_rounds = = 3\n')

    result = agent(workspace, "run", "--continue", "again", fake=fake)
    assert result.returncode == 2
    line = one_sentence(err(result))
    assert str(config) in line and "line 2" in line and "fix that line" in line
    assert len(fake.requests) == 1, "nothing may be sent with a broken config"

    config.unlink()
    assert_goes_on(fake, workspace, stored)


def test_unknown_mode_flag_is_a_usage_error(fake, workspace):
    result = agent(workspace, "run", "--mode", "fast", "hi", fake=fake)
    assert result.returncode == 2
    assert "'fast' is not one of 'ask', 'auto', 'read-only', 'full'" in err(result)
    assert "Traceback" not in err(result)
    assert fake.requests == [] and saved() == []


def test_unknown_mode_in_the_user_config_is_exit_2_naming_the_file(fake, workspace):
    stored = first_conversation(fake, workspace)
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('mode = "fast"\n')

    result = agent(workspace, "run", "--continue", "again", fake=fake)
    assert result.returncode == 2
    line = one_sentence(err(result))
    assert "'fast'" in line and str(config) in line and "ask, auto, read-only, full or plan" in line

    config.write_text('mode = "read-only"\n')
    assert_goes_on(fake, workspace, stored)


def test_a_mode_in_the_project_config_is_ignored_with_a_warning(fake, workspace):
    """A cloned repo may not choose its own mode, valid or not (SPEC §2)."""
    config = paths.project_config_file(workspace)
    config.parent.mkdir(parents=True)
    config.write_text('mode = "fast"\n')
    fake.add(text("Fine."))
    result = agent(workspace, "run", "hi", fake=fake)
    assert result.returncode == 0, err(result)
    assert "mode" in err(result) and str(config) in err(result)
    assert "Traceback" not in err(result) and out(result).strip() == "Fine."


@pytest.mark.parametrize(
    "command", [["run", "hi"], [], ["undo"], ["acp"]], ids=["run", "tui", "undo", "acp"]
)
def test_a_missing_workspace_is_exit_2_saying_so(fake, tmp_path, command):
    missing = tmp_path / "no" / "such" / "dir"
    result = agent(tmp_path, *command, "--cwd", str(missing), fake=fake)
    assert result.returncode == 2
    line = one_sentence(err(result))
    assert line == f"agent: The folder {missing} does not exist — pass an existing --cwd."
    assert fake.requests == [] and saved() == []


def test_a_file_as_the_workspace_is_exit_2_saying_so(fake, tmp_path):
    afile = tmp_path / "notes.txt"
    afile.write_text("x")
    result = agent(tmp_path, "run", "hi", "--cwd", str(afile), fake=fake)
    assert result.returncode == 2
    assert one_sentence(err(result)) == f"agent: {afile} is not a folder — pass a folder to --cwd."


# ------------------------------------------------------------------ a file that is not UTF-8


def test_editing_a_non_utf8_file_is_refused_and_leaves_it_unchanged(fake, workspace):
    latin1 = "café = 'crème brûlée'\n".encode("latin-1")
    (workspace / "menu.py").write_bytes(latin1)
    edits = [{"old_text": "café", "new_text": "tea"}]
    fake.add(
        tool_calls(("c1", "edit_file", json.dumps({"path": "menu.py", "edits": edits}))),
        text("It is not UTF-8, so I left it."),
    )
    result = agent(workspace, "run", "rename café", "--yes", fake=fake)
    assert result.returncode == 0, err(result)
    assert (workspace / "menu.py").read_bytes() == latin1
    told = fake.requests[1]["messages"][-1]["content"]
    assert told.startswith("menu.py is not UTF-8 text") and "convert it to UTF-8" in told
    assert "✗ Edit menu.py: menu.py is not UTF-8 text" in err(result)
    assert "Traceback" not in err(result)
    stored = saved()[0]
    assert [i["state"] for i in stored["items"] if i["kind"] == "tool"] == ["error"]
    assert_goes_on(fake, workspace, stored)


# ------------------------------------------------------------------ a 100 MB paste

LOG_BLOCK = b"".join(
    b"2024-05-01 12:00:%02d ERROR worker %06d failed\n" % (i % 60, i) for i in range(24_000)
)


@pytest.mark.parametrize("prompt", [["summarise"], ["-"]], ids=["appended", "whole-prompt"])
def test_a_100_mb_paste_is_capped_with_a_notice_in_bounded_memory(fake, workspace, prompt):
    block = LOG_BLOCK[:MIB]
    fake.add(text("Workers keep failing."))
    run = agent_measured(workspace, "run", *prompt, fake=fake, stdin=block, repeat=100)
    assert run.result.returncode == 0, err(run.result)
    notice = f"agent: stdin was {100 * MIB:,} bytes; only the first {STDIN_CAP:,} bytes"
    assert notice in err(run.result) and "Traceback" not in err(run.result)
    assert out(run.result).strip() == "Workers keep failing."
    sent = fake.requests[0]["messages"][-1]["content"]
    assert len(sent.encode()) <= STDIN_CAP + 64 and "\ufffd" not in sent
    assert run.peak_rss_mib < PEAK_RSS_MIB, f"peak RSS {run.peak_rss_mib:.0f} MiB"
    assert run.seconds < 20
    assert_goes_on(fake, workspace, saved()[0])


def test_a_paste_cut_inside_a_character_keeps_valid_text(fake, workspace):
    """The cap falls in the middle of a 3-byte character: it is dropped, not mangled."""
    paste = b"a" * (STDIN_CAP - 1) + "€".encode() * 10
    fake.add(text("ok"))
    result = agent(workspace, "run", "-", fake=fake, stdin=paste)
    assert result.returncode == 0, err(result)
    sent = fake.requests[0]["messages"][-1]["content"]
    assert sent == "a" * (STDIN_CAP - 1)


def test_a_non_utf8_paste_is_replaced_not_fatal(fake, workspace):
    fake.add(text("ok"))
    result = agent_process(
        workspace, "run", "what is this?", fake=fake, stdin=b"caf\xe9 \xff\xfe\n"
    )
    assert result.returncode == 0, err(result)
    assert "Traceback" not in err(result)
    assert "caf\ufffd \ufffd\ufffd" in fake.requests[0]["messages"][-1]["content"]
