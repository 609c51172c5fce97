"""Hooks in `agent run`: the user's run; a workspace's are ignored without a terminal."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli import paths
from tests.support.cli import agent, agent_process, err
from tests.support.fake_openai import FakeOpenAI, text


def test_a_user_stop_hook_runs_after_agent_run(fake: FakeOpenAI, workspace: Path) -> None:
    log = workspace.parent / "stop.json"
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"[hooks]\nstop = [{json.dumps(f'cat > {log}')}]\n")
    fake.add(text("Hello."))
    result = agent_process(
        workspace, "run", "hi", fake=fake, env={"OPENAI_API_KEY": "sk-never-shown"}
    )
    assert result.returncode == 0, err(result)
    event = json.loads(log.read_text())
    assert event["event"] == "stop" and event["reason"] == "answered"
    assert event["workspace"] == str(workspace.resolve())
    assert "sk-never-shown" not in log.read_text()


def test_workspace_hooks_are_ignored_without_a_terminal(fake: FakeOpenAI, workspace: Path) -> None:
    marker = workspace / "ran"
    (workspace / ".agent").mkdir()
    (workspace / ".agent" / "config.toml").write_text(
        f"[hooks]\nuser_prompt_submit = [{json.dumps(f'touch {marker}')}]\n"
    )
    fake.add(text("Hello."))
    result = agent(workspace, "run", "hi", fake=fake)
    assert result.returncode == 0, err(result)
    assert not marker.exists()
    assert "were ignored: this workspace's hooks are not trusted yet" in err(result)
