"""file_glob_search and grep_search over real folder trees in tmp_path."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agent_cli.tools.base import ToolContext
from agent_cli.tools.search import (
    GREP_MAX_FILE_BYTES,
    SEARCH_MAX_RESULTS,
    SKIPPED_DIRS,
    GlobMatcher,
    file_glob_search,
    grep_search,
)
from agent_cli.tools.workspace import Workspace


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(Workspace(tmp_path / "ws"))


@pytest.fixture(autouse=True)
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    files = {
        "README.md": "# Title\nhello world\n",
        "setup.py": "print('setup')\n",
        "src/app.py": "def main():\n    return 'Hello'\n",
        "src/util/helpers.py": "def helper():\n    pass\n",
        "src/util/data.json": "{}\n",
        "docs/guide.md": "hello docs\n",
        "node_modules/pkg/index.js": "hello from deps\n",
        ".git/config": "hello git\n",
        "build/out.py": "hello build\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


async def glob(ctx: ToolContext, **args: object) -> list[str]:
    result = await file_glob_search.run(ctx, args)
    assert not result.is_error, result.text
    lines = result.text.splitlines()
    return lines[1:] if lines and lines[0].endswith(":") else []


async def grep(ctx: ToolContext, **args: object) -> str:
    result = await grep_search.run(ctx, args)
    assert not result.is_error, result.text
    return result.text


# ------------------------------------------------------------------ globs


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "a/b/c.pyc", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/x/a.py", False),
        ("src/*.py", "lib/src/a.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("src/**", "src/x/y", True),
        ("src/**/t_*.py", "src/t_a.py", True),
        ("a?.txt", "ab.txt", True),
        ("a?.txt", "a/.txt", False),
        ("*.{py,md}", "x/readme.md", True),
        ("[!a]*.py", "b.py", True),
        ("[!a]*.py", "a.py", False),
        ("./src/*.py", "src/a.py", True),
    ],
)
def test_glob_semantics(glob: str, path: str, expected: bool) -> None:
    matcher = GlobMatcher(glob)
    assert matcher.matches(path, path.rsplit("/", 1)[-1]) is expected


# ------------------------------------------------------------------ file_glob_search


def test_schema_and_title() -> None:
    params = file_glob_search.parameters
    assert "required" not in params
    assert params["properties"]["type"]["enum"] == ["file", "dir", "all"]
    assert params["properties"]["limit"]["default"] == SEARCH_MAX_RESULTS
    assert file_glob_search.title({"include": "*.py", "path": "src"}) == "Find *.py in src"


async def test_name_glob_matches_at_any_depth_sorted(ctx: ToolContext) -> None:
    assert await glob(ctx, include="*.py") == ["setup.py", "src/app.py", "src/util/helpers.py"]


async def test_path_glob_matches_relative_to_the_folder(ctx: ToolContext) -> None:
    assert await glob(ctx, include="src/*.py") == ["src/app.py"]
    assert await glob(ctx, include="**/*.py") == ["setup.py", "src/app.py", "src/util/helpers.py"]
    assert await glob(ctx, path="src", include="util/*") == ["util/data.json", "util/helpers.py"]


async def test_results_are_relative_to_the_searched_folder(ctx: ToolContext) -> None:
    result = await file_glob_search.run(ctx, {"path": "src", "include": "*.py"})
    assert result.text == "2 entries under src matching *.py:\napp.py\nutil/helpers.py"


async def test_exclude_with_and_without_slash(ctx: ToolContext) -> None:
    assert await glob(ctx, include="*.py", exclude="helpers.py") == ["setup.py", "src/app.py"]
    assert await glob(ctx, include="*.py", exclude="src/util/*") == ["setup.py", "src/app.py"]
    assert await glob(ctx, include="*.py", exclude="util") == ["setup.py", "src/app.py"]


async def test_type_dir_and_all(ctx: ToolContext) -> None:
    dirs = await glob(ctx, type="dir")
    assert dirs == [".git/", "build/", "docs/", "node_modules/", "src/", "src/util/"]
    everything = await glob(ctx, path="src", type="all")
    assert everything == ["app.py", "util/", "util/data.json", "util/helpers.py"]


async def test_max_depth_limits_the_walk(ctx: ToolContext) -> None:
    assert await glob(ctx, include="*.py", max_depth=1) == ["setup.py"]
    assert await glob(ctx, include="*.py", max_depth=2) == ["setup.py", "src/app.py"]
    result = await file_glob_search.run(ctx, {"max_depth": 0})
    assert result.is_error and "max_depth" in result.text


async def test_skipped_folders_are_listed_but_not_entered(ctx: ToolContext) -> None:
    everything = await glob(ctx, type="all")
    assert "node_modules/" in everything and ".git/" in everything and "build/" in everything
    skipped = ("node_modules/", ".git/", "build/")
    assert [e for e in everything if e.startswith(skipped)] == [".git/", "build/", "node_modules/"]
    assert {".git", "node_modules", "venv", "target"} <= SKIPPED_DIRS
    # Searching inside a skipped folder on purpose works.
    assert await glob(ctx, path="node_modules") == ["pkg/index.js"]


async def test_link_to_an_outside_folder_is_listed_not_walked(
    ctx: ToolContext, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("hello secret\n")
    (tmp_path / "ws" / "link").symlink_to(outside)
    everything = await glob(ctx, type="all")
    assert "link/" in everything
    assert not any("secret" in e for e in everything)
    assert "secret" not in await grep(ctx, pattern="hello")


async def test_total_count_and_limit(ctx: ToolContext, tmp_path: Path) -> None:
    many = tmp_path / "ws" / "many"
    many.mkdir()
    for i in range(150):
        (many / f"f{i:03}.txt").write_text("")
    result = await file_glob_search.run(ctx, {"path": "many", "limit": 5})
    assert result.text.splitlines()[0].startswith("150 entries under many matching ** (showing 5")
    assert result.text.splitlines()[1:] == [f"f{i:03}.txt" for i in range(5)]
    capped = await file_glob_search.run(ctx, {"path": "many", "limit": 1000})
    assert len(capped.text.splitlines()) == SEARCH_MAX_RESULTS + 1


@pytest.mark.parametrize(
    ("path", "expected"),
    [("README.md", "is a file"), ("nope", "does not exist"), ("..", "outside")],
)
async def test_glob_bad_folders(ctx: ToolContext, path: str, expected: str) -> None:
    result = await file_glob_search.run(ctx, {"path": path})
    assert result.is_error and expected in result.text


async def test_no_entries_says_so(ctx: ToolContext) -> None:
    result = await file_glob_search.run(ctx, {"include": "*.rs"})
    assert not result.is_error and result.text == "No files under . matching *.rs."


# ------------------------------------------------------------------ grep_search


def test_grep_schema_and_title() -> None:
    params = grep_search.parameters
    assert params["required"] == ["pattern"]
    assert list(params["properties"])[:2] == ["path", "pattern"]
    assert grep_search.title({"pattern": "foo", "path": "src"}) == "Search foo in src"


async def test_grep_lists_path_line_text_and_skips_dependency_folders(ctx: ToolContext) -> None:
    text = await grep(ctx, pattern="hello")
    assert text.splitlines() == [
        "README.md:2:hello world",
        "docs/guide.md:1:hello docs",
        "[2 matches in 2 files]",
    ]


async def test_grep_paths_are_workspace_relative_in_a_subfolder(ctx: ToolContext) -> None:
    text = await grep(ctx, path="src", pattern="def ")
    assert text.splitlines()[:2] == [
        "src/app.py:1:def main():",
        "src/util/helpers.py:1:def helper():",
    ]


async def test_grep_a_single_file(ctx: ToolContext) -> None:
    assert (await grep(ctx, path="src/app.py", pattern="return")).splitlines()[0] == (
        "src/app.py:2:    return 'Hello'"
    )


async def test_grep_without_line_numbers(ctx: ToolContext) -> None:
    text = await grep(ctx, pattern="world", return_line_numbers=False)
    assert text.splitlines()[0] == "README.md:hello world"


async def test_grep_literal_and_ignore_case(ctx: ToolContext) -> None:
    assert "setup.py:1:print('setup')" in await grep(ctx, pattern="print('setup')", literal=True)
    assert "No matches" in await grep(ctx, pattern="print(", literal=True, include="*.md")
    text = await grep(ctx, pattern="HELLO", ignore_case=True, include="*.py")
    assert text.splitlines()[0] == "src/app.py:2:    return 'Hello'"
    literal = await grep(ctx, pattern="HELLO", ignore_case=True, literal=True, include="*.py")
    assert literal.splitlines()[0] == "src/app.py:2:    return 'Hello'"


async def test_grep_include_and_exclude(ctx: ToolContext) -> None:
    assert "docs/guide.md" not in await grep(ctx, pattern="hello", exclude="docs")
    only = await grep(ctx, pattern="hello", include="docs/*.md")
    assert only.splitlines()[0] == "docs/guide.md:1:hello docs"


async def test_grep_anchors_work_per_line(ctx: ToolContext) -> None:
    text = await grep(ctx, pattern=r"^\s+return", include="*.py")
    assert text.splitlines()[0] == "src/app.py:2:    return 'Hello'"


async def test_grep_context_lines_like_grep_c(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "ws" / "c.txt").write_text("".join(f"l{i}\n" for i in range(1, 21)))
    text = await grep(ctx, path="c.txt", pattern=r"^l(5|7|15)$", context_lines=1)
    assert text.splitlines() == [
        "c.txt-4-l4",
        "c.txt:5:l5",
        "c.txt-6-l6",
        "c.txt:7:l7",
        "c.txt-8-l8",
        "--",
        "c.txt-14-l14",
        "c.txt:15:l15",
        "c.txt-16-l16",
        "[3 matches in 1 file]",
    ]


async def test_grep_bad_regex_is_a_clear_error(ctx: ToolContext) -> None:
    result = await grep_search.run(ctx, {"pattern": "foo("})
    assert result.is_error and "not a valid regular expression" in result.text
    assert "literal=true" in result.text


async def test_grep_skips_big_and_binary_files(ctx: ToolContext, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "big.txt").write_bytes(b"needle\n" + b"x" * GREP_MAX_FILE_BYTES)
    (root / "blob.bin").write_bytes(b"\0\1needle\n")
    (root / "ok.txt").write_text("needle\n")
    text = await grep(ctx, pattern="needle")
    assert text.splitlines() == [
        "ok.txt:1:needle",
        "[1 match in 1 file (skipped 1 files over 2 MiB and 1 binary files)]",
    ]


async def test_grep_stops_at_the_cap_and_says_there_are_more(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "ws" / "a.txt").write_text("hit\n" * 70)
    (tmp_path / "ws" / "b.txt").write_text("hit\n" * 70)
    lines = (await grep(ctx, pattern="hit")).splitlines()
    assert len(lines) == SEARCH_MAX_RESULTS + 1
    assert lines[-2] == "b.txt:30:hit"
    assert "there are more" in lines[-1]


async def test_grep_exactly_at_the_cap_does_not_claim_more(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "ws" / "a.txt").write_text("hit\n" * SEARCH_MAX_RESULTS)
    lines = (await grep(ctx, pattern="hit")).splitlines()
    assert lines[-1] == f"[{SEARCH_MAX_RESULTS} matches in 1 file]"


async def test_grep_non_ascii_pattern_and_text(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "ws" / "u.txt").write_text("un café\nÉTÉ\n")
    assert (await grep(ctx, pattern="caf[é]")).splitlines()[0] == "u.txt:1:un café"
    assert (await grep(ctx, pattern="été", ignore_case=True)).splitlines()[0] == "u.txt:2:ÉTÉ"


async def test_grep_last_line_without_newline(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "ws" / "n.txt").write_text("a\nlast")
    assert (await grep(ctx, path="n.txt", pattern="last$")).splitlines()[0] == "n.txt:2:last"


async def test_grep_does_not_follow_file_links(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("hello outside\n")
    (tmp_path / "ws" / "alias.txt").symlink_to(tmp_path / "outside.txt")
    assert "outside" not in await grep(ctx, pattern="hello")


async def test_grep_outside_path_is_refused(ctx: ToolContext) -> None:
    result = await grep_search.run(ctx, {"pattern": "x", "path": "../"})
    assert result.is_error and "outside" in result.text


async def test_grep_skips_special_files_without_blocking(ctx: ToolContext, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "ws" / "pipe")
    text = await asyncio.wait_for(grep(ctx, pattern="hello"), timeout=10)
    assert text.splitlines()[-1] == "[2 matches in 2 files]"
    direct = await asyncio.wait_for(grep(ctx, pattern="hello", path="pipe"), timeout=10)
    assert direct.startswith("No matches")
