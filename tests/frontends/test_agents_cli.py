"""`agent agents` end to end: the real CLI (in this process; one test in its own), with
its own XDG folders."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent_cli import paths
from tests.support.cli import agent, agent_process, err, out


def configure(text: str) -> None:
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)


def test_lists_every_agent_with_what_is_missing_and_how_to_install_it(workspace: Path):
    configure(f'[agents.local]\nname = "Local agent"\ncommand = "{sys.executable}"\n')

    result = agent_process(workspace, "agents", env={"PATH": str(workspace)})

    assert result.returncode == 0, err(result)
    lines = out(result).splitlines()
    assert lines[0].split() == ["ID", "NAME", "STATUS"]
    rows = {line.split()[0]: line for line in lines[1:] if not line.startswith(" ")}
    assert set(rows) == {"opencode", "codex", "claude", "gemini", "pi", "local"}
    assert rows["local"].split()[-1] == "available"
    assert rows["gemini"].endswith("missing: gemini")
    assert rows["pi"].endswith("missing: pi-acp, pi")
    text = out(result)
    assert "install: npm install -g @google/gemini-cli" in text
    assert "its changes cannot be gated" in text  # pi edits files itself


def test_json_gives_one_object_per_agent(workspace: Path):
    configure(f'[agents.local]\ncommand = "{sys.executable}"\nargs = ["-m", "x"]\n')

    result = agent(workspace, "agents", "--json", env={"PATH": str(workspace)})

    assert result.returncode == 0, err(result)
    rows = {row["id"]: row for row in map(json.loads, out(result).splitlines())}
    assert rows["local"] == {
        "id": "local",
        "name": "local",
        "command": [sys.executable, "-m", "x"],
        "available": True,
        "missing": [],
        "install": "",
        "gated": True,
    }
    assert rows["codex"]["available"] is False and rows["codex"]["missing"] == ["codex-acp"]
    assert rows["pi"]["gated"] is False


def test_a_bad_agent_entry_is_a_config_error_with_exit_2(workspace: Path):
    configure('[agents.broken]\nname = "Broken"\n')

    result = agent(workspace, "agents")

    assert result.returncode == 2
    assert "[agents.broken]" in err(result) and "no command" in err(result)
    assert "Traceback" not in err(result)
