"""A folder swapped for a link between the check of a path and its use (TOCTOU).

The attacker is a process the model started beside the agent (a background
command) that turns `sub/` into a link to a folder outside once the file tools
have resolved `sub/x`: the approval card's wait is such a window, and every read
has a small one. The file tools must refuse, never read or write outside.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.tools.base import ToolContext
from agent_cli.tools.files import apply_change, plan_edit_file, plan_write_file, read_file
from agent_cli.tools.workspace import OutsideWorkspace, Workspace

SECRET = "secret outside the workspace"


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "sub").mkdir(parents=True)
    outside.mkdir()
    (workspace / "sub" / "x.txt").write_text("inside\n")
    (outside / "x.txt").write_text(SECRET + "\n")
    return workspace, outside


@contextlib.contextmanager
def flipping(workspace: Path, outside: Path) -> Iterator[None]:
    """While inside: a thread flips `sub` between the folder and a link to `outside` as fast
    as it can (a process racing the tools)."""
    done = threading.Event()

    def flip() -> None:
        real, link = workspace / "sub-real", workspace / "sub-link"
        link.symlink_to(outside, target_is_directory=True)
        while not done.is_set():
            os.rename(workspace / "sub", real)
            os.rename(link, workspace / "sub")
            os.rename(workspace / "sub", link)
            os.rename(real, workspace / "sub")

    racer = threading.Thread(target=flip)
    racer.start()
    try:
        yield
    finally:
        done.set()
        racer.join()


def swap(workspace: Path, outside: Path) -> None:
    """`sub` becomes a link to the outside folder (the real one is kept aside)."""
    (workspace / "sub").rename(workspace / "sub-real")
    (workspace / "sub").symlink_to(outside, target_is_directory=True)


async def test_an_approved_write_is_not_sent_outside_by_a_folder_swapped_meanwhile(places):
    workspace, outside = places
    ctx = ToolContext(Workspace(workspace))
    created = await plan_write_file(ctx, "sub/new.txt", "planted\n")
    edited = await plan_edit_file(ctx, "sub/x.txt", [{"old_text": "inside", "new_text": "x"}])
    swap(workspace, outside)  # while the approval cards wait
    for change in (created, edited):
        result = await apply_change(ctx, change)
        assert result.is_error and "became a symbolic link" in result.text, result.text
        assert "Nothing was changed." in result.text
    assert sorted(p.name for p in outside.iterdir()) == ["x.txt"]
    assert (outside / "x.txt").read_text() == SECRET + "\n"


async def test_a_deeper_missing_folder_is_not_made_outside_either(places):
    workspace, outside = places
    ctx = ToolContext(Workspace(workspace))
    change = await plan_write_file(ctx, "sub/a/b/new.txt", "planted\n")
    swap(workspace, outside)
    result = await apply_change(ctx, change)
    assert result.is_error and "became a symbolic link" in result.text
    assert sorted(p.name for p in outside.iterdir()) == ["x.txt"]


def test_a_resolved_path_opened_after_a_swap_is_refused(places):
    workspace, outside = places
    space = Workspace(workspace)
    real = space.resolve("sub/x.txt")
    swap(workspace, outside)
    with pytest.raises(OutsideWorkspace, match="became a symbolic link"):
        space.open_file(real)
    (workspace / "sub").unlink()
    (workspace / "sub").mkdir()
    (workspace / "sub" / "x.txt").symlink_to(outside / "x.txt")  # the file itself, this time
    with pytest.raises(OutsideWorkspace, match="became a symbolic link"):
        space.open_file(real)


async def test_reads_raced_by_a_process_flipping_the_folder_never_see_outside(places):
    """A real race: a thread flips `sub` between the folder and the link as fast as it can
    while read_file reads `sub/x.txt` again and again. Each read answers "inside", or an
    error (refused, or not found mid-flip); never the secret. (It cannot fail on a machine
    too slow to race: then every read simply answers "inside".)"""
    workspace, outside = places
    ctx = ToolContext(Workspace(workspace))
    with flipping(workspace, outside):
        answers = [await read_file.run(ctx, {"path": "sub/x.txt"}) for _ in range(2_000)]
    assert not [a.text for a in answers if SECRET in a.text]
    assert any("inside" in a.text and not a.is_error for a in answers)


def test_what_an_acp_agent_asks_to_read_or_edit_is_opened_the_same_way(places):
    """Another agent over ACP (`fs/read_text_file`, its edits' diffs) reads through
    `acp_mapping.read_text`: a swap after the path was resolved is refused there too."""
    from agent_cli.backends.acp_mapping import read_text

    workspace, outside = places
    space = Workspace(workspace)
    real = space.resolve("sub/x.txt", write=True)
    assert read_text(space, real) == "inside\n"
    swap(workspace, outside)
    with pytest.raises(OutsideWorkspace):
        read_text(space, real)


def test_a_walk_does_not_enter_a_folder_swapped_for_a_link_after_it_was_listed(places):
    """The walk is a generator: stopped right after it listed `sub` (a folder then), the
    folder becomes a link to outside; what the walk then lists is not outside's."""
    from agent_cli.tools.search import walk

    workspace, outside = places
    (outside / "planted.txt").write_text(SECRET)
    entries = walk(str(workspace))
    first, _entry, is_dir = next(entries)
    assert (first, is_dir) == ("sub", True)
    swap(workspace, outside)
    rest = [relative for relative, _entry, _is_dir in entries]
    assert "sub/planted.txt" not in rest and "sub/x.txt" not in rest, rest


async def test_grep_raced_by_a_process_flipping_the_folder_never_finds_outside(places):
    """As for read_file: grep_search over the workspace while a thread flips `sub` between
    the folder and a link to outside finds the line inside, never the secret."""
    from agent_cli.tools.search import grep_search

    workspace, outside = places
    ctx = ToolContext(Workspace(workspace))
    with flipping(workspace, outside):
        args = {"pattern": "inside|secret", "path": "."}
        answers = [await grep_search.run(ctx, args) for _ in range(1_000)]
    assert not [a.text for a in answers if SECRET in a.text]
    assert any("inside" in a.text for a in answers)


async def test_an_editor_write_makes_no_folder_outside_and_is_refused_after_a_swap(places):
    """`agent acp` with an editor's fs/*: the editor writes by path, so the folders are made
    by descriptor and the path is resolved again just before it is handed over."""
    from tests.tools.test_files import EditorBuffers

    workspace, outside = places
    editor = EditorBuffers()
    ctx = ToolContext(Workspace(workspace), files=editor)
    deep = await plan_write_file(ctx, "sub/a/b/new.txt", "planted\n")
    edited = await plan_edit_file(ctx, "sub/x.txt", [{"old_text": "inside", "new_text": "x"}])
    swap(workspace, outside)
    for change in (deep, edited):
        result = await apply_change(ctx, change)
        assert result.is_error and "Nothing was changed." in result.text, result.text
    assert sorted(p.name for p in outside.iterdir()) == ["x.txt"]
    assert editor.writes == []


async def test_an_editor_write_is_refused_when_the_path_now_leads_elsewhere_inside(places):
    """Swapped for a link to another folder inside: the folders are fine to walk, but the
    path no longer names the file the change was planned on."""
    from tests.tools.test_files import EditorBuffers

    workspace, _outside = places
    (workspace / "other").mkdir()
    editor = EditorBuffers()
    ctx = ToolContext(Workspace(workspace), files=editor)
    change = await plan_write_file(ctx, "sub/new.txt", "planted\n")
    (workspace / "sub").rename(workspace / "sub-real")
    (workspace / "sub").symlink_to(workspace / "other", target_is_directory=True)
    result = await apply_change(ctx, change)
    assert result.is_error and "changed while it was in use" in result.text, result.text
    assert editor.writes == []


def test_an_acp_agents_read_takes_only_a_regular_file_within_the_limit(places):
    """What `acp_mapping.read_text` opened is checked by its descriptor: a FIFO (swapped in
    after any check by path) is refused without blocking, and so is a file over the limit."""
    from agent_cli.backends.acp_mapping import read_text
    from agent_cli.tools.files import READ_FILE_MAX_BYTES

    workspace, _outside = places
    space = Workspace(workspace)
    real = space.resolve("sub/x.txt", write=True)
    (workspace / "sub" / "x.txt").unlink()
    os.mkfifo(workspace / "sub" / "x.txt")
    with pytest.raises(OSError, match="not a regular file"):
        read_text(space, real)
    (workspace / "sub" / "x.txt").unlink()
    with open(workspace / "sub" / "x.txt", "wb") as big:
        big.truncate(READ_FILE_MAX_BYTES + 1)
    with pytest.raises(OSError, match="too big"):
        read_text(space, real)
