"""`agent sessions` as a person runs it: list, show and rm of stored conversations."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pexpect

from agent_cli import paths
from agent_cli.engine.items import (
    AssistantItem,
    Conversation,
    NoticeItem,
    ToolCall,
    ToolItem,
    UserItem,
)
from agent_cli.engine.store import Store
from tests.support.cli import agent, agent_process, err, out
from tests.support.fake_openai import text, tool_calls


def store() -> Store:
    return Store(paths.conversations_dir())


def stored(workspace: Path, conversation_id: str, title: str, updated: float = 0.0) -> Conversation:
    conversation = Conversation(workspace=str(workspace), id=conversation_id, title=title)
    conversation.items = [UserItem(title), AssistantItem("Done.", streaming=False)]
    conversation.updated = updated or time.time()
    store().save(conversation)
    return conversation


def test_list_shows_this_workspaces_conversations_newest_first(workspace, tmp_path):
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    stored(workspace, "20250101-100000-aaaaaa", "fix [b]it[/]", time.time() - 7200)
    stored(workspace, "20250102-100000-bbbbbb", "write the docs")
    stored(elsewhere, "20250103-100000-cccccc", "somewhere else")
    result = agent(workspace, "sessions")
    assert result.returncode == 0, err(result)
    lines = out(result).splitlines()
    assert lines[0].split() == ["ID", "TITLE", "AGENT", "ITEMS", "UPDATED"]
    assert "20250102-100000-bbbbbb" in lines[1] and "write the docs" in lines[1]
    assert "just now" in lines[1] and "builtin" in lines[1]
    assert "20250101-100000-aaaaaa" in lines[2] and "2 h ago" in lines[2]
    assert "fix [b]it[/]" in lines[2]  # a title is text, never Rich markup
    assert "somewhere else" not in out(result)
    assert agent(workspace, "sessions", "list").stdout == result.stdout


def test_list_all_shows_every_workspace_and_json_is_one_object_a_line(workspace, tmp_path):
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    stored(workspace, "20250101-100000-aaaaaa", "here", time.time() - 60)
    stored(elsewhere, "20250103-100000-cccccc", "there")
    every = agent(workspace, "sessions", "--all")
    assert every.returncode == 0, err(every)
    listed = out(every)
    assert "here" in listed and "there" in listed
    assert listed.index("there") < listed.index("here")  # the most recent workspace first
    unfolded = "".join(listed.split())
    assert str(workspace) in unfolded and str(elsewhere) in unfolded
    rows = [json.loads(line) for line in out(agent(workspace, "sessions", "--json")).splitlines()]
    assert [row["id"] for row in rows] == ["20250101-100000-aaaaaa"]
    assert rows[0] | {"updated": 0} == {
        "id": "20250101-100000-aaaaaa",
        "title": "here",
        "workspace": str(workspace),
        "agent": "builtin",
        "items": 2,
        "updated": 0,
    }


def test_list_with_nothing_stored_says_so(workspace):
    result = agent(workspace, "sessions")
    assert result.returncode == 0
    assert "No conversations are stored" in out(result) and "--all" in out(result)


def test_show_prints_a_real_runs_transcript(fake, workspace):
    (workspace / "notes.txt").write_text("alpha\nbeta\ngamma\ndelta\nepsilon\n")
    arguments = json.dumps({"path": "notes.txt"})
    fake.add(tool_calls(("c1", "read_file", arguments)), text("It says **alpha** first."))
    run = agent_process(workspace, "run", "what is in the notes?", fake=fake)
    assert run.returncode == 0, err(run)
    conversation_id = store().list(str(workspace))[0].id
    result = agent_process(
        workspace, "sessions", "show", conversation_id[:17], env={"NO_COLOR": "1"}
    )
    assert result.returncode == 0, err(result)
    shown = out(result)
    assert "› what is in the notes?" in shown
    assert "✓ Read notes.txt" in shown  # the tool's title and its state
    assert "alpha" in shown and "… 2 more lines" in shown  # a short result
    assert "It says alpha first." in shown  # the answer as Markdown: no asterisks
    assert conversation_id in shown and "builtin" in shown
    assert str(workspace) in "".join(shown.split())  # a long path is folded over lines


def test_show_renders_every_kind_of_item(workspace):
    conversation = Conversation(workspace=str(workspace), id="20250101-100000-abcdef", title="t")
    conversation.items = [
        UserItem("change it"),
        AssistantItem("", reasoning="Let me look.", tool_calls=[ToolCall("c1", "edit_file", "{}")]),
        ToolItem("edit_file", "c1", title="Edit a.py", state="done", diff="-old\n+new\n"),
        ToolItem("exec_shell_command", "c2", title="Run rm -rf /", state="denied", result="no"),
        NoticeItem("The model stopped: the round limit was reached.", "warn"),
    ]
    store().save(conversation)
    shown = out(agent(workspace, "sessions", "show", "20250101", env={"NO_COLOR": "1"}))
    assert "Let me look." in shown
    assert "Edit a.py" in shown and "+new" in shown and "-old" in shown
    assert "✗ Run rm -rf /: no" in shown
    assert "The model stopped: the round limit was reached." in shown


def test_show_json_prints_the_stored_json(workspace):
    conversation = stored(workspace, "20250101-100000-aaaaaa", "fix it")
    result = agent(workspace, "sessions", "show", "20250101-100000-aaaaaa", "--json")
    assert result.returncode == 0, err(result)
    assert json.loads(out(result)) == conversation.to_json()


def test_unknown_and_ambiguous_ids_are_usage_errors(workspace):
    stored(workspace, "20250101-100000-aaaaaa", "one")
    stored(workspace, "20250101-100000-bbbbbb", "two")
    for command in ("show", "rm"):
        unknown = agent(workspace, "sessions", command, "nope")
        assert unknown.returncode == 2
        assert err(unknown).strip().splitlines() == [
            "agent: No conversation 'nope' — list them with `agent sessions`."
        ]
        ambiguous = agent(workspace, "sessions", command, "20250101")
        assert ambiguous.returncode == 2 and "give more of the id" in err(ambiguous)
    assert len(store().list()) == 2


def test_show_of_a_damaged_file_names_it_and_rm_removes_it(workspace):
    folder = paths.conversations_dir()
    folder.mkdir(parents=True, exist_ok=True)
    damaged = folder / "20250101-100000-dddddd.json"
    damaged.write_text('{"id": "20250101-100000-dddddd", "items": [')
    for args in (("show", "20250101"), ("show", "20250101", "--json")):
        result = agent(workspace, "sessions", *args)
        assert result.returncode == 1
        assert str(damaged) in err(result) and "Traceback" not in err(result)
        assert len(err(result).strip().splitlines()) == 1
    removed = agent(workspace, "sessions", "rm", "20250101", "--yes")
    assert removed.returncode == 0, err(removed)
    assert "cannot be read" in out(removed) and not damaged.exists()


def test_rm_without_a_terminal_needs_yes(workspace):
    stored(workspace, "20250101-100000-aaaaaa", "keep me")
    refused = agent(workspace, "sessions", "rm", "20250101-100000-aaaaaa")
    assert refused.returncode == 2 and "--yes" in err(refused)
    assert store().find("20250101-100000-aaaaaa").exists()
    removed = agent(workspace, "sessions", "rm", "20250101", "-y")
    assert removed.returncode == 0, err(removed)
    assert "Removed conversation 20250101-100000-aaaaaa" in out(removed)
    assert store().list() == []


def test_rm_on_a_terminal_asks_first(workspace):
    stored(workspace, "20250101-100000-aaaaaa", "maybe")
    env = dict(os.environ, TERM="xterm", NO_COLOR="1")
    args = ["-m", "agent_cli", "sessions", "rm", "20250101"]
    child = pexpect.spawn(sys.executable, args, cwd=str(workspace), env=env, encoding="utf-8")
    child.expect(r"Remove conversation 20250101-100000-aaaaaa \(“maybe”, 2 items\)\?")
    child.sendline("n")
    child.expect("Nothing removed.")
    child.expect(pexpect.EOF)
    assert store().list() != []
    child = pexpect.spawn(sys.executable, args, cwd=str(workspace), env=env, encoding="utf-8")
    child.expect(r"\[y/N\]")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and store().list() == []


def test_options_before_a_subcommand_and_bad_subcommands_are_usage_errors(workspace):
    misplaced = agent(workspace, "sessions", "--all", "show", "x")
    assert misplaced.returncode == 2 and "after the subcommand" in err(misplaced)
    typo = agent(workspace, "sessions", "shwo", "x")
    assert typo.returncode == 2 and "Did you mean 'show'?" in err(typo)
