"""Skills (SPEC §10): discovery and precedence, bad files, switches, `use_skill`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli import paths
from agent_cli.errors import UnknownSkill
from agent_cli.tools.base import Effect, ToolContext
from agent_cli.tools.skills import (
    FrontMatterError,
    Skills,
    parse_skill_file,
    use_skill_tool,
)
from agent_cli.tools.workspace import Workspace

BUNDLED = {"review-change", "write-tests", "explain-codebase", "summarize-document"}


def skill_text(name: str, description: str = "Does a thing.", body: str = "Do it.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def write_skill(root: Path, folder: str, text: str | bytes) -> Path:
    file = root / folder / "SKILL.md"
    file.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        file.write_bytes(text)
    else:
        file.write_text(text, encoding="utf-8")
    return file


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def user_root() -> Path:
    return paths.config_dir() / "skills"


@pytest.fixture
def workspace_root(workspace: Path) -> Path:
    return workspace / ".agent" / "skills"


# ---------------------------------------------------------------- bundled


def test_the_four_bundled_skills_parse_without_warnings(workspace: Path):
    skills = Skills.discover(workspace)
    assert skills.warnings == []
    assert {s.name for s in skills.all} == BUNDLED
    for skill in skills.all:
        assert skill.source == "bundled"
        assert skill.path.name == "SKILL.md" and skill.folder.name == skill.name
        assert 20 <= len(skill.description) <= 200
        assert skill.title and skill.title != skill.name
        assert 30 <= len(skill.instructions.splitlines()) <= 80
        # Written for our tools, by their names.
        assert any(t in skill.instructions for t in ("read_file", "grep_search"))


# -------------------------------------------------------------- precedence


def test_workspace_overrides_user_overrides_bundled_by_name(
    workspace: Path, user_root: Path, workspace_root: Path
):
    write_skill(user_root, "review-change", skill_text("review-change", "User review."))
    write_skill(user_root, "deploy", skill_text("deploy", "User deploy."))
    write_skill(workspace_root, "deploy", skill_text("deploy", "Project deploy."))
    write_skill(workspace_root, "lint", skill_text("lint", "Project lint."))

    skills = Skills.discover(workspace)

    assert skills.warnings == []
    by_name = {s.name: s for s in skills.all}
    assert set(by_name) == BUNDLED | {"deploy", "lint"}
    assert (by_name["review-change"].source, by_name["review-change"].description) == (
        "user",
        "User review.",
    )
    assert (by_name["deploy"].source, by_name["deploy"].description) == (
        "workspace",
        "Project deploy.",
    )
    assert by_name["write-tests"].source == "bundled"
    assert [s.name for s in skills.all] == sorted(by_name)


def test_only_one_level_is_searched(workspace: Path, workspace_root: Path):
    write_skill(workspace_root / "group", "deep", skill_text("deep"))
    write_skill(workspace_root, ".hidden", skill_text("hidden"))
    skills = Skills.discover(workspace)
    assert skills.get("deep") is None and skills.get("hidden") is None
    assert skills.warnings == []


def test_a_file_with_a_byte_order_mark_and_crlf_lines_loads(workspace: Path, workspace_root: Path):
    text = skill_text("windows", "Written on Windows.").replace("\n", "\r\n")
    write_skill(workspace_root, "windows", b"\xef\xbb\xbf" + text.encode())
    skill = Skills.discover(workspace).get("windows")
    assert skill is not None and skill.description == "Written on Windows."
    assert skill.instructions == "Do it."


# ---------------------------------------------------------------- bad files

BAD = {
    "no front matter": ("plain", "# Just markdown\n", "does not start with a front-matter"),
    "unclosed front matter": ("open", "---\nname: open\ndescription: x\n", "no closing"),
    "not key: value": ("odd", "---\nname: odd\njust words\n---\nbody\n", "not 'key: value'"),
    "bad name": ("Bad_Name", skill_text("Bad_Name"), "not kebab-case"),
    "name not the folder's": ("folder", skill_text("other"), "not its folder's name"),
    "missing name": ("anon", "---\ndescription: x\n---\nbody\n", "no 'name'"),
    "missing description": ("nodesc", "---\nname: nodesc\n---\nbody\n", "no 'description'"),
    "no instructions": ("empty", skill_text("empty", body=""), "no instructions"),
    "invalid UTF-8": ("latin", skill_text("latin", "caf\xe9").encode("latin-1"), "not UTF-8"),
    "binary": ("bin", b"---\nname: bin\x00\n---\n", "binary"),
    "unquoted ' #'": ("hash", skill_text("hash", "fixes #12 and # more"), "' #'"),
    "repeated key": ("twice", "---\nname: twice\nname: twice\n---\nb\n", "repeats"),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_a_bad_file_is_skipped_with_a_warning(case: str, workspace: Path, workspace_root: Path):
    folder, text, reason = BAD[case]
    bad = write_skill(workspace_root, folder, text)
    write_skill(workspace_root, "good", skill_text("good"))

    skills = Skills.discover(workspace)

    assert skills.get("good") is not None
    assert {s.name for s in skills.all} == BUNDLED | {"good"}
    assert len(skills.warnings) == 1
    assert str(bad) in skills.warnings[0] and reason in skills.warnings[0]


def test_a_bad_override_leaves_the_earlier_skill_in_place(workspace: Path, workspace_root: Path):
    write_skill(workspace_root, "review-change", "---\nname: review-change\n---\nno description\n")
    skills = Skills.discover(workspace)
    skill = skills.get("review-change")
    assert skill is not None and skill.source == "bundled"
    assert len(skills.warnings) == 1


# -------------------------------------------------------------- front matter


def test_front_matter_values_plain_quoted_and_blocks():
    text = (
        "---\r\n"
        "name: no\r\n"  # YAML would make this False; a skill name is text
        "title: 'It''s a title'\r\n"
        'description: "Quoted: with \\"escapes\\" and: colons"\r\n'
        "# a comment\r\n"
        "metadata:\r\n"
        "  owner: someone\r\n"
        "allowed-tools:\r\n"
        "  - read_file\r\n"
        "- grep_search\r\n"  # YAML lets a list under a key start at column 0
        "---\r\n"
        "\r\n"
        "The body.\r\n"
    )
    fields, body = parse_skill_file(text)
    assert fields == {
        "name": "no",
        "title": "It's a title",
        "description": 'Quoted: with "escapes" and: colons',
    }
    assert body == "The body."


def test_front_matter_block_and_continued_values_become_one_line():
    text = "---\nname: a\ndescription: >\n  first line\n  second line\ntitle: long\n  more\n---\nb"
    fields, _ = parse_skill_file(text)
    assert fields["description"] == "first line second line"
    assert fields["title"] == "long more"


@pytest.mark.parametrize(
    "line",
    ["description: 'open", 'description: "open', "description: [a, b]", "description: *alias"],
)
def test_front_matter_refuses_what_it_cannot_read_plainly(line: str):
    with pytest.raises(FrontMatterError, match="line 3"):
        parse_skill_file(f"---\nname: a\n{line}\n---\nbody\n")


# ----------------------------------------------------------------- switches


def test_switches_are_persisted_and_read_by_a_new_discovery(workspace: Path):
    skills = Skills.discover(workspace)
    skills.set_enabled("write-tests", False)

    assert "write-tests" not in {s.name for s in skills.enabled()}
    assert "write-tests" not in dict(skills.prompt_lines())
    state = paths.data_dir() / "skills.json"
    assert json.loads(state.read_text()) == {"disabled": ["write-tests"]}

    again = Skills.discover(workspace)
    assert not again.is_enabled("write-tests") and again.get("write-tests") is not None
    assert {name for name, _ in again.prompt_lines()} == BUNDLED - {"write-tests"}

    again.set_enabled("write-tests", True)
    assert Skills.discover(workspace).is_enabled("write-tests")
    assert json.loads(state.read_text()) == {"disabled": []}


def test_a_switch_made_meanwhile_by_another_process_is_kept(workspace: Path):
    first, second = Skills.discover(workspace), Skills.discover(workspace)
    first.set_enabled("write-tests", False)
    second.set_enabled("review-change", False)
    assert {s.name for s in Skills.discover(workspace).enabled()} == BUNDLED - {
        "write-tests",
        "review-change",
    }


def test_switching_an_unknown_skill_is_an_error(workspace: Path):
    with pytest.raises(UnknownSkill):
        Skills.discover(workspace).set_enabled("nope", False)
    assert not (paths.data_dir() / "skills.json").exists()


def test_a_broken_switches_file_is_a_warning_and_everything_is_on(workspace: Path):
    state = paths.data_dir() / "skills.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text("{not json")
    skills = Skills.discover(workspace)
    assert {s.name for s in skills.enabled()} == BUNDLED
    assert len(skills.warnings) == 1 and str(state) in skills.warnings[0]


# ----------------------------------------------------------------- use_skill


async def test_use_skill_returns_the_instructions_and_the_folder(
    workspace: Path, workspace_root: Path
):
    write_skill(workspace_root, "lint", skill_text("lint", body="Run ruff.\n\nSee notes.md."))
    skills = Skills.discover(workspace)
    use_skill = use_skill_tool(skills)
    context = ToolContext(Workspace(workspace))

    assert use_skill.name == "use_skill" and use_skill.effect is Effect.READ
    assert use_skill.parameters["required"] == ["name"]
    assert use_skill.title({"name": "lint"}) == "Use skill lint"

    result = await use_skill.run(context, {"name": "lint"})
    assert not result.is_error
    assert "Run ruff.\n\nSee notes.md." in result.text
    assert ".agent/skills/lint" in result.text and "relative to it" in result.text

    bundled = await use_skill.run(context, {"name": "review-change"})
    assert not bundled.is_error and "git diff" in bundled.text
    assert str(skills.get("review-change").folder) in bundled.text  # type: ignore[union-attr]


async def test_use_skill_refuses_unknown_and_switched_off_names(workspace: Path):
    skills = Skills.discover(workspace)
    use_skill = use_skill_tool(skills)
    context = ToolContext(Workspace(workspace))

    unknown = await use_skill.run(context, {"name": "nope"})
    assert unknown.is_error and "does not exist" in unknown.text
    assert all(name in unknown.text for name in BUNDLED)

    skills.set_enabled("write-tests", False)
    off = await use_skill.run(context, {"name": "write-tests"})
    assert off.is_error and "switched off" in off.text
    available = off.text.split("Available skills:")[1]
    assert "write-tests" not in available and "review-change" in available
