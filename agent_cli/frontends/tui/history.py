"""The input's history: what the person sent, kept per workspace across sessions.

Stored as JSON lines (`{"text": ...}`) in `data_dir()/history/<sha256(workspace)[:16]>`,
so a message with newlines stays one entry, and appending never rewrites the
file. Only the newest `HISTORY_LIMIT` entries are read back. No Textual here: the
line REPL keeps its history in the same file through this class (`line.SharedHistory`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from agent_cli import paths

HISTORY_LIMIT = 1000
log = logging.getLogger(__name__)


def history_file(workspace: Path) -> Path:
    import hashlib  # here: OpenSSL's ~3 ms is not needed before the TUI's first frame

    key = hashlib.sha256(str(workspace).encode()).hexdigest()[:16]
    return paths.data_dir() / "history" / key


class History:
    """Entries oldest first, and a cursor that walks them from the newest back."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[str] = self._read()
        self._index = len(self.entries)  # len(entries): the draft being written
        self._draft = ""

    def _read(self) -> list[str]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()[-HISTORY_LIMIT:]
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as e:
            log.warning("history %s could not be read: %s", self.path, e)
            return []
        import json  # here, as the history is read: at its first use, after the first frame

        entries = []
        for line in lines:
            try:
                text = json.loads(line).get("text")
            except (ValueError, AttributeError):
                continue  # a torn last line after a crash: skip it
            if isinstance(text, str) and text:
                entries.append(text)
        return entries

    def add(self, text: str) -> None:
        """Remember a sent message (not twice in a row) and go back to an empty draft."""
        self._draft = ""
        if not text.strip() or (self.entries and self.entries[-1] == text):
            self._index = len(self.entries)
            return
        self.entries.append(text)
        self._index = len(self.entries)
        import json  # as in _read

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as file:
                file.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
        except OSError as e:  # history is a convenience: never fail a send for it
            log.warning("history %s could not be written: %s", self.path, e)

    def previous(self, current: str) -> str | None:
        """The entry before the cursor (keeping `current` as the draft), or None at the start."""
        if self._index == 0:
            return None
        if self._index == len(self.entries):
            self._draft = current
        self._index -= 1
        return self.entries[self._index]

    def next(self) -> str | None:
        """The entry after the cursor, the draft past the newest, or None when at the draft."""
        if self._index >= len(self.entries):
            return None
        self._index += 1
        return self._draft if self._index == len(self.entries) else self.entries[self._index]
