"""Keep the protected paths of the workspace as they were, where no mount can (Landlock).

Landlock gives rights to whole folders, so inside a writable workspace it
cannot keep `.git/config`, `.git/hooks` or `.agent/` read-only. Instead their
contents are copied before the command and, if the command changed anything
there, put back after it (and what it added removed), before anything else
can run them. bubblewrap does not need this: it mounts them read-only.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

_MAX_BYTES = 32 * 1024 * 1024

Entry = tuple[str, bytes, int]  # kind ("dir", "file", "link"), contents or target, mode
Snapshot = dict[Path, dict[str, Entry] | None]


def _entry(path: Path, info: os.stat_result) -> Entry:
    if stat.S_ISLNK(info.st_mode):
        return "link", os.fsencode(os.readlink(path)), 0
    if stat.S_ISDIR(info.st_mode):
        return "dir", b"", stat.S_IMODE(info.st_mode)
    if stat.S_ISREG(info.st_mode):
        return "file", path.read_bytes(), stat.S_IMODE(info.st_mode)
    return "other", b"", info.st_mode


def _tree(root: Path) -> dict[str, Entry] | None:
    try:
        info = os.lstat(root)
    except FileNotFoundError:
        return None
    found = {"": _entry(root, info)}
    total = len(found[""][1])
    if found[""][0] == "dir":
        for folder, dirs, files in os.walk(root):
            for name in dirs + files:
                path = Path(folder) / name
                entry = _entry(path, os.lstat(path))
                total += len(entry[1])
                if total > _MAX_BYTES:
                    raise OSError(f"{root} holds more than {_MAX_BYTES >> 20} MiB")
                found[str(path.relative_to(root))] = entry
    return found


def snapshot(paths: tuple[Path, ...]) -> Snapshot:
    return {path: _tree(path) for path in paths}


def restore(before: Snapshot) -> list[Path]:
    """Put back every protected path the command changed; return those it changed."""
    changed = []
    for path, tree in before.items():
        try:
            now = _tree(path)
        except OSError:
            now = {}
        if now == tree:
            continue
        changed.append(path)
        _remove(path)
        if tree is not None:
            _recreate(path, tree)
    return changed


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        path.unlink()


def _recreate(root: Path, tree: dict[str, Entry]) -> None:
    order = sorted(tree, key=lambda r: r.count(os.sep) if r else -1)
    for relative in order:
        kind, data, mode = tree[relative]
        path = root / relative if relative else root
        if kind == "dir":
            path.mkdir(parents=True, exist_ok=True)
        elif kind == "file":
            path.write_bytes(data)
            os.chmod(path, mode)
        elif kind == "link":
            os.symlink(os.fsdecode(data), path)
    for relative in reversed(order):  # a folder's own mode last: it may not be writable
        kind, _, mode = tree[relative]
        if kind == "dir":
            os.chmod(root / relative if relative else root, mode)
