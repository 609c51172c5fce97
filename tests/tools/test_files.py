"""read_file, write_file, edit_file and the diff helpers, on real files in tmp_path."""

from __future__ import annotations

import difflib
import os
import random
import shutil
import stat
from pathlib import Path

import pytest

from agent_cli.errors import ToolError
from agent_cli.tools.base import MODEL_RESULT_CAP, FileChange, ToolContext
from agent_cli.tools.diffs import split_lines, unified_diff
from agent_cli.tools.files import (
    READ_FILE_MAX_BYTES,
    EditChange,
    apply_change,
    edit_file,
    hunk_count,
    plan_edit_file,
    plan_write_file,
    read_file,
    select_hunks,
    write_file,
)
from agent_cli.tools.workspace import Workspace


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(Workspace(tmp_path))


def numbered(count: int, newline: str = "\n") -> str:
    return "".join(f"line {i}{newline}" for i in range(1, count + 1))


async def read(ctx: ToolContext, **args: object) -> tuple[str, bool]:
    result = await read_file.run(ctx, args)
    return result.text, result.is_error


async def edit(ctx: ToolContext, path: str, *pairs: tuple[str, str]):
    edits = [{"old_text": old, "new_text": new} for old, new in pairs]
    return await edit_file.run(ctx, {"path": path, "edits": edits})


# ------------------------------------------------------------------ schemas and titles


def test_schemas_follow_llama_cpp_names_and_requirements() -> None:
    assert read_file.parameters["required"] == ["path"]
    assert list(read_file.parameters["properties"]) == [
        "path",
        "start_line",
        "end_line",
        "append_loc",
    ]
    assert read_file.parameters["properties"]["start_line"]["type"] == "integer"
    assert write_file.parameters["required"] == ["path", "content"]
    items = edit_file.parameters["properties"]["edits"]["items"]
    assert items["required"] == ["new_text", "old_text"]
    assert set(items["properties"]) == {"old_text", "new_text"}
    assert edit_file.plan is not None and write_file.plan is not None
    assert read_file.effect == "read" and edit_file.effect == "write"


def test_titles_name_the_file_and_range() -> None:
    assert read_file.title({"path": "a.py"}) == "Read a.py"
    assert read_file.title({"path": "a.py", "start_line": 3, "end_line": 9}) == (
        "Read a.py (lines 3–9)"
    )
    assert write_file.title({"path": "b"}) == "Write b"
    assert edit_file.title({"path": "c"}) == "Edit c"


# ------------------------------------------------------------------ read_file


async def test_read_whole_file(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    assert await read(ctx, path="a.txt") == ("one\ntwo\n", False)


async def test_read_inclusive_line_range_with_locations(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(numbered(20))
    text, error = await read(ctx, path="a.txt", start_line=3, end_line=5, append_loc=True)
    assert not error
    assert text == "3→line 3\n4→line 4\n5→line 5\n"


async def test_read_range_clamps_end_past_the_last_line(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\nb\nc")
    assert await read(ctx, path="a.txt", start_line=2, end_line=99) == ("b\nc", False)


async def test_read_start_past_end_is_an_error_naming_the_length(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text(numbered(4))
    text, error = await read(ctx, path="a.txt", start_line=9)
    assert error and "has 4 lines" in text


async def test_read_end_before_start_is_an_error(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(numbered(4))
    text, error = await read(ctx, path="a.txt", start_line=3, end_line=2)
    assert error and "end_line" in text


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("missing.txt", "does not exist"),
        ("folder", "is a folder"),
        ("../x", "outside"),
        ("fifo", "not a regular file"),
    ],
)
async def test_read_reports_unreadable_paths(
    ctx: ToolContext, tmp_path: Path, name: str, expected: str
) -> None:
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    text, error = await read(ctx, path=name)
    assert error and expected in text


@pytest.mark.parametrize("data", [b"abc\0def" * 10, b"caf\xe9 latin-1\n"])
async def test_read_binary_file_is_described_not_dumped(
    ctx: ToolContext, tmp_path: Path, data: bytes
) -> None:
    (tmp_path / "blob").write_bytes(data)
    text, error = await read(ctx, path="blob")
    assert not error
    assert f"binary file, {len(data)} bytes" in text
    assert "abc" not in text and "latin" not in text


async def test_read_refuses_files_over_the_size_limit(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_bytes(b"x" * (READ_FILE_MAX_BYTES + 1))
    text, error = await read(ctx, path="big.txt", start_line=1, end_line=1)
    assert error and "too big" in text and "grep_search" in text


async def test_read_file_at_the_size_limit_reads_a_range(ctx: ToolContext, tmp_path: Path) -> None:
    line = b"0123456789" * 9 + b"\n"
    body = line * (READ_FILE_MAX_BYTES // len(line))
    (tmp_path / "big.txt").write_bytes(body + b"y" * (READ_FILE_MAX_BYTES - len(body)))
    text, error = await read(ctx, path="big.txt", start_line=100, end_line=101, append_loc=True)
    assert not error
    assert text == f"100→{line.decode()}101→{line.decode()}"


async def test_read_stops_at_a_whole_line_and_says_where_to_continue(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "long.txt").write_text(numbered(5000))
    text, _ = await read(ctx, path="long.txt")
    assert len(text.encode()) <= MODEL_RESULT_CAP
    body, note = text.rsplit("\n", 1)
    last = int(body.rsplit("\n", 1)[1].split()[1])
    assert body.endswith(f"line {last}")
    assert note == (
        f"[... truncated: showing lines 1–{last} of 5000; continue with start_line={last + 1}]"
    )
    follow, _ = await read(ctx, path="long.txt", start_line=last + 1, end_line=last + 1)
    assert follow == f"line {last + 1}\n"


async def test_read_cuts_a_single_overlong_line(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("é" * MODEL_RESULT_CAP + "\nnext\n")
    text, error = await read(ctx, path="min.js")
    assert not error
    assert len(text.encode()) <= MODEL_RESULT_CAP
    assert "continue with start_line=2" in text


async def test_read_empty_file_says_so(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "empty").write_text("")
    text, error = await read(ctx, path="empty")
    assert not error and "empty" in text


# ------------------------------------------------------------------ write_file


async def test_write_creates_file_and_folders(ctx: ToolContext, tmp_path: Path) -> None:
    result = await write_file.run(ctx, {"path": "new/deep/a.txt", "content": "x\ny\n"})
    assert not result.is_error
    assert (tmp_path / "new/deep/a.txt").read_text() == "x\ny\n"
    assert result.text == "Created new/deep/a.txt (2 lines, 4 bytes)."
    assert result.file == "new/deep/a.txt"
    assert result.diff.startswith("--- /dev/null\n+++ b/new/deep/a.txt\n@@ -0,0 +1,2 @@\n+x\n+y")


async def test_write_replacing_reports_changed_span_not_content(
    ctx: ToolContext, tmp_path: Path
) -> None:
    target = tmp_path / "a.txt"
    target.write_text(numbered(10))
    target.chmod(0o751)
    content = numbered(10).replace("line 4\nline 5\n", "four\nfive\n")
    result = await write_file.run(ctx, {"path": "a.txt", "content": content})
    assert result.text == "Replaced a.txt (10 lines, 67 bytes); lines 4–5 changed."
    assert "-line 4\n-line 5\n+four\n+five\n" in result.diff
    assert target.read_text() == content
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]  # no temp file left


async def test_write_keeps_crlf_of_the_replaced_file(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"a\r\nb\r\n")
    await write_file.run(ctx, {"path": "w.txt", "content": "a\nB\n"})
    assert (tmp_path / "w.txt").read_bytes() == b"a\r\nB\r\n"


async def test_write_through_a_link_inside_replaces_its_target(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "real.txt").write_text("old\n")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    await write_file.run(ctx, {"path": "alias.txt", "content": "new\n"})
    assert (tmp_path / "alias.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "new\n"


@pytest.mark.parametrize(
    ("path", "expected"),
    [("../escape.txt", "outside"), (".git/config", ".git"), ("dangling", "dangling")],
)
async def test_write_refuses_paths_the_workspace_refuses(
    ctx: ToolContext, tmp_path: Path, path: str, expected: str
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path.parent / "nowhere.txt")
    result = await write_file.run(ctx, {"path": path, "content": "x"})
    assert result.is_error and expected in result.text
    assert not (tmp_path.parent / "escape.txt").exists()
    assert not (tmp_path / ".git" / "config").exists()
    assert not (tmp_path.parent / "nowhere.txt").exists()


async def test_write_refuses_a_binary_file_and_a_folder(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "blob").write_bytes(b"\0\1\2")
    (tmp_path / "dir").mkdir()
    blob = await write_file.run(ctx, {"path": "blob", "content": "x"})
    folder = await write_file.run(ctx, {"path": "dir", "content": "x"})
    assert blob.is_error and "binary" in blob.text
    assert folder.is_error and "folder" in folder.text


async def test_write_plan_does_not_write(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    change = await plan_write_file(ctx, "a.txt", "new\n")
    assert (tmp_path / "a.txt").read_text() == "old\n"
    assert (change.before, change.after, change.relative) == ("old\n", "new\n", "a.txt")
    assert change.path == tmp_path / "a.txt"
    new = await plan_write_file(ctx, "b/c.txt", "x")
    assert new.before is None and not (tmp_path / "b").exists()


# ------------------------------------------------------------------ edit_file


async def test_edit_applies_all_edits_to_the_original(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("alpha\nbeta\ngamma\n")
    # The second old_text only exists in the original: edits do not see each other.
    result = await edit(ctx, "a.py", ("alpha", "beta"), ("beta\n", "BETA\n"))
    assert not result.is_error, result.text
    assert (tmp_path / "a.py").read_text() == "beta\nBETA\ngamma\n"
    assert result.text.startswith("Edited a.py (3 lines, 16 bytes); lines 1–2 changed.\n\n")
    assert result.text.endswith(result.diff)
    assert result.file == "a.py"


async def test_edit_diff_matches_difflib(ctx: ToolContext, tmp_path: Path) -> None:
    before = numbered(40)
    (tmp_path / "a.txt").write_text(before)
    result = await edit(ctx, "a.txt", ("line 20\n", "twenty\n"))
    after = (tmp_path / "a.txt").read_text()
    expected = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), "a/a.txt", "b/a.txt"
    )
    assert result.diff == "".join(expected)


async def test_edit_not_found_is_an_error(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    result = await edit(ctx, "a.py", ("y = 2", "y = 3"))
    assert result.is_error and "was not found in a.py" in result.text
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


async def test_edit_not_found_hints_at_whitespace(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    result = await edit(ctx, "a.py", ("def f():\n  return 1", "x"))
    assert result.is_error
    assert "lines 1–2 matches it if whitespace is ignored" in result.text


async def test_edit_not_found_hints_at_copied_line_numbers(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "a.py").write_text("a = 1\nb = 2\n")
    result = await edit(ctx, "a.py", ("1→a = 1\n2→b = 2", "x"))
    assert result.is_error and "line-number prefixes" in result.text


async def test_edit_ambiguous_says_how_many_times(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\nx = 1\nx = 1\n")
    result = await edit(ctx, "a.py", ("x = 1", "x = 2"))
    assert result.is_error and "occurs 3 times" in result.text and "surrounding" in result.text


async def test_edit_overlapping_edits_are_refused(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("abcdef\n")
    result = await edit(ctx, "a.py", ("abcd", "X"), ("cdef", "Y"))
    assert result.is_error and "overlap" in result.text
    assert (tmp_path / "a.py").read_text() == "abcdef\n"


async def test_edit_keeps_crlf_and_missing_final_newline(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree")
    result = await edit(ctx, "w.txt", ("one\ntwo", "uno\ndos"), ("three", "tres"))
    assert not result.is_error, result.text
    assert (tmp_path / "w.txt").read_bytes() == b"uno\r\ndos\r\ntres"
    assert "\r" not in result.diff
    assert result.diff.endswith("+tres\n\\ No newline at end of file\n")


@pytest.mark.parametrize(
    ("setup", "edits", "expected"),
    [
        ("missing", [{"old_text": "a", "new_text": "b"}], "write_file to create"),
        ("blob", [{"old_text": "a", "new_text": "b"}], "binary"),
        ("text", [], "at least one"),
        ("text", [{"old_text": "", "new_text": "b"}], "empty"),
    ],
)
async def test_edit_refusals(
    ctx: ToolContext, tmp_path: Path, setup: str, edits: list[dict[str, str]], expected: str
) -> None:
    (tmp_path / "blob").write_bytes(b"a\0b")
    (tmp_path / "text").write_text("a\n")
    result = await edit_file.run(ctx, {"path": setup, "edits": edits})
    assert result.is_error and expected in result.text


async def test_edit_plan_does_not_write_and_raises_tool_error(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    change = await edit_file.preview(
        ctx, {"path": "a.txt", "edits": [{"old_text": "old", "new_text": "new"}]}
    )
    assert (tmp_path / "a.txt").read_text() == "old\n"
    assert change.after == "new\n" and hunk_count(change.diff) == 1
    with pytest.raises(ToolError, match="not found"):
        await plan_edit_file(ctx, "a.txt", [{"old_text": "zzz", "new_text": "y"}])


# ------------------------------------------------------------------ hunks and apply_change


THREE_CHANGES = [("line 5\n", "five\n"), ("line 30\n", "thirty\n"), ("line 55\n", "")]


async def test_select_hunks_applies_only_the_chosen_hunks(ctx: ToolContext, tmp_path: Path) -> None:
    before = numbered(60)
    (tmp_path / "a.txt").write_text(before)
    edits = [{"old_text": o, "new_text": n} for o, n in THREE_CHANGES]
    change = await plan_edit_file(ctx, "a.txt", edits)
    assert hunk_count(change.diff) == 3
    partial = select_hunks(change, [0, 2])
    assert partial == before.replace("line 5\n", "five\n").replace("line 55\n", "")
    assert select_hunks(change, [0, 1, 2]) == change.after
    assert select_hunks(change, []) == before
    with pytest.raises(IndexError):
        select_hunks(change, [3])


async def test_apply_change_writes_a_chosen_version_and_diffs_it(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text(numbered(60))
    edits = [{"old_text": o, "new_text": n} for o, n in THREE_CHANGES]
    change = await plan_edit_file(ctx, "a.txt", edits)
    result = await apply_change(ctx, change, select_hunks(change, [1]))
    assert (tmp_path / "a.txt").read_text() == numbered(60).replace("line 30\n", "thirty\n")
    assert hunk_count(result.diff) == 1 and "+thirty" in result.diff
    assert result.text.startswith("Edited a.txt (60 lines, 470 bytes); line 30 changed.")


async def test_apply_change_answers_like_the_tool_that_planned(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    edit_change = await plan_edit_file(ctx, "a.txt", [{"old_text": "one", "new_text": "1"}])
    write_change = await plan_write_file(ctx, "a.txt", "1\ntwo\n")
    assert edit_change.after == write_change.after
    assert isinstance(edit_change, EditChange) and isinstance(edit_change, FileChange)
    edited = await apply_change(ctx, edit_change)
    (tmp_path / "a.txt").write_text("one\ntwo\n")  # as planned on: a stale plan is refused
    replaced = await apply_change(ctx, write_change)
    assert edited.text == "Edited a.txt (2 lines, 6 bytes); line 1 changed.\n\n" + edited.diff
    assert replaced.text == "Replaced a.txt (2 lines, 6 bytes); line 1 changed."
    assert edited.diff == write_change.diff and edited.file == "a.txt"


async def test_apply_change_for_a_created_file_omits_the_diff(ctx: ToolContext) -> None:
    change = await plan_write_file(ctx, "n.txt", "a\n")
    result = await apply_change(ctx, change)
    assert result.text == "Created n.txt (1 lines, 2 bytes)."
    assert result.diff == change.diff


async def test_apply_change_reports_write_failures(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    change = await plan_write_file(ctx, "n.txt", "a\n")
    blocked = type(change)(tmp_path / "afile" / "n.txt", "afile/n.txt", None, "a\n", "")
    result = await apply_change(ctx, blocked)
    assert result.is_error and "could not be written" in result.text


async def test_random_edits_round_trip_through_hunks(ctx: ToolContext, tmp_path: Path) -> None:
    rng = random.Random(7)
    for trial in range(60):
        lines = [f"l{i} {rng.choice('abc')}\n" for i in range(rng.randint(5, 400))]
        newline = "\r\n" if trial % 4 == 0 else "\n"
        before = "".join(lines).replace("\n", newline)
        if trial % 3 == 0:
            before = before.rstrip("\r\n")
        (tmp_path / "r.txt").write_bytes(before.encode())
        picks = sorted(rng.sample(range(len(lines)), rng.randint(1, min(6, len(lines)))))
        last = len(lines) - 1
        edits = [
            {"old_text": lines[i] if i < last else lines[i].rstrip("\n"),
             "new_text": rng.choice(["", "x\n", "y\nz\n", lines[i]]) if i < last else "end"}
            for i in picks
        ]  # fmt: skip
        change = await plan_edit_file(ctx, "r.txt", edits)
        assert _patched(before, change.diff) == _bodies(change.after)
        reference = unified_diff("r.txt", before, change.after)  # no regions: trimmed whole
        assert _patched(before, reference) == _bodies(change.after)
        count = hunk_count(change.diff)
        assert select_hunks(change, range(count)) == change.after
        assert select_hunks(change, []) == before
        for keep in range(count):
            one = select_hunks(change, [keep])
            assert hunk_count(unified_diff("r.txt", before, one)) == 1


def test_diff_of_any_two_texts_patches_correctly() -> None:
    rng = random.Random(11)
    for _ in range(300):
        pool = ["a\n", "b\n", "c\n", "\n", "a", "b\r\n"]
        before = "".join(rng.choice(pool) for _ in range(rng.randint(0, 12)))
        after = "".join(rng.choice(pool) for _ in range(rng.randint(0, 12)))
        if rng.random() < 0.5:  # mostly shared text, like a real edit
            cut = rng.randint(0, len(before))
            after = before[:cut] + after[: rng.randint(0, 3)] + before[cut + rng.randint(0, 2) :]
        diff = unified_diff("f", before, after)
        assert _patched(before, diff) == _bodies(after), (before, after, diff)
        assert (diff == "") == (before == after)


def test_patched_helper_notices_a_wrong_context_line() -> None:
    diff = unified_diff("f", "a\nb\nc\n", "a\nB\nc\n").replace(" c", " x")
    with pytest.raises(AssertionError):
        _patched("a\nb\nc\n", diff)


def _bodies(text: str) -> list[str]:
    return [line.rstrip("\r\n") for line in split_lines(text)]


def _patched(before: str, diff: str) -> list[str]:
    """Apply a diff's hunk bodies to `before` as patch would, checking every context
    and removed line against the file; the resulting line bodies."""
    source, out, pos = _bodies(before), [], 0
    for line in diff.split("\n")[2:]:
        if line.startswith("@@"):
            start, length = line.split()[1][1:].partition(",")[::2]
            first = int(start) - 1 if length != "0" else int(start)
            out += source[pos:first]
            pos = first
        elif line[:1] in (" ", "-"):
            assert source[pos] == line[1:], (pos, line)
            if line[0] == " ":
                out.append(line[1:])
            pos += 1
        elif line[:1] == "+":
            out.append(line[1:])
    return out + source[pos:]


def test_hunk_count_counts_headers_only() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-@@ -9 +9 @@\n+y\n@@ -5,0 +6,2 @@\n+a\n+b\n"
    assert hunk_count(diff) == 2
    assert hunk_count("") == 0


def test_module_is_free_of_ui_and_engine_imports() -> None:
    import agent_cli.tools.files as module

    source = Path(module.__file__).read_text()
    for banned in ("agent_cli.engine", "textual", "rich", "prompt_toolkit"):
        assert f"import {banned}" not in source and f"from {banned}" not in source
    assert os.path.basename(module.__file__) == "files.py"


# ------------------------------------------------------------------ through a FileAccess


class EditorBuffers:
    """A FileAccess like an editor's: its own texts (unsaved changes) win over the disk."""

    def __init__(self, buffers: dict[Path, str] | None = None) -> None:
        self.buffers = dict(buffers or {})
        self.reads: list[Path] = []
        self.writes: list[tuple[Path, str]] = []

    async def read_text(self, path: Path) -> str:
        self.reads.append(path)
        if path in self.buffers:
            return self.buffers[path]
        try:
            return path.read_text()
        except OSError as e:
            raise ToolError(f"the editor could not open {path.name}.") from e

    async def write_text(self, path: Path, text: str) -> None:
        self.writes.append((path, text))
        self.buffers[path] = text


@pytest.fixture
def editor() -> EditorBuffers:
    return EditorBuffers()


@pytest.fixture
def through(tmp_path: Path, editor: EditorBuffers) -> ToolContext:
    return ToolContext(Workspace(tmp_path), files=editor)


async def test_read_through_files_reads_the_editors_text(
    through: ToolContext, editor: EditorBuffers, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("on disk\n")
    editor.buffers[tmp_path / "a.txt"] = "unsaved\nsecond\n"
    assert await read(through, path="a.txt", start_line=2) == ("second\n", False)
    assert editor.reads == [tmp_path / "a.txt"]


async def test_read_through_files_still_refuses_what_the_workspace_refuses(
    through: ToolContext, editor: EditorBuffers, tmp_path: Path
) -> None:
    (tmp_path.parent / "outside.txt").write_text("secret")
    text, is_error = await read(through, path="../outside.txt")
    assert is_error and "outside" in text and "secret" not in text
    text, is_error = await read(through, path="missing.txt")
    assert is_error and "does not exist" in text
    assert editor.reads == []  # refused before the editor is asked


async def test_edit_through_files_plans_on_the_editors_text_and_writes_through_it(
    through: ToolContext, editor: EditorBuffers, tmp_path: Path
) -> None:
    target = tmp_path / "b.txt"
    target.write_text("alpha\n")
    editor.buffers[target] = "beta\n"
    result = await edit(through, "b.txt", ("beta", "gamma"))
    assert not result.is_error, result.text
    assert "-beta" in result.diff and "+gamma" in result.diff
    assert editor.writes == [(target, "gamma\n")]
    assert target.read_text() == "alpha\n"  # the editor saves it, not us


async def test_write_through_files_creates_a_new_file_without_reading_it(
    through: ToolContext, editor: EditorBuffers, tmp_path: Path
) -> None:
    result = await write_file.run(through, {"path": "new/c.txt", "content": "x\n"})
    assert not result.is_error, result.text
    assert result.text.startswith("Created new/c.txt")
    assert editor.reads == [] and editor.writes == [(tmp_path / "new" / "c.txt", "x\n")]
    assert (tmp_path / "new").is_dir()  # folders are made for the editor to write into


async def test_write_through_files_reports_the_editors_refusal(
    through: ToolContext, editor: EditorBuffers, tmp_path: Path
) -> None:
    async def refuse(path: Path, text: str) -> None:
        raise ToolError("the editor refused the write.")

    editor.write_text = refuse  # type: ignore[method-assign]
    result = await write_file.run(through, {"path": "d.txt", "content": "x"})
    assert result.is_error and "the editor refused the write." in result.text
    assert not (tmp_path / "d.txt").exists()


async def test_a_refused_write_does_not_leave_its_folder_made_again(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "deeper" / "x.txt").write_text("one\n")
    change = await plan_edit_file(ctx, "sub/deeper/x.txt", [{"old_text": "one", "new_text": "2"}])
    shutil.rmtree(tmp_path / "sub")  # while the approval card waited
    result = await apply_change(ctx, change)
    assert result.is_error and "was deleted after this change was planned" in result.text
    assert not (tmp_path / "sub").exists()
