"""Layered AGENTS.md, through `agent run` against the fake server: the person's own and the
root's in the system prompt, a subfolder's with the first result of a call under it — and
the system prompt byte-identical in every round."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli import paths
from tests.support.cli import agent, err
from tests.support.fake_openai import FakeOpenAI, text, tool_calls


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(models=["m1"]) as server:
        yield server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "api").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "AGENTS.md").write_text("Root rule: run the tests.\n")
    (root / "src" / "AGENTS.md").write_text("Src rule: type hints everywhere.\n")
    (root / "src" / "api" / "AGENTS.md").write_text("Api rule: no blocking calls.\n")
    (root / "src" / "api" / "routes.py").write_text("ROUTES = []\n")
    (root / "src" / "util.py").write_text("X = 1\n")
    (root / "docs" / "guide.md").write_text("# Guide\n")
    return root


def read(path: str, n: int) -> tuple[str, str, str]:
    return (f"call_{n}", "read_file", json.dumps({"path": path}))


def results(fake: FakeOpenAI, request: int) -> list[str]:
    return [m["content"] for m in fake.requests[request]["messages"] if m["role"] == "tool"]


def test_three_layers_and_a_system_prompt_that_never_changes(fake, project):
    own = paths.config_dir()
    own.mkdir(parents=True, exist_ok=True)
    (own / "AGENTS.md").write_text("Own rule: answer in English.\n")
    fake.add(
        tool_calls(read("docs/guide.md", 1)),
        tool_calls(read("src/api/routes.py", 2)),
        tool_calls(read("src/util.py", 3)),
        text("Done."),
    )
    result = agent(project, "run", "look around", "--mode", "read-only", fake=fake)
    assert result.returncode == 0, err(result)
    systems = [r["messages"][0] for r in fake.requests]
    assert len(systems) == 4 and all(s == systems[0] for s in systems), "byte-identical rounds"
    prompt = systems[0]["content"]
    assert "Own rule: answer in English." in prompt and "Root rule: run the tests." in prompt
    assert prompt.index("Own rule") < prompt.index("Root rule"), "the project's comes last"
    assert "Src rule" not in prompt and "Api rule" not in prompt

    (guide,) = results(fake, 1)
    assert "Src rule" not in guide and "<instructions" not in guide, "no AGENTS.md in docs/"
    routes = results(fake, 2)[-1]
    assert routes.index('<instructions from="src/AGENTS.md">') < routes.index(
        '<instructions from="src/api/AGENTS.md">'
    ), "outermost first"
    assert "Src rule: type hints everywhere." in routes and "Api rule: no blocking calls." in routes
    util = results(fake, 3)[-1]
    assert "<instructions" not in util, "each folder's instructions are given once"


def test_a_resumed_conversation_does_not_get_them_twice(fake, project):
    fake.add(tool_calls(read("src/util.py", 1)), text("One."))
    first = agent(project, "run", "read util", "--mode", "read-only", fake=fake)
    assert first.returncode == 0, err(first)
    assert "Src rule" in results(fake, 1)[-1]
    fake.add(tool_calls(read("src/util.py", 2)), text("Two."))
    again = agent(project, "run", "--continue", "again", "--mode", "read-only", fake=fake)
    assert again.returncode == 0, err(again)
    assert "<instructions" not in results(fake, 3)[-1]


def test_a_subfolder_agents_md_leading_outside_is_not_read(fake, project, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("the person's notes\n")
    (project / "docs" / "AGENTS.md").symlink_to(secret)
    fake.add(tool_calls(read("docs/guide.md", 1)), text("Read."))
    result = agent(project, "run", "read the guide", "--mode", "read-only", fake=fake)
    assert result.returncode == 0, err(result)
    assert "person's notes" not in json.dumps(fake.requests)


async def test_a_sub_agent_and_its_parent_each_get_them_once(project):
    import asyncio

    from agent_cli.backends.subagent_definitions import Definitions
    from agent_cli.backends.subagents import Subagents
    from agent_cli.engine.items import ToolItem
    from agent_cli.providers.scripted import answer, calls
    from tests.support.sessions import make_session

    task = ("t1", "task", json.dumps({"description": "look", "prompt": "read util"}))
    turns = [
        calls(task),
        calls(read("src/util.py", 1)),  # the child
        answer("child done"),
        calls(read("src/util.py", 2)),  # the parent, after the task
        answer("parent done"),
    ]
    subagents = Subagents(Definitions(()), 3, 50)
    session, _provider, _ = make_session(project, turns, mode="read-only", subagents=subagents)
    await asyncio.wait_for(session.send("go"), 20)
    reads = [
        i for i in session.conversation.items if isinstance(i, ToolItem) and i.tool == "read_file"
    ]
    child, parent = reads
    assert child.parent and not parent.parent
    assert "Src rule" in child.result, "the child's model reads it"
    assert "Src rule" in parent.result, "the parent's model never read the child's items"
