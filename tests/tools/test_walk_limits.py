"""A walk keeps one descriptor open per folder level (tools/search.py `walk_at`), so a
tree nested deeper than the descriptors a process may hold must not make grep answer
"No matches" or glob list nothing: the walk stops at WALK_MAX_DEPTH and says so, and
running out of descriptors is an error, never an empty folder."""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.tools.base import ToolContext
from agent_cli.tools.search import WALK_MAX_DEPTH, file_glob_search, grep_search, walk
from agent_cli.tools.workspace import Workspace

DEPTH = 1100  # deeper than the usual 1024 descriptors


@pytest.fixture
def few_descriptors() -> Iterator[int]:
    """The soft descriptor limit lowered to the common default, 1024, for the test."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lowered = min(soft, 1024)
    resource.setrlimit(resource.RLIMIT_NOFILE, (lowered, hard))
    try:
        yield lowered
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[Path]:
    """A workspace with a tree DEPTH folders deep (see `nest`), removed afterwards one
    level at a time (shutil.rmtree, which pytest's cleanup uses, recurses too deep)."""
    top = tmp_path / "ws"
    top.mkdir()
    nest(top, DEPTH)
    yield top
    while (top / "d").exists():
        for name in os.listdir(top / "d"):
            if name != "d":
                os.unlink(top / "d" / name)
        if (top / "d" / "d").exists():
            os.rename(top / "d" / "d", top / "next")
            os.rmdir(top / "d")
            os.rename(top / "next", top / "d")
        else:
            os.rmdir(top / "d")


def nest(top: Path, depth: int) -> str:
    """`depth` folders `d` one inside the other under `top`, the deepest with `f.txt`, and
    `top.txt` beside the first; returns the deepest one's path relative to `top`."""
    (top / "top.txt").write_text("needle\n")
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open("f.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as f:
            f.write("needle\n")
    finally:
        os.close(fd)
    return "/".join(["d"] * depth)


async def test_grep_in_a_tree_deeper_than_the_descriptors_says_what_it_did_not_search(
    deep: Path, few_descriptors: int
) -> None:
    ctx = ToolContext(Workspace(deep))
    result = await grep_search.run(ctx, {"pattern": "needle", "path": "."})
    assert not result.is_error, result.text
    assert result.text.startswith("top.txt:1:needle\n[1 match in 1 file]"), result.text[:300]
    assert f"deeper than {WALK_MAX_DEPTH} levels" in result.text, result.text[-300:]
    assert "not searched" in result.text


async def test_glob_in_a_deep_tree_lists_what_it_reached_and_says_what_it_did_not(
    deep: Path, few_descriptors: int
) -> None:
    ctx = ToolContext(Workspace(deep))
    result = await file_glob_search.run(ctx, {"include": "*.txt"})
    assert not result.is_error, result.text
    assert result.text.startswith("1 entries under . matching *.txt:\ntop.txt\n"), result.text
    assert f"deeper than {WALK_MAX_DEPTH} levels" in result.text, result.text[-300:]


def test_a_walk_out_of_descriptors_raises_instead_of_seeing_an_empty_folder(
    tmp_path: Path, few_descriptors: int
) -> None:
    """Descriptors used up by something else (a leak, many open files): the walk must not
    take a folder it could not open for an empty one."""
    nest(tmp_path, 3)
    held: list[int] = []
    try:
        with pytest.raises(OSError) as raised:
            entries = walk(str(tmp_path))
            next(entries)  # the walk holds its top folder now
            while True:  # use up what is left, then ask for the next level
                try:
                    held.append(os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY))
                except OSError:
                    break
            list(entries)
        assert raised.value.errno in (24, 23)  # EMFILE, ENFILE
    finally:
        for fd in held:
            os.close(fd)
