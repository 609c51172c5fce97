"""Writing a file so that a crash, a `kill -9` or a full disk leaves the old version or
the new one, never a torn file: the conversations' store and the task file use it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def temporary_prefix(path: Path) -> str:
    """The name a writer's temporary file starts with: the writer's pid is in it, so a
    sweep can tell an orphan (its writer is gone) from a write going on."""
    return f".{path.name}.{os.getpid()}."


def write_atomically(path: Path, data: bytes, sync_folder: bool = True) -> os.stat_result:
    """Write `data` to a temporary file beside `path`, flush it to disk, rename it over;
    the written file's status (its inode survives the rename)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temporary_prefix(path), suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            stat = os.fstat(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync_folder:
        # The rename is durable only once the folder's entry is on disk too.
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return stat
