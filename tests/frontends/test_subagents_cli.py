"""`agent subagents list`, and a sub-agent's work in `agent run`'s outputs, end to end."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli import paths
from tests.support.cli import agent, agent_process, err, out
from tests.support.fake_openai import FakeOpenAI, text, tool_calls


def define(folder: Path, name: str, front: str, body: str = "Be brief.") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / f"{name}.md"
    file.write_text(f"---\n{front}\n---\n{body}\n")
    return file


def test_list_shows_each_definition_and_where_it_was_found(workspace: Path) -> None:
    user = define(
        paths.config_dir() / "agents",
        "tester",
        "name: tester\ndescription: Writes tests.\nmode: ask\nmodel: small-model",
    )
    define(
        workspace / ".agent" / "agents",
        "reviewer",
        "description: Reviews a change.\ntools: [read_file, grep_search]",
    )
    define(workspace / ".agent" / "agents", "broken", "mode: full")
    result = agent(workspace, "subagents", "list")
    assert result.returncode == 0, err(result)
    lines = out(result).splitlines()
    assert lines[0].split() == ["NAME", "MODE", "MODEL", "TOOLS", "FILE", "DESCRIPTION"]
    reviewer, tester = lines[1], lines[2]
    assert reviewer.split()[:3] == ["reviewer", "read-only", "(conversation's)"]
    assert "read_file, grep_search" in reviewer and ".agent/agents/reviewer.md" in reviewer
    assert reviewer.endswith("Reviews a change.")
    assert tester.split()[:4] == ["tester", "ask", "small-model", "all"]
    assert str(user) in tester and tester.endswith("Writes tests.")
    assert "broken.md" in err(result) and "no 'description'" in err(result)


def test_list_with_none_says_how_to_add_one(workspace: Path) -> None:
    result = agent(workspace, "subagents", "list")
    assert result.returncode == 0
    assert "No sub-agent definitions found" in out(result)


def test_list_of_a_missing_folder_is_a_usage_error(workspace: Path) -> None:
    result = agent(workspace, "subagents", "list", "--cwd", str(workspace / "nope"))
    assert result.returncode == 2
    assert "does not exist" in err(result) and "Traceback" not in err(result)


def test_stream_json_carries_the_parent_of_a_sub_agents_items(
    fake: FakeOpenAI, workspace: Path
) -> None:
    args = json.dumps({"description": "count", "prompt": "count the files"})
    fake.add(
        tool_calls(("call_task", "task", args)),
        text("There are no files."),  # the sub-agent's answer
        text("The folder is empty."),
    )
    result = agent(workspace, "run", "--output", "stream-json", "what is here?", fake=fake)
    assert result.returncode == 0, err(result)
    lines = [json.loads(line) for line in out(result).splitlines()]
    items = {}
    for line in lines:
        if line["type"] in ("item_added", "item_updated"):
            items[line["item"]["id"]] = line["item"]
    (card,) = [i for i in items.values() if i["kind"] == "tool" and i["tool"] == "task"]
    nested = [i for i in items.values() if i["parent"] == card["id"]]
    assert sorted(i["kind"] for i in nested) == ["assistant", "user"]
    assert card["result"] == "There are no files."
    assert lines[-1]["type"] == "result" and lines[-1]["answer"] == "The folder is empty."
    # The sub-agent was asked with only its prompt, and the parent never read its work.
    child = fake.requests[1]["messages"]
    assert [m["role"] for m in child] == ["system", "user"]
    assert child[1]["content"] == "count the files"
    assert [m["role"] for m in fake.requests[2]["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]


def test_text_output_prints_only_the_parents_answer(fake: FakeOpenAI, workspace: Path) -> None:
    args = json.dumps({"description": "look", "prompt": "look around"})
    fake.add(tool_calls(("call_task", "task", args)), text("CHILD-TEXT"), text("PARENT-TEXT"))
    result = agent_process(workspace, "run", "what is here?", fake=fake)
    assert result.returncode == 0, err(result)
    assert out(result).strip() == "PARENT-TEXT"
    assert "• Task: look" in err(result)
