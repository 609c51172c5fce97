"""read_file, write_file, edit_file: the tools that read and change one file.

The two write tools are split in two steps so the loop can ask first: a *plan*
computes the change (new text and diff) without touching the disk, and
`apply_change` writes it. In `ask` mode the loop shows the plan's diff on an
approval card, plans again after the person's yes (to catch a file changed
meanwhile), then applies — possibly only some hunks (`select_hunks`) or the
person's own version. In `full` mode the tool function does both at once.

A plan's errors (not found, ambiguous edit, binary file, outside the
workspace) are raised as `ToolError` with one sentence for the model; the tool
functions turn them into error results. Nothing here raises for a user error.

When the context carries a `FileAccess` (`agent acp` serving an editor that
offers `fs/*`), file text is read and written through it instead of the disk,
so the editor's unsaved buffers are what the model reads and changes. Paths
are confined by the workspace first, either way; existence, size and kind are
still checked on disk (by descriptor, as read_file opens a file).

What remains open there: the editor reads and writes by path, after us. The
folders a write needs are made by descriptor and the path is resolved again just
before it is handed over, but a folder swapped for a link in the moment between
that check and the editor's own open is followed by the editor; only the editor
could close that gap.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, BinaryIO, TypedDict

from agent_cli.errors import ImageError, ToolError
from agent_cli.media import SNIFF_BYTES, Image, image_from_bytes, sniff
from agent_cli.tools.base import (
    MODEL_RESULT_CAP,
    Effect,
    FileAccess,
    FileChange,
    ToolContext,
    ToolResult,
    tool,
)
from agent_cli.tools.diffs import (
    apply_hunks,
    changed_span,
    hunk_count,
    line_offset,
    line_total,
    locate_edits,
    replace_spans,
    unified_diff,
)
from agent_cli.tools.workspace import OutsideWorkspace, Workspace

__all__ = [
    "READ_FILE_MAX_BYTES",
    "Edit",
    "EditChange",
    "apply_change",
    "edit_file",
    "hunk_count",
    "plan_edit_file",
    "plan_write_file",
    "read_file",
    "select_hunks",
    "write_file",
]

READ_FILE_MAX_BYTES = 8 * 1024 * 1024
"""Largest file read_file reads, and edit_file/write_file change."""
BINARY_SNIFF_BYTES = 8 * 1024
"""A NUL byte this early means a binary file (as git and grep decide)."""
READ_NOTE_ROOM = 160
"""Bytes of the result cap kept free for the line saying where to continue."""


class Edit(TypedDict):
    old_text: str
    new_text: str


class EditChange(FileChange):
    """A change planned by edit_file: applying it answers with the diff (write_file's
    answers with the effect only), whichever way the loop applies it. Same fields;
    only the type differs."""

    __slots__ = ()


# ------------------------------------------------------------------ reading


def _check(fd: int, shown: str) -> None:
    """Raise ToolError unless the open file is a regular file within the size limit. Asked
    of the descriptor, not the path: what is checked is what is then read."""
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"{shown} is a folder; use file_glob_search to list what is in it.")
    if not stat.S_ISREG(st.st_mode):  # a FIFO or device would block or never end
        raise ToolError(f"{shown} is not a regular file, so it is not read.")
    if st.st_size > READ_FILE_MAX_BYTES:
        raise ToolError(
            f"{shown} is too big ({st.st_size} bytes; the limit is {READ_FILE_MAX_BYTES}); "
            "use grep_search to find the lines you need."
        )


@contextlib.contextmanager
def _opened(workspace: Workspace, path: Path, shown: str) -> Iterator[BinaryIO]:
    """An existing regular file within the size limit, open for reading, or ToolError.
    Opened by `Workspace.open_file` first (a folder on its path swapped for a link since it
    was resolved is refused, not followed; a FIFO does not block), then checked by fstat."""
    try:
        fd = workspace.open_file(path)
    except FileNotFoundError:
        raise ToolError(f"{shown} does not exist; use file_glob_search to find the file.") from None
    except OutsideWorkspace as exc:
        raise ToolError(str(exc)) from None
    except OSError as exc:
        raise ToolError(f"{shown} could not be read ({exc.strerror}).") from None
    try:
        _check(fd, shown)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        try:
            yield handle
        except OSError as exc:
            raise ToolError(f"{shown} could not be read ({exc.strerror}).") from None


def _load(
    workspace: Workspace, path: Path, shown: str, limit: int = READ_FILE_MAX_BYTES + 1
) -> bytes:
    """The first `limit` bytes of an existing regular file within the size limit, or
    ToolError (see `_opened`)."""
    with _opened(workspace, path, shown) as handle:
        return handle.read(limit)


def _decode(data: bytes) -> str | None:
    """The text of a file, or None for a binary one (a NUL early on, or not UTF-8)."""
    if not _is_text(data):
        return None
    return data.decode("utf-8")


def _is_text(data: bytes) -> bool:
    """No NUL early on, and valid UTF-8 (ASCII, the common case, is checked in one pass)."""
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return False
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _render_lines(data: bytes, start: int, end: int | None, append_loc: bool) -> str:
    """Lines start..end (1-based, inclusive) within the result cap, saying where to go on.

    Works on the bytes: only the lines shown are decoded, and the file's line
    count is only taken when a note needs it.
    """
    budget = MODEL_RESULT_CAP - READ_NOTE_ROOM
    out: list[bytes] = []
    pos, used, number = line_offset(data, start - 1), 0, start
    while (end is None or number <= end) and pos < len(data):
        stop = data.find(b"\n", pos)
        stop = len(data) if stop < 0 else stop + 1
        prefix = f"{number}→".encode() if append_loc else b""
        size = len(prefix) + stop - pos
        if used + size > budget:
            if number == start:  # one line longer than the cap: show its head
                head = (prefix + data[pos : pos + budget]).decode("utf-8", "ignore")
                note = f"[... line {number} is longer than {budget} bytes and was cut; "
                return f"{head}\n{note}continue with start_line={number + 1}]"
            out.append(b"" if out[-1].endswith(b"\n") else b"\n")
            total = line_total(data)
            note = f"[... truncated: showing lines {start}–{number - 1} of {total}; "
            out.append(f"{note}continue with start_line={number}]".encode())
            break
        out += [prefix, data[pos:stop]]
        used += size
        pos, number = stop, number + 1
    return b"".join(out).decode("utf-8")


def _read(
    ctx: ToolContext, path: str, start: int | None, end: int | None, loc: bool
) -> str | Image:
    real = _resolve(ctx, path, write=False)
    data = _load(ctx.workspace, real, path)
    if sniff(data[:SNIFF_BYTES]) is not None:
        return _image(data, path)
    return _render(path, data, start, end, loc)


def _image(data: bytes, path: str) -> Image:
    try:
        return image_from_bytes(data, path)
    except ImageError as exc:
        raise ToolError(str(exc)) from None


def _image_on_disk(workspace: Workspace, real: Path, path: str) -> Image | None:
    """The image a file holds (an editor has no buffer for one); None for any other file."""
    with _opened(workspace, real, path) as handle:
        head = handle.read(SNIFF_BYTES)
        if sniff(head) is None:
            return None
        data = head + handle.read(READ_FILE_MAX_BYTES + 1 - len(head))
    return _image(data, path)


async def _read_through(
    ctx: ToolContext, files: FileAccess, path: str, start: int | None, end: int | None, loc: bool
) -> str | Image:
    """read_file through `ctx.files`: confined and checked here, the text as the editor has it."""
    real = _resolve(ctx, path, write=False)
    image = await asyncio.to_thread(_image_on_disk, ctx.workspace, real, path)
    if image is not None:
        return image
    data = (await files.read_text(real)).encode("utf-8")
    return _render(path, data, start, end, loc)


def _render(path: str, data: bytes, start: int | None, end: int | None, loc: bool) -> str:
    if not _is_text(data):
        return f"{path}: binary file, {len(data)} bytes; it is not shown."
    first = 1 if start is None else start
    if first < 1:
        raise ToolError(f"start_line must be 1 or more (got {first}).")
    if end is not None and end < first:
        raise ToolError(f"end_line ({end}) must not be before start_line ({first}).")
    if not data:
        return f"{path} is empty (0 bytes)."
    if line_offset(data, first - 1) >= len(data):
        total = line_total(data)
        raise ToolError(f"{path} has {total} lines; start_line={first} is past its end.")
    return _render_lines(data, first, end, loc)


def _read_title(args: Mapping[str, Any]) -> str:
    path, start, end = args.get("path", ""), args.get("start_line"), args.get("end_line")
    if start and end:
        return f"Read {path} (lines {start}–{end})"
    if start:
        return f"Read {path} (from line {start})"
    if end:
        return f"Read {path} (lines 1–{end})"
    return f"Read {path}"


@tool("read_file", Effect.READ, title=_read_title)
async def read_file(
    ctx: ToolContext,
    path: Annotated[str, "Path of the file, relative to the workspace."],
    start_line: Annotated[int | None, "First line to read (1-based). Default: 1."] = None,
    end_line: Annotated[int | None, "Last line to read (inclusive). Default: the end."] = None,
    append_loc: Annotated[bool | None, "Prefix each line with its number and '→'."] = None,
) -> ToolResult:
    """Read a text file, or a range of its lines. Long results stop at a whole line and
    say which start_line to continue from. A PNG, JPEG, GIF or WebP image is shown to
    you as the image. Other binary files are not shown."""
    loc = bool(append_loc)
    try:
        if ctx.files is None:
            read = await asyncio.to_thread(_read, ctx, path, start_line, end_line, loc)
        else:
            read = await _read_through(ctx, ctx.files, path, start_line, end_line, loc)
    except ToolError as exc:
        return ToolResult(str(exc), is_error=True)
    if isinstance(read, Image):
        return ToolResult(f"{path}: {read.label}, {len(read.data)} bytes.", images=(read,))
    if ctx.feedback is not None:  # its language servers start, and learn the file
        ctx.feedback.touch(ctx, path)
    return ToolResult(read)


# ------------------------------------------------------------------ planning


def _resolve(ctx: ToolContext, path: str, write: bool) -> Path:
    try:
        return ctx.workspace.resolve(path, write=write)
    except OutsideWorkspace as exc:
        raise ToolError(str(exc)) from None


def _current_text(workspace: Workspace, real: Path, shown: str) -> str | None:
    """The text of the file to change; None if it does not exist yet."""
    if not os.path.lexists(real):
        return None
    data = _load(workspace, real, shown)
    text = _decode(data)
    if text is None:
        raise _not_text(shown, data)
    return text


async def _current_text_through(
    workspace: Workspace, files: FileAccess, real: Path, shown: str
) -> str | None:
    """`_current_text`, the text as the editor has it (unsaved changes included)."""
    if not await asyncio.to_thread(os.path.lexists, real):
        return None
    await asyncio.to_thread(_load, workspace, real, shown, 0)  # kind and size, by descriptor
    text = await files.read_text(real)
    if "\0" in text[:BINARY_SNIFF_BYTES]:
        raise _binary(shown, len(text.encode("utf-8")))
    return text


def _binary(shown: str, size: int) -> ToolError:
    return ToolError(f"{shown} is a binary file ({size} bytes); only text files can be changed.")


def _not_text(shown: str, data: bytes) -> ToolError:
    """Why a file that `_decode` refused cannot be changed: binary, or another encoding."""
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return _binary(shown, len(data))
    return ToolError(
        f"{shown} is not UTF-8 text (perhaps Latin-1 or another encoding); only UTF-8 files "
        "can be changed, so leave it as it is or convert it to UTF-8 first."
    )


def _is_crlf(text: str) -> bool:
    """True when every line ends in CRLF, so new text should be written that way too."""
    if "\r" not in text:  # a one-byte search (memchr): cheap on big LF files
        return False
    return text.count("\r\n") == text.count("\n")


def _plan_write(ctx: ToolContext, path: str, content: str) -> FileChange:
    real = _resolve(ctx, path, write=True)
    return _write_change(ctx, real, _current_text(ctx.workspace, real, path), content)


def _write_change(ctx: ToolContext, real: Path, before: str | None, content: str) -> FileChange:
    if before is not None and _is_crlf(before) and "\r\n" not in content:
        content = content.replace("\n", "\r\n")
    relative = ctx.workspace.relative(real)
    return FileChange(real, relative, before, content, unified_diff(relative, before, content))


async def plan_write_file(ctx: ToolContext, path: str, content: str) -> FileChange:
    """write_file's change, computed without writing (for the approval card)."""
    if ctx.feedback is not None:
        ctx.feedback.touch(ctx, path)
    if ctx.files is None:
        return await asyncio.to_thread(_plan_write, ctx, path, content)
    real = _resolve(ctx, path, write=True)
    before = await _current_text_through(ctx.workspace, ctx.files, real, path)
    return await asyncio.to_thread(_write_change, ctx, real, before, content)


def _plan_edit(ctx: ToolContext, path: str, edits: Sequence[Edit]) -> FileChange:
    _require_edits(edits)
    real = _resolve(ctx, path, write=True)
    return _edit_change(ctx, real, path, _current_text(ctx.workspace, real, path), edits)


def _require_edits(edits: Sequence[Edit]) -> None:
    if not edits:
        raise ToolError("edits is empty; give at least one {old_text, new_text} pair.")


def _edit_change(
    ctx: ToolContext, real: Path, path: str, before: str | None, edits: Sequence[Edit]
) -> FileChange:
    if before is None:
        raise ToolError(f"{path} does not exist; use write_file to create it.")
    crlf = _is_crlf(before)
    work = before.replace("\r\n", "\n") if crlf else before
    pairs = [(e["old_text"], e["new_text"]) for e in edits]
    if crlf:
        pairs = [(o.replace("\r\n", "\n"), n.replace("\r\n", "\n")) for o, n in pairs]
    after, edited = replace_spans(work, locate_edits(path, work, pairs))
    if crlf:
        after, edited = after.replace("\n", "\r\n"), edited.crlf()
    relative = ctx.workspace.relative(real)
    anchors = (edited.anchors_a, edited.anchors_b)
    diff = unified_diff(relative, before, after, edited.regions, anchors)
    return EditChange(real, relative, before, after, diff)


async def plan_edit_file(ctx: ToolContext, path: str, edits: list[Edit]) -> FileChange:
    """edit_file's change, computed without writing (for the approval card)."""
    if ctx.feedback is not None:
        ctx.feedback.touch(ctx, path)
    if ctx.files is None:
        return await asyncio.to_thread(_plan_edit, ctx, path, edits)
    _require_edits(edits)
    real = _resolve(ctx, path, write=True)
    before = await _current_text_through(ctx.workspace, ctx.files, real, path)
    return await asyncio.to_thread(_edit_change, ctx, real, path, before, edits)


# ------------------------------------------------------------------ applying


def select_hunks(change: FileChange, keep: Sequence[int]) -> str:
    """The file's text with only the hunks of `change.diff` at 0-based `keep` applied."""
    return apply_hunks(change.before, change.after, change.diff, keep)


class _Stale(ToolError):
    """The file is no longer what the change was planned on."""


def _check_unchanged(change: FileChange, folder: int) -> None:
    """Raise `_Stale` unless the file on disk is still the one the change was planned on.

    Time passes between a plan and its write (an approval card, a checkpoint);
    writing then would put back a deleted file or undo someone else's edit. The file
    is looked at by its name in `folder` (a descriptor from `Workspace.folder_of`).
    """
    shown, name = change.relative, change.path.name
    try:
        found: os.stat_result | None = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        found = None
    if change.before is None:
        if found is not None:
            raise _Stale(
                f"{shown} was created by something else after this change was planned, so "
                "nothing was written; read it, then redo the change."
            )
        return
    if found is None:
        raise _deleted(change)
    expected = change.before.encode("utf-8")
    same = stat.S_ISREG(found.st_mode) and found.st_size == len(expected)
    try:
        if same:  # non-blocking, and asked again of the descriptor: a FIFO swapped in
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
            with os.fdopen(os.open(name, flags, dir_fd=folder), "rb") as handle:
                info = os.fstat(handle.fileno())
                same = stat.S_ISREG(info.st_mode) and info.st_size == len(expected)
                same = same and handle.read(len(expected) + 1) == expected
    except OSError:
        same = False
    if not same:
        raise _Stale(
            f"{shown} changed after this change was planned, so nothing was written; "
            "read it again and redo the change."
        )


def _deleted(change: FileChange) -> _Stale:
    return _Stale(
        f"{change.relative} was deleted after this change was planned, so nothing was "
        "written; check that it is still wanted before creating it again."
    )


def _write_checked(workspace: Workspace, change: FileChange, text: str) -> None:
    """Write `text` if the file is still what the change was planned on. Its folder is
    opened once (`Workspace.folder_of`, made if missing) and both steps work inside it, so
    a folder on the path swapped for a link meanwhile cannot send the write elsewhere."""
    try:
        folder = workspace.folder_of(change.path)
    except FileNotFoundError:  # its folder is gone too: made again only for a new file
        if change.before is not None:
            raise _deleted(change) from None
        folder = workspace.folder_of(change.path, create=True)
    try:
        _check_unchanged(change, folder)
        _write_atomically(folder, change.path.name, text)
    finally:
        os.close(folder)


def _prepare_editor_write(workspace: Workspace, change: FileChange) -> None:
    """Before the editor writes `change.path` (by path; see the module docstring): make its
    missing folders one name at a time, never through a link (`folder_of`), then resolve
    the path again and refuse unless it still denotes the same real file inside."""
    os.close(workspace.folder_of(change.path, create=True))
    again = workspace.resolve(change.relative, write=True)
    if again != change.path:
        raise OutsideWorkspace(
            f"{change.relative!r} changed while it was in use (it now leads to "
            f"{workspace.relative(again)}), so it was not written; check what changed it.",
            change.relative,
        )


def _write_atomically(folder: int, name: str, text: str) -> None:
    """Replace `name` in `folder` in one step (temp file + rename), keeping an existing
    file's mode.

    The rename would replace a read-only file too, so that is refused first.
    """
    try:
        found = os.stat(name, dir_fd=folder, follow_symlinks=False)
        mode: int | None = stat.S_IMODE(found.st_mode)
    except FileNotFoundError:
        mode = None
    writable = mode is None or os.access(name, os.W_OK, dir_fd=folder, follow_symlinks=False)
    if not writable:
        raise PermissionError(errno.EACCES, "it is read-only")
    temp = f".{name}.{os.urandom(4).hex()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o666, dir_fd=folder)  # umask applies
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.write(text.encode("utf-8"))
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=folder)
        raise


def _summary(change: FileChange, after: str, edited: bool) -> str:
    size, lines = len(after.encode("utf-8")), line_total(after)
    verb = "Created" if change.before is None else "Edited" if edited else "Replaced"
    head = f"{verb} {change.relative} ({lines} lines, {size} bytes)"
    if change.before is None:
        return head + "."
    span = changed_span(change.before, after)
    if span is None:
        return head + "; nothing changed."
    first, last, removed = span
    if last > first:
        return head + f"; lines {first}–{last} changed."
    if last == first:
        return head + f"; line {first} changed."
    return head + f"; {removed} lines removed after line {first - 1}."


async def apply_change(
    ctx: ToolContext,
    change: FileChange,
    after: str | None = None,
) -> ToolResult:
    """Write `after` (default `change.after`) to the file atomically and say what changed.

    On disk, the file must still be what the change was planned on (else nothing
    is written and the result says why); a read-only file is not replaced.

    The text names the effect (created/replaced, lines, bytes, the changed
    span); for edit_file's change (an `EditChange`) the diff follows, which the
    model reads as the answer to its edit. With `ctx.feedback`, what the language
    servers and check commands then say of the file follows (tools/feedback.py).
    """
    text = change.after if after is None else after
    diff = change.diff
    if text != change.after:
        diff = unified_diff(change.relative, change.before, text)
    try:
        if ctx.files is None:
            await asyncio.to_thread(_write_checked, ctx.workspace, change, text)
        else:  # the editor's buffer, which may rightly differ from the disk
            await asyncio.to_thread(_prepare_editor_write, ctx.workspace, change)
            await ctx.files.write_text(change.path, text)
    except _Stale as exc:
        return ToolResult(str(exc), is_error=True)
    except OutsideWorkspace as exc:
        return ToolResult(f"{exc} Nothing was changed.", is_error=True)
    except OSError as exc:
        return ToolResult(
            f"{change.relative} could not be written ({exc.strerror or exc}); nothing was changed.",
            is_error=True,
        )
    except ToolError as exc:
        return ToolResult(f"{change.relative} could not be written: {exc}", is_error=True)
    edited = isinstance(change, EditChange)
    summary = _summary(change, text, edited)
    if edited and diff:
        summary += "\n\n" + diff
    result = ToolResult(summary, diff=diff, file=change.relative)
    if ctx.feedback is not None:  # what the language servers and checks now say of it
        result = (await ctx.feedback.after_edit(ctx, change, text)).added_to(result)
    return result


# ------------------------------------------------------------------ the write tools


def _write_title(args: Mapping[str, Any]) -> str:
    return f"Write {args.get('path', '')}"


def _edit_title(args: Mapping[str, Any]) -> str:
    return f"Edit {args.get('path', '')}"


@tool("write_file", Effect.WRITE, title=_write_title, plan=plan_write_file)
async def write_file(
    ctx: ToolContext,
    path: Annotated[str, "Path of the file, relative to the workspace."],
    content: Annotated[str, "The whole new content of the file."],
) -> ToolResult:
    """Create a file, or replace all of an existing one; missing folders are created.
    Answers with what changed, not the content. To change part of a file, use edit_file."""
    try:
        change = await plan_write_file(ctx, path, content)
    except ToolError as exc:
        return ToolResult(str(exc), is_error=True)
    return await apply_change(ctx, change)


@tool("edit_file", Effect.WRITE, title=_edit_title, plan=plan_edit_file)
async def edit_file(
    ctx: ToolContext,
    path: Annotated[str, "Path of the file, relative to the workspace."],
    edits: Annotated[
        list[Edit],
        "Exact replacements, applied together. Each old_text must occur exactly once in "
        "the original file (include enough surrounding lines), and edits must not overlap.",
    ],
) -> ToolResult:
    """Change parts of an existing text file by exact text replacement. Answers with the
    diff. Read the file first: old_text must match it exactly, indentation included."""
    try:
        change = await plan_edit_file(ctx, path, edits)
    except ToolError as exc:
        return ToolResult(str(exc), is_error=True)
    return await apply_change(ctx, change)
