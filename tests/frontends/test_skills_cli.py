"""`agent skills` end to end: the real CLI (in this process; one test in its own), with
its own XDG folders."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli import paths
from tests.support.cli import agent, agent_process, err, out

BUNDLED = ("explain-codebase", "review-change", "summarize-document", "write-tests")


def rows(listing: str) -> dict[str, list[str]]:
    """`agent skills list` as {name: [state, source, description]}."""
    lines = listing.strip().splitlines()
    assert lines[0].split() == ["NAME", "STATE", "SOURCE", "DESCRIPTION"]
    return {name: [state, source, rest] for name, state, source, rest in _split(lines[1:])}


def _split(lines: list[str]) -> list[list[str]]:
    return [line.split(maxsplit=3) for line in lines]


def test_list_shows_the_bundled_and_the_workspace_skills_and_warns_on_bad_ones(
    workspace: Path,
):
    skills = workspace / ".agent" / "skills"
    (skills / "deploy").mkdir(parents=True)
    (skills / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Ship it.\n---\nRun make deploy.\n"
    )
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("---\nname: other\ndescription: x\n---\nb\n")

    result = agent(workspace, "skills", "list")

    assert result.returncode == 0, err(result)
    listed = rows(out(result))
    assert set(listed) == {*BUNDLED, "deploy"}
    assert listed["deploy"] == ["on", "workspace", "Ship it."]
    assert listed["review-change"][:2] == ["on", "bundled"]
    assert "skipped" in err(result) and "broken" in err(result)
    assert "not its folder's name" in err(result)


def test_show_prints_the_front_matter_and_the_instructions(workspace: Path):
    result = agent(workspace, "skills", "show", "review-change")
    assert result.returncode == 0, err(result)
    text = out(result)
    assert text.startswith("---\nname: review-change\ntitle: Review a change\ndescription: ")
    assert "bundled skill, on" in text and "## 4. Report" in text


def test_disable_then_list_shows_it_off_and_enable_undoes_it(workspace: Path):
    disabled = agent_process(workspace, "skills", "disable", "write-tests")
    assert disabled.returncode == 0, err(disabled)
    assert "off" in out(disabled)
    stored = json.loads((paths.data_dir() / "skills.json").read_text())
    assert stored == {"disabled": ["write-tests"]}

    listed = rows(out(agent_process(workspace, "skills", "list")))
    assert listed["write-tests"][0] == "off" and listed["review-change"][0] == "on"

    assert agent_process(workspace, "skills", "enable", "write-tests").returncode == 0
    assert rows(out(agent_process(workspace, "skills", "list")))["write-tests"][0] == "on"


def test_an_unknown_name_is_exit_2_with_one_sentence(workspace: Path):
    result = agent(workspace, "skills", "show", "nope")
    assert result.returncode == 2
    assert "No skill is named 'nope'" in err(result) and "agent skills list" in err(result)
    assert len(err(result).strip().splitlines()) == 1 and "Traceback" not in err(result)


def test_every_subcommand_has_help_with_examples(workspace: Path):
    for command in ("list", "show", "enable", "disable"):
        result = agent(workspace, "skills", command, "--help")
        assert result.returncode == 0, err(result)
        assert "Examples: agent skills" in out(result), command


def test_a_file_without_front_matter_is_skipped_with_what_it_should_look_like(workspace: Path):
    notes = workspace / ".agent" / "skills" / "notes"
    notes.mkdir(parents=True)
    (notes / "SKILL.md").write_text("# Notes\n\nJust text.\n")
    result = agent(workspace, "skills", "list")
    assert result.returncode == 0 and "notes" not in out(result)
    (warning,) = err(result).splitlines()
    assert warning.startswith(f"agent: skipped {notes / 'SKILL.md'}: it does not start with")
    assert "'name: ...'" in warning and "agent skills show review-change" in warning
    assert "SPEC" not in warning  # a person has the README, not our spec


def test_plain_agent_skills_lists_as_agent_mcp_does(workspace: Path):
    result = agent(workspace, "skills")
    assert result.returncode == 0, err(result)
    assert set(rows(out(result))) == set(BUNDLED)
