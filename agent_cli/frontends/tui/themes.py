"""Themes as data: TOML files in the top-level `themes/` folder and in the user's config.

A theme file has `name`, `dark` (a boolean), the Textual theme colours
(`primary`, `secondary`, `accent`, `foreground`, `background`, `surface`,
`panel`, `success`, `warning`, `error`, `boost`) and optionally `syntax`, the
Pygments style for code blocks and diffs. A file that does not parse or
validate is skipped with a problem naming it; the others still load. A user
theme with a bundled theme's name replaces it.

Where the bundled files are: `themes/` at the repository root, found from this
file in a source checkout and an editable install (`pip install -e .`, which
runs the code in place). A wheel or an sdist carries them inside the package
as `agent_cli/frontends/tui/bundled_themes/`: that folder is a symbolic link to
the top-level one, which setuptools follows when it collects the package data
(`**/*.toml`), so the files live in one place and ship without a build step.
Each candidate must hold `agent-dark.toml`, so an unrelated `themes/` folder
next to an installed package is never read.

The chosen theme (`/theme NAME`) is kept in `data_dir()/tui.json`.
"""

from __future__ import annotations

import logging
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

from agent_cli import paths
from agent_cli.errors import ThemeFileError

DEFAULT_DARK = "agent-dark"
DEFAULT_LIGHT = "agent-light"
MARKER = f"{DEFAULT_DARK}.toml"
BUNDLED_DIRS = (
    Path(__file__).resolve().parents[3] / "themes",  # a source checkout or editable install
    Path(__file__).resolve().parent / "bundled_themes",  # a wheel (package data)
)
COLOURS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "success",
    "warning",
    "error",
    "boost",
)
CODE_THEMES: dict[str, str] = {}
"""Pygments style per theme name, from each file's `syntax` (read by `markdown_render`)."""
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,40}")
log = logging.getLogger(__name__)


@dataclass
class LoadedThemes:
    """The themes of some folders, and a sentence for each file skipped."""

    themes: dict[str, Theme] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # one sentence per skipped file
    origin: dict[str, Path] = field(default_factory=dict)


def bundled_dir() -> Path | None:
    return next((d for d in BUNDLED_DIRS if (d / MARKER).is_file()), None)


def user_dir() -> Path:
    return paths.config_dir() / "themes"


def load_themes(
    folders: list[Path | None] | None = None, bundled_wanted: Callable[[str], bool] | None = None
) -> LoadedThemes:
    """Every theme of these folders (default: the bundled ones, then the user's).

    `bundled_wanted`: which of the bundled files to read, by name (each is `NAME.toml`).
    The TUI's first frame needs only the theme it starts in; the others are read after it.
    """
    bundled = bundled_dir()
    if folders is None:
        folders = [bundled, user_dir()]
    loaded = LoadedThemes()
    for folder in folders:
        if folder is None or not folder.is_dir():
            continue
        # The bundled files' Pygments styles are checked by the tests, not at each start:
        # asking Pygments costs ~3 ms before the TUI's first frame (its code blocks come later).
        check_syntax = folder != bundled
        files = sorted(folder.glob("*.toml"))
        if folder == bundled and bundled_wanted is not None:
            files = [path for path in files if bundled_wanted(path.stem)]
        for path in files:
            try:
                theme, syntax = parse_theme_file(path, check_syntax=check_syntax)
            except ThemeFileError as e:
                loaded.problems.append(str(e))
                continue
            loaded.themes[theme.name] = theme
            loaded.origin[theme.name] = path
            if syntax:
                CODE_THEMES[theme.name] = syntax
            else:  # a user's theme replacing ours replaces its style too
                CODE_THEMES.pop(theme.name, None)
    return loaded


def parse_theme_file(path: Path, *, check_syntax: bool = True) -> tuple[Theme, str]:
    """(the Textual theme, its Pygments style or "") from one file, or ThemeFileError;
    `check_syntax`: whether Pygments is asked if it has the style."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ThemeFileError(f"Theme file `{path}` could not be read: {e} — skipped.") from e
    except tomllib.TOMLDecodeError as e:
        raise ThemeFileError(f"Theme file `{path}` is not valid TOML ({e}) — skipped.") from e
    return _validate(path, data, check_syntax)


def _validate(path: Path, data: dict[str, Any], check_syntax: bool) -> tuple[Theme, str]:
    def bad(problem: str) -> ThemeFileError:
        return ThemeFileError(f"Theme file `{path}`: {problem} — skipped.")

    name = data.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise bad('`name` must be a short lower-case name like "my-theme"')
    dark = data.get("dark")
    if not isinstance(dark, bool):
        raise bad("`dark` must be true or false")
    unknown = sorted(set(data) - {"name", "dark", "syntax", *COLOURS})
    if unknown:
        raise bad(f"unknown key(s) {', '.join(map(repr, unknown))}")
    if "primary" not in data:
        raise bad("`primary` is required")
    colours: dict[str, str] = {}
    for key in COLOURS:
        if key in data:
            value = data[key]
            try:
                if not isinstance(value, str):
                    raise ColorParseError(f"{value!r} is not a string")
                Color.parse(value)
            except ColorParseError as e:
                raise bad(f"`{key}` is not a colour ({e})") from e
            colours[key] = value
    syntax = data.get("syntax", "")
    if not isinstance(syntax, str) or (
        syntax and check_syntax and not _pygments_style_exists(syntax)
    ):
        raise bad(f"`syntax` {syntax!r} is not a Pygments style")
    theme = Theme(
        name=name,
        dark=dark,
        primary=colours["primary"],
        secondary=colours.get("secondary"),
        accent=colours.get("accent"),
        foreground=colours.get("foreground"),
        background=colours.get("background"),
        surface=colours.get("surface"),
        panel=colours.get("panel"),
        success=colours.get("success"),
        warning=colours.get("warning"),
        error=colours.get("error"),
        boost=colours.get("boost"),
    )
    return theme, syntax


def _pygments_style_exists(name: str) -> bool:
    from pygments.styles import STYLE_MAP, get_style_by_name
    from pygments.util import ClassNotFound

    if name in STYLE_MAP:  # a built-in style: known without importing it (at start-up)
        return True
    try:
        get_style_by_name(name)
    except ClassNotFound:
        return False
    return True


# -- the remembered choice -----------------------------------------------------------


def prefs_file() -> Path:
    return paths.data_dir() / "tui.json"


def theme_candidates(configured: str) -> list[str]:
    """The themes to start with, best first.

    The last `/theme` choice wins, unless the config's `theme` changed since it
    was made (then the person edited the config on purpose, and that wins); then
    the configured theme, then ours, then Textual's.
    """
    prefs = _read_prefs()
    chosen = prefs.get("theme")
    if configured and configured != prefs.get("config_theme"):
        chosen = configured
    named = [name for name in (chosen, configured) if isinstance(name, str) and name]
    return [*named, DEFAULT_DARK, "textual-dark"]


def first_available(candidates: list[str], available: dict[str, Theme]) -> str:
    return next((name for name in candidates if name in available), "textual-dark")


def remember_theme(name: str, configured: str) -> None:
    """Keep a `/theme` choice for the next start (best effort: a failure is only logged)."""
    path = prefs_file()
    data = {**_read_prefs(), "theme": name, "config_theme": configured}
    import json  # as in _read_prefs

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(data), encoding="utf-8")
        temporary.replace(path)
    except OSError as e:
        log.warning("could not keep the theme choice in %s: %s", path, e)


def _read_prefs() -> dict[str, Any]:
    try:
        text = prefs_file().read_text(encoding="utf-8")
    except (OSError, ValueError):
        return {}
    import json  # here: without a kept choice, a first start is painted without it (~1.5 ms)

    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
