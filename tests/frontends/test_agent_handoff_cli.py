"""`agent run --agent ID`: an external ACP agent from the command line, and a hand-off.

The agent is the tests' own fixture (a real ACP agent, run as a subprocess),
added to the user config as `[agents.fixture]` exactly as a person adds one.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.acp_agent import add_to_user_config, records
from tests.support.cli import agent, agent_process, err, out, saved
from tests.support.fake_openai import FakeOpenAI, text

ANSWER = {"turns": [{"steps": [{"op": "text", "text": "Hello from the fixture."}]}]}


def test_run_with_an_external_agent_needs_no_provider(workspace: Path, tmp_path: Path):
    add_to_user_config(ANSWER, tmp_path / "agent")
    result = agent(workspace, "run", "--agent", "fixture", "hi there", env={"OPENAI_BASE_URL": ""})
    assert result.returncode == 0, err(result)
    assert "Hello from the fixture." in out(result)
    [prompt] = records(tmp_path / "agent", "prompt")
    assert prompt["text"] == "hi there"


def test_an_unknown_agent_is_a_usage_error_with_a_suggestion(workspace: Path):
    result = agent(workspace, "run", "--agent", "opencod", "hi")
    assert result.returncode == 2
    assert "opencode" in err(result) and "Traceback" not in err(result)


def test_handing_a_conversation_over_carries_its_transcript(
    workspace: Path, tmp_path: Path, fake: FakeOpenAI
):
    add_to_user_config(ANSWER, tmp_path / "agent")
    fake.add(text("The parser lives in src/parse.py."))
    first = agent_process(workspace, "run", "where is the parser?", fake=fake)
    assert first.returncode == 0, err(first)
    second = agent_process(
        workspace, "run", "--continue", "--agent", "fixture", "now fix it", "--output", "json"
    )
    assert second.returncode == 0, err(second)
    data = json.loads(out(second))
    assert data["answer"] == "Hello from the fixture."
    [prompt] = records(tmp_path / "agent", "prompt")
    assert "User: where is the parser?" in prompt["text"]
    assert "Assistant: The parser lives in src/parse.py." in prompt["text"]
    assert prompt["text"].endswith("now fix it")
    [stored] = saved()
    assert stored["agent"] == "fixture" and stored["agent_session"]
    notices = [i["text"] for i in stored["items"] if i["kind"] == "notice"]
    assert any("Handed over from builtin to fixture" in n for n in notices)
