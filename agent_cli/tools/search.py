"""file_glob_search and grep_search: finding files and lines under a folder.

Both walk with `os.scandir` (sorted, depth first), list but never enter the
folders in `SKIPPED_DIRS`, and never follow a symbolic link to a folder, so a
link pointing out of the workspace is listed as an entry and not walked. A walk
holds one descriptor per level, so it stops WALK_MAX_DEPTH levels down and the
answer says which folders it did not enter; running out of descriptors is an
error, never taken for an empty folder.

grep_search is meant to keep up with `grep -rn`: each file is read as bytes in
one call, the compiled bytes regex runs once over the whole content, and only
files that match are looked at line by line (only matching lines are decoded).
"""

from __future__ import annotations

import asyncio
import errno
import operator
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, AnyStr, Literal

from agent_cli.tools.base import Effect, ToolContext, ToolResult, tool
from agent_cli.tools.workspace import FOLDER_FLAGS, OutsideWorkspace

SEARCH_MAX_RESULTS = 100
"""Most entries or matching lines one search returns."""
GREP_MAX_FILE_BYTES = 2 * 1024 * 1024
"""Files bigger than this are skipped by grep_search (generated or data files)."""
GREP_MAX_LINE_CHARS = 400
"""A matching line is cut to this many characters (minified files have huge lines)."""
GREP_MAX_CONTEXT_LINES = 10
BINARY_SNIFF_BYTES = 8 * 1024
SKIPPED_DIRS = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", "build", "dist", "target",
     ".mypy_cache", ".pytest_cache", ".tox"}
)  # fmt: skip


# ------------------------------------------------------------------ globs


def _translate(glob: str) -> str:
    """Regex source for a glob: `*`/`?` within a name, `**` across folders, [..], {a,b}."""
    out, i, n = [], 0, len(glob)
    while i < n:
        char = glob[i]
        if glob.startswith("**", i):
            j = i
            while j < n and glob[j] == "*":
                j += 1
            whole = i == 0 or glob[i - 1] == "/"
            if whole and j < n and glob[j] == "/":
                out.append("(?:.*/)?")
                j += 1
            else:
                out.append(".*")
            i = j
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (close := glob.find("]", i + 2)) > 0:
            body = glob[i + 1 : close]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = close
        elif char == "{" and (close := glob.find("}", i)) > 0:
            options = glob[i + 1 : close].split(",")
            out.append("(?:" + "|".join(_translate(o) for o in options) + ")")
            i = close
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


class GlobMatcher:
    """A glob as SPEC §7 reads it: without `/` it matches a name at any depth,
    with `/` the path relative to the folder searched."""

    def __init__(self, glob: str) -> None:
        glob = glob.strip()
        while glob.startswith("./"):
            glob = glob[2:]
        glob = glob.strip("/") or "**"
        while glob.startswith("**/") and "/" not in glob[3:]:
            glob = glob[3:]  # "**/*.py" is "*.py" at any depth: match names, the faster way
        self.by_path = "/" in glob
        everything = glob in ("**", "*")
        self.regex = None if everything else re.compile(_translate(glob), re.DOTALL)

    def matches(self, relative: str, name: str) -> bool:
        if self.regex is None:
            return True
        return self.regex.fullmatch(relative if self.by_path else name) is not None


# ------------------------------------------------------------------ walking


# (path relative to the folder searched, the entry, whether it is a folder or a link to
# one). A plain tuple: a walk makes tens of thousands of them.
Entry = tuple[str, os.DirEntry[str], bool]
_BY_NAME = operator.attrgetter("name")


WALK_MAX_DEPTH = 128
"""Deepest folder level a walk enters: it keeps one descriptor open per level, so a tree
nested deeper (made by accident or on purpose) would run out of descriptors."""
_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE)


def _entries(folder: int, ordered: bool) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=_BY_NAME) if ordered else list(it)
    except OSError as exc:
        if exc.errno in _OUT_OF_DESCRIPTORS:
            raise  # not "an empty folder": the walk could not go on
        return []


def _is_dir(entry: os.DirEntry[str], follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False


def walk(
    top: str | int,
    max_depth: int | None = None,
    pruned: Callable[[str, str], bool] | None = None,
    ordered: bool = True,
    too_deep: list[str] | None = None,
) -> Iterator[Entry]:
    """Every entry under `top`, depth first (in name order if `ordered`); folders in
    SKIPPED_DIRS, links, and those `pruned(relative, name)` refuses are yielded but
    not entered. Folders WALK_MAX_DEPTH levels down are not entered either: they are
    added to `too_deep`, to say so. Running out of descriptors raises OSError."""
    walked = walk_at(top, max_depth, pruned, ordered, too_deep)
    for relative, entry, is_dir, _folder in walked:
        yield relative, entry, is_dir


def walk_at(
    top: str | int,
    max_depth: int | None = None,
    pruned: Callable[[str, str], bool] | None = None,
    ordered: bool = True,
    too_deep: list[str] | None = None,
) -> Iterator[tuple[str, os.DirEntry[str], bool, int]]:
    """`walk`, each entry with a descriptor of its folder (open until the walk moves on),
    to open it by (`dir_fd=`). `top` is a folder's path or descriptor (not closed here).

    Folders are entered by descriptor, one name at a time without following a link: one
    swapped for a link after it was listed (a process racing the walk) is not entered,
    so nothing outside is listed or read through it (tools/workspace.py)."""
    first = os.dup(top) if isinstance(top, int) else _open(top)
    if first is None:
        return
    stack = [(iter(_entries(first, ordered)), "", 1, first)]
    try:
        while stack:
            entries, parent, depth, folder = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                os.close(folder)
                continue
            relative = f"{parent}/{entry.name}" if parent else entry.name
            real_dir = _is_dir(entry, follow=False)
            is_dir = real_dir or (entry.is_symlink() and _is_dir(entry, follow=True))
            yield relative, entry, is_dir, folder
            if (
                not real_dir
                or entry.name in SKIPPED_DIRS
                or (max_depth is not None and depth >= max_depth)
                or (pruned and pruned(relative, entry.name))
            ):
                continue
            if depth >= WALK_MAX_DEPTH:
                if too_deep is not None:
                    too_deep.append(relative)
                continue
            if (inner := _open(entry.name, folder)) is not None:
                stack.append((iter(_entries(inner, ordered)), relative, depth + 1, inner))
    finally:
        for *_, folder in stack:
            os.close(folder)


def _open(name: str, folder: int | None = None) -> int | None:
    """A folder's descriptor (`name` in `folder`, never through a link); None if it cannot
    be opened (gone, unreadable, or a link now). Out of descriptors raises: that is no
    answer about the folder."""
    try:
        return os.open(name, FOLDER_FLAGS | os.O_NOFOLLOW, dir_fd=folder)
    except OSError as exc:
        if exc.errno in _OUT_OF_DESCRIPTORS:
            raise
        return None


FileStats = dict[str, tuple[int, int]]  # workspace-relative path → (size, mtime in ns)


def file_stats(
    root: Path, limit: int, wanted: Callable[[str], bool] | None = None
) -> FileStats | None:
    """Size and mtime of each file `walk` finds (and `wanted` keeps); None past `limit`
    files. Blocking: call it in a thread. What a command changed is told by two of them."""
    files: FileStats = {}
    for relative, entry, is_dir in walk(str(root), ordered=False):
        if is_dir or (wanted is not None and not wanted(relative)):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        files[relative] = (info.st_size, info.st_mtime_ns)
        if len(files) > limit:
            return None
    return files


def _folder(ctx: ToolContext, path: str) -> tuple[str, str] | str:
    """(real folder, its workspace-relative prefix) or an error sentence."""
    try:
        real = ctx.workspace.resolve(path or ".")
    except OutsideWorkspace as exc:
        return str(exc)
    if not real.exists():
        return f'{path} does not exist; give a folder inside the workspace ("." is its root).'
    relative = ctx.workspace.relative(real)
    return str(real), "" if relative == "." else relative + "/"


# ------------------------------------------------------------------ file_glob_search


def _glob(
    ctx: ToolContext, path: str, include: str, exclude: str | None, kind: str,
    max_depth: int | None, limit: int,
) -> ToolResult:  # fmt: skip
    found = _folder(ctx, path)
    if isinstance(found, str):
        return ToolResult(found, is_error=True)
    real, _ = found
    if not os.path.isdir(real):
        return ToolResult(f"{path} is a file, not a folder; use read_file to read it.", True)
    if max_depth is not None and max_depth < 1:
        return ToolResult("max_depth must be 1 or more (1: only the folder's own entries).", True)
    want, drop = GlobMatcher(include or "**"), GlobMatcher(exclude) if exclude else None
    pruned = (lambda rel, name: drop.matches(rel, name)) if drop else None
    try:
        top = ctx.workspace.open_folder(real)
    except (OutsideWorkspace, OSError) as exc:
        return ToolResult(f"{path} could not be listed: {_why(exc)}", is_error=True)
    names: list[str] = []
    too_deep: list[str] = []
    try:
        for relative, entry, is_dir in walk(top, max_depth, pruned, False, too_deep):
            if kind != "all" and is_dir != (kind == "dir"):
                continue
            name = entry.name
            if want.matches(relative, name) and not (drop and drop.matches(relative, name)):
                names.append(relative + "/" if is_dir else relative)
    except OSError as exc:
        return ToolResult(f"{path} could not be listed: {_why(exc)}", is_error=True)
    finally:
        os.close(top)
    names.sort()
    shown = names[: max(1, min(limit, SEARCH_MAX_RESULTS))]
    where = f"under {path or '.'} matching {include or '**'}"
    deep = _too_deep_note(too_deep)
    if not names:
        return ToolResult(f"No {_kinds(kind)} {where}." + (f" {deep}" if deep else ""))
    head = f"{len(names)} entries {where}"
    if len(shown) < len(names):
        head += f" (showing {len(shown)}; narrow include or path to see the rest)"
    return ToolResult("\n".join([head + ":", *shown, *([deep] if deep else [])]))


def _why(exc: OSError | OutsideWorkspace) -> str:
    """The reason in words: a refusal's own sentence, or what the system said."""
    if isinstance(exc, OutsideWorkspace):
        return str(exc)
    if exc.errno in _OUT_OF_DESCRIPTORS:
        return "too many files are open at once; close some programs and try again."
    return f"{exc.strerror or exc}; check the path and try again."


def _too_deep_note(too_deep: list[str]) -> str:
    """Says which folders were not searched because they lie too deep ("" if none)."""
    if not too_deep:
        return ""
    first = too_deep[0] if len(too_deep[0]) <= 200 else too_deep[0][:200] + "…"
    return (
        f"[{_count(len(too_deep), 'folder')} deeper than {WALK_MAX_DEPTH} levels "
        f"(first: {first}) not searched; give a path inside to search there]"
    )


def _kinds(kind: str) -> str:
    return {"file": "files", "dir": "folders"}.get(kind, "entries")


@tool(
    "file_glob_search",
    Effect.READ,
    title=lambda a: f"Find {a.get('include') or '**'} in {a.get('path') or '.'}",
)
async def file_glob_search(
    ctx: ToolContext,
    path: Annotated[str, "Folder to search, relative to the workspace."] = ".",
    include: Annotated[
        str,
        "Glob of entries to list: '*' and '?' stay within one name, '**' crosses folders. "
        "Without '/' it matches names at any depth ('*.py'); with '/' the path relative "
        "to the folder ('src/**/*.py').",
    ] = "**",
    exclude: Annotated[str | None, "Glob of entries to leave out (same rules)."] = None,
    type: Annotated[Literal["file", "dir", "all"], "Which entries to list."] = "file",
    max_depth: Annotated[int | None, "How deep to look (1: the folder's own entries)."] = None,
    limit: Annotated[int, f"Most entries to show (at most {SEARCH_MAX_RESULTS})."] = (
        SEARCH_MAX_RESULTS
    ),
) -> ToolResult:
    """Find files or folders under a folder by glob, sorted, relative to that folder,
    with the total count. Dependency and build folders (.git, node_modules, .venv,
    __pycache__, build, dist, ...) are listed but not searched inside."""
    return await asyncio.to_thread(_glob, ctx, path, include, exclude, type, max_depth, limit)


# ------------------------------------------------------------------ grep_search


@dataclass
class _Search:
    """One grep_search: the compiled pattern and what was found so far."""

    regex: re.Pattern[Any]
    text_mode: bool  # a non-ASCII regex runs on decoded text, bytes otherwise
    lower_needle: bytes | None  # a literal, case-insensitive ASCII pattern: cheap pre-check
    numbers: bool
    context: int
    lines: list[str] = field(default_factory=list)
    matches: int = 0
    files: int = 0
    more: bool = False
    skipped_big: int = 0
    skipped_binary: int = 0
    too_deep: list[str] = field(default_factory=list)  # folders the walk did not enter


def _compile(pattern: str, literal: bool, ignore_case: bool) -> tuple[re.Pattern[Any], bool]:
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    source = re.escape(pattern) if literal else pattern
    checked = re.compile(source, flags)  # the error the model should read
    if not pattern.isascii() and not literal:
        return checked, True
    try:
        return re.compile(source.encode("utf-8"), flags), False
    except re.error:  # a str-only escape such as \N{...}
        return checked, True


def _line_matches(
    data: AnyStr, regex: re.Pattern[AnyStr], first: re.Match[AnyStr], want: int
) -> list[tuple[int, int, int]]:
    """(1-based number, start, end) of the lines holding a match, at most `want`.

    Works on the whole content: each search starts at the next line, so a line
    is reported once, and lines are never split out of the file.
    """
    newline = b"\n" if isinstance(data, bytes) else "\n"
    found: list[tuple[int, int, int]] = []
    match: re.Match[AnyStr] | None = first
    number, counted = 1, 0
    while match is not None and len(found) < want:
        start = match.start()
        if start == len(data) and (not data or data.endswith(newline)):
            break  # an empty match after the final newline is no line
        line_start = data.rfind(newline, 0, start) + 1
        number += data.count(newline, counted, line_start)
        counted = line_start
        end = data.find(newline, start)
        found.append((number, line_start, len(data) if end < 0 else end))
        if end < 0:
            break
        match = regex.search(data, end + 1)
    return found


def _show(line: bytes | str) -> str:
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    text = text.rstrip("\r")
    return text if len(text) <= GREP_MAX_LINE_CHARS else text[:GREP_MAX_LINE_CHARS] + "…"


def _line(search: _Search, shown: str, number: int, mark: str, text: bytes | str) -> str:
    where = f"{number}{mark}" if search.numbers else ""
    return f"{shown}{mark}{where}{_show(text)}"


def _report(search: _Search, shown: str, data: AnyStr, found: list[tuple[int, int, int]]) -> None:
    """Append one file's matching lines (and context lines, grep -C style) to the output."""
    if not search.context:
        for number, start, end in found:
            search.lines.append(_line(search, shown, number, ":", data[start:end]))
        return
    newline = b"\n" if isinstance(data, bytes) else "\n"
    lines = data.split(newline)
    wanted = {number for number, _, _ in found}
    spans: list[list[int]] = []
    for n in sorted(wanted):
        low, high = max(1, n - search.context), min(len(lines), n + search.context)
        if spans and low <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], high)
        else:
            spans.append([low, high])
    for low, high in spans:
        if search.lines:
            search.lines.append("--")
        for n in range(low, high + 1):
            if n == len(lines) and not lines[n - 1]:
                break  # the empty "line" after a final newline
            mark = ":" if n in wanted else "-"
            search.lines.append(_line(search, shown, n, mark, lines[n - 1]))


def _read_small(name: str, folder: int, search: _Search) -> bytes | None:
    """The file's bytes, or None if it is not a regular file, unreadable or too big.

    Raw os calls (no file object) and one read sized by fstat: per-file
    overhead is what a search over thousands of small files spends its time on.
    """
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW, dir_fd=folder)
    except OSError as exc:
        if exc.errno in _OUT_OF_DESCRIPTORS:
            raise  # no answer about the file: the search says so rather than "no matches"
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_size > GREP_MAX_FILE_BYTES:
            search.skipped_big += 1
            return None
        return os.read(fd, info.st_size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def _scan_file(search: _Search, name: str, folder: int, shown: str) -> None:
    """Search the file `name` of the folder open as `folder`."""
    data = _read_small(name, folder, search)
    if data is None:
        return
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        search.skipped_binary += 1
        return
    if search.lower_needle is not None and search.lower_needle not in data.lower():
        return
    if search.text_mode:
        _scan_subject(search, shown, data.decode("utf-8", "replace"))
    else:
        _scan_subject(search, shown, data)


def _scan_subject(search: _Search, shown: str, subject: AnyStr) -> None:
    first = search.regex.search(subject)
    if first is None:
        return
    room = SEARCH_MAX_RESULTS - search.matches
    found = _line_matches(subject, search.regex, first, room + 1)
    if len(found) > room:
        found, search.more = found[:room], True
    if found:
        search.matches += len(found)
        search.files += 1
        _report(search, shown, subject, found)


def _grep(
    ctx: ToolContext, path: str, search: _Search, include: str | None, exclude: str | None
) -> ToolResult:
    found = _folder(ctx, path)
    if isinstance(found, str):
        return ToolResult(found, is_error=True)
    real, prefix = found
    want = GlobMatcher(include) if include else None
    drop = GlobMatcher(exclude) if exclude else None
    if not os.path.isdir(real):  # one file, opened as read_file opens one
        try:
            folder = ctx.workspace.folder_of(real)
        except (OutsideWorkspace, OSError) as exc:
            return ToolResult(f"{path} could not be searched: {_why(exc)}", is_error=True)
        try:
            _scan_file(search, os.path.basename(real), folder, prefix.rstrip("/"))
        finally:
            os.close(folder)
    else:
        try:
            top = ctx.workspace.open_folder(real)
        except (OutsideWorkspace, OSError) as exc:
            return ToolResult(f"{path} could not be searched: {_why(exc)}", is_error=True)
        pruned = (lambda rel, name: drop.matches(rel, name)) if drop else None
        try:
            _grep_walk(search, top, prefix, want, drop, pruned)
        except OSError as exc:
            return ToolResult(f"{path} could not be searched: {_why(exc)}", is_error=True)
        finally:
            os.close(top)
    deep = _too_deep_note(search.too_deep)
    return ToolResult(_grep_text(search, path) + (f" {deep}" if deep else ""))


def _grep_walk(
    search: _Search,
    top: int,
    prefix: str,
    want: GlobMatcher | None,
    drop: GlobMatcher | None,
    pruned: Callable[[str, str], bool] | None,
) -> None:
    """grep over the folder open as `top`, each file opened by its folder's descriptor."""
    for relative, entry, is_dir, folder in walk_at(top, None, pruned, True, search.too_deep):
        if is_dir or not entry.is_file(follow_symlinks=False):
            continue  # links are not followed (a file link could lead outside)
        name = entry.name
        if (want and not want.matches(relative, name)) or (drop and drop.matches(relative, name)):
            continue
        _scan_file(search, name, folder, prefix + relative)
        if search.more:
            break


def _grep_text(search: _Search, path: str) -> str:
    skipped = []
    if search.skipped_big:
        skipped.append(f"{search.skipped_big} files over {GREP_MAX_FILE_BYTES // 1024 // 1024} MiB")
    if search.skipped_binary:
        skipped.append(f"{search.skipped_binary} binary files")
    note = f" (skipped {' and '.join(skipped)})" if skipped else ""
    if not search.lines:
        return f"No matches under {path or '.'}{note}."
    if search.more:
        tail = (
            f"[showing the first {search.matches} matches; there are more — narrow the "
            f"pattern, path or include{note}]"
        )
    else:
        tail = f"[{_count(search.matches, 'match')} in {_count(search.files, 'file')}{note}]"
    return "\n".join([*search.lines, tail])


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "es" if noun.endswith("h") else "s")


def _grep_title(args: Mapping[str, Any]) -> str:
    return f"Search {args.get('pattern', '')} in {args.get('path') or '.'}"


@tool("grep_search", Effect.READ, title=_grep_title)
async def grep_search(
    ctx: ToolContext,
    *,
    path: Annotated[str, "Folder or file to search, relative to the workspace."] = ".",
    pattern: Annotated[str, "Regular expression (Python syntax) to look for, per line."],
    include: Annotated[str | None, "Glob of files to search ('*.py', 'src/**/*.ts')."] = None,
    exclude: Annotated[str | None, "Glob of files or folders to leave out."] = None,
    return_line_numbers: Annotated[bool, "Show line numbers."] = True,
    literal: Annotated[bool, "Take the pattern as plain text, not a regex."] = False,
    ignore_case: Annotated[bool, "Match upper and lower case alike."] = False,
    context_lines: Annotated[int, "Lines to show before and after each match."] = 0,
) -> ToolResult:
    """Search file contents for a regex (or literal text); answers `path:line:text` lines,
    at most 100. Binary files, files over 2 MiB and dependency/build folders are skipped."""
    try:
        regex, text_mode = _compile(pattern, literal, ignore_case)
    except re.error as exc:
        return ToolResult(
            f"The pattern {pattern!r} is not a valid regular expression ({exc}); fix it, "
            "or pass literal=true to search for the text as is.",
            is_error=True,
        )
    needle = pattern.encode() if literal and ignore_case and pattern.isascii() else None
    search = _Search(
        regex, text_mode, needle.lower() if needle else None, return_line_numbers,
        max(0, min(context_lines, GREP_MAX_CONTEXT_LINES)),
    )  # fmt: skip
    return await asyncio.to_thread(_grep, ctx, path, search, include, exclude)
