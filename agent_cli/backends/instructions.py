"""Layered instructions: the `AGENTS.md` of a subfolder, given once the agent works there.

The system prompt carries the person's own `AGENTS.md` and the workspace root's
(backends/prompt.py); it is built once per message and never changes between
rounds, so a server's prompt cache keeps working. A subfolder's `AGENTS.md`
(`src/api/AGENTS.md`) is only about the files under it, so it reaches the
model when the agent first reads or changes one of them: appended to that
tool call's result, once per conversation. Whether it was given is read from
the conversation itself, so a resumed one does not get it twice.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from agent_cli.engine.items import Item, ToolItem

AGENTS_MD = "AGENTS.md"
FOLDER_CAP = 4 * 1024  # bytes of one subfolder's AGENTS.md given to the model
TOOLS = frozenset({"read_file", "write_file", "edit_file"})  # they name one file: `path`
OPENING = '<instructions from="{path}">'


class FolderInstructions:
    """What `AGENTS.md` files between the workspace root and a file have to say."""

    def __init__(self, workspace: Path) -> None:
        self.root = workspace.resolve()

    def note(self, tool: str, path: object, items: Iterable[Item]) -> str:
        """The text to append to a `tool` call's result on `path`: each subfolder
        `AGENTS.md` above the file not given yet in `items` (outermost first); "" if none."""
        if tool not in TOOLS or not isinstance(path, str) or not path:
            return ""
        given = _given(items)
        notes = []
        for relative in self._files_above(path):
            if relative in given:
                continue
            text = self._read(relative)
            if text:
                notes.append(f"{OPENING.format(path=relative)}\n{text}\n</instructions>")
        if not notes:
            return ""
        said = "Instructions for the files in this folder (follow them there):"
        return "\n\n" + said + "\n" + "\n".join(notes)

    def _files_above(self, path: str) -> list[str]:
        """Workspace-relative `AGENTS.md` paths in the folders holding `path`, below the root."""
        relative = PurePosixPath(path.replace("\\", "/"))
        if relative.is_absolute():
            try:
                relative = PurePosixPath(Path(path).resolve().relative_to(self.root).as_posix())
            except (OSError, ValueError):
                return []  # outside the workspace: not the project's instructions
        if ".." in relative.parts:
            return []
        folders = list(reversed(relative.parents))[1:]  # without the root ("."), outermost first
        return [f"{folder.as_posix()}/{AGENTS_MD}" for folder in folders]

    def _read(self, relative: str) -> str:
        path = self.root / relative
        try:
            if not path.is_file() or not path.resolve().is_relative_to(self.root):
                return ""  # none, or a link leading out of the workspace
            with path.open("rb") as f:
                data = f.read(FOLDER_CAP)
        except OSError:
            return ""
        return data.decode("utf-8", "ignore").strip()


def _given(items: Iterable[Item]) -> set[str]:
    """The subfolder `AGENTS.md` files already given in the conversation."""
    found = set()
    marker = OPENING.split("{", 1)[0]
    for item in items:
        if isinstance(item, ToolItem) and marker in item.result:
            for piece in item.result.split(marker)[1:]:
                found.add(piece.split('"', 1)[0])
    return found
