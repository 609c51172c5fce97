"""What an agent changed in the workspace on its own, told from the files' stat data.

An ungated agent (pi) edits files in its own process, never through us: the
only way to say what it did is to look before and after. Sizes and mtimes are
enough to name the files (the checkpoint taken before holds their contents).
"""

from __future__ import annotations

from pathlib import Path

from agent_cli.tools.search import FileStats, file_stats

SNAPSHOT_MAX_FILES = 100_000  # past this many files, changes are not listed
CHANGES_LISTED = 10  # files named in the notice; the rest are counted

Snapshot = FileStats


def snapshot(root: Path) -> Snapshot | None:
    """Each file's size and mtime (skipping the folders searches skip); None if too many.

    Blocking: call it in a thread.
    """
    return file_stats(root, SNAPSHOT_MAX_FILES)


def compare(before: Snapshot, after: Snapshot) -> list[tuple[str, str]]:
    """(letter, path) for each file added (A), changed (M) or deleted (D), by path."""
    changes = [("D", path) for path in before.keys() - after.keys()]
    changes += [("A", path) for path in after.keys() - before.keys()]
    changes += [("M", path) for path in before.keys() & after.keys() if before[path] != after[path]]
    return sorted(changes, key=lambda change: change[1])


def changes_listed(
    before: Snapshot, after: Snapshot, known: set[str] | frozenset = frozenset()
) -> str:
    """The changes in words, e.g. `2 files: M a.py, A b.py`; "" when there are none.

    `known`: paths whose change went through us (left out).
    """
    changes = [change for change in compare(before, after) if change[1] not in known]
    count = len(changes)
    if not count:
        return ""
    listed = ", ".join(f"{letter} {path}" for letter, path in changes[:CHANGES_LISTED])
    more = f" and {count - CHANGES_LISTED} more" if count > CHANGES_LISTED else ""
    return f"{count} {'file' if count == 1 else 'files'}: {listed}{more}"
