"""The skills in the system prompt (SPEC §4, §10): names and descriptions, within the cap."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from agent_cli.backends.prompt import PROMPT_CAP, SkillLine, system_prompt
from agent_cli.tools.skills import Skills

DAY = date(2026, 1, 2)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def test_the_bundled_skills_are_listed_whole_with_their_descriptions(workspace: Path):
    skills = Skills.discover(workspace)
    lines = [SkillLine(*line) for line in skills.prompt_lines()]
    prompt = system_prompt(workspace, "ask", lines, DAY)
    assert "use_skill" in prompt
    for skill in skills.enabled():
        assert f"- {skill.name}: {skill.description}\n" in prompt
    assert len(prompt) < PROMPT_CAP
    assert prompt == system_prompt(workspace, "ask", lines, DAY)  # byte for byte, every round


def test_switched_off_skills_are_not_in_the_prompt(workspace: Path):
    skills = Skills.discover(workspace)
    skills.set_enabled("write-tests", False)
    lines = [SkillLine(*line) for line in skills.prompt_lines()]
    prompt = system_prompt(workspace, "ask", lines, DAY)
    assert "write-tests" not in prompt and "review-change" in prompt


def test_many_long_descriptions_are_cut_evenly_to_stay_under_the_cap(workspace: Path):
    lines = [
        SkillLine(f"skill-{n:02}", f"Skill {n} " + "does many things. " * 60) for n in range(20)
    ]
    prompt = system_prompt(workspace, "full", lines, DAY)
    assert len(prompt) < PROMPT_CAP
    listed = [line for line in prompt.splitlines() if line.startswith("- skill-")]
    assert len(listed) == 20 and all(line.endswith("…") for line in listed)
    assert len({len(line) for line in listed}) <= 2  # the same cut for each (names differ)
    assert "- skill-07: Skill 7 does many things." in prompt


def test_too_many_skills_for_descriptions_are_listed_by_name_then_counted(workspace: Path):
    lines = [SkillLine(f"a-rather-long-skill-name-{n:03}", "Does a thing.") for n in range(300)]
    prompt = system_prompt(workspace, "ask", lines, DAY)
    assert len(prompt) < PROMPT_CAP
    assert "- a-rather-long-skill-name-000\n" in prompt and "Does a thing." not in prompt
    named = sum(line.startswith("- a-rather-long") for line in prompt.splitlines())
    assert 50 < named < 300
    assert f"- and {300 - named} more (use_skill with any name lists them)" in prompt


def test_agents_md_comes_on_top_of_the_cap(workspace: Path):
    (workspace / "AGENTS.md").write_text("Use tabs.\n" * 700)  # 7 KiB of the project's rules
    lines = [SkillLine("one", "Does one thing.")]
    prompt = system_prompt(workspace, "ask", lines, DAY)
    assert "- one: Does one thing.\n" in prompt and prompt.count("Use tabs.") == 700
