"""Stylesheets read when what they style first mounts, not before the first frame.

A widget the first frame does not show (the views, the completion menu, the plan) is
mounted when it is first needed; its `.tcss` is read then, before it mounts, so it is
styled as if it had been read at the start. A theme switch re-parses them with the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App


def beside(module_file: str, *names: str) -> tuple[str, ...]:
    """The paths of stylesheets kept beside a module (`beside(__file__, "x.tcss")`)."""
    folder = Path(module_file).parent
    return tuple(str(folder / name) for name in names)


def read_styles(app: App[Any], paths: Sequence[str]) -> None:
    """Read `paths` into the app's stylesheet unless they are in it (each set read once)."""
    sheet = app.stylesheet
    if sheet.has_source(paths[0]):
        return
    for path in paths:  # as `Stylesheet.read` does, and its rules' map made anew
        sheet.add_source(Path(path).read_text(encoding="utf-8"), read_from=(path, ""))
