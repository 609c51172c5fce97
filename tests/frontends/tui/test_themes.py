"""Themes are data files: the bundled ones load, a bad one is named and skipped, /theme persists."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from textual.theme import Theme
from textual.widgets import OptionList

from agent_cli import paths
from agent_cli.frontends.interactive import Interactive
from agent_cli.frontends.tui import themes
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.notice_view import NoticeView
from agent_cli.frontends.tui.picker import Picker
from agent_cli.settings import Settings
from tests.frontends.tui.support import SIZE, send, shown_text, until

ROOT = Path(__file__).resolve().parents[3]


def test_the_bundled_themes_are_at_the_top_level_and_all_load():
    assert themes.bundled_dir() == ROOT / "themes"
    loaded = themes.load_themes([themes.bundled_dir()])
    assert not loaded.problems
    assert len(loaded.themes) >= 5
    assert loaded.themes["agent-dark"].dark and not loaded.themes["agent-light"].dark
    for theme in loaded.themes.values():
        assert theme.primary and theme.background and theme.foreground, theme.name
    # Pygments is not asked at start-up for the bundled files' styles (~3 ms): here it is.
    for name, syntax in themes.CODE_THEMES.items():
        if name in loaded.themes:
            assert themes._pygments_style_exists(syntax), (name, syntax)


def test_a_user_themes_pygments_style_is_checked(tmp_path: Path):
    (tmp_path / "odd.toml").write_text(
        'name = "odd"\ndark = true\nprimary = "#112233"\nsyntax = "no-such-style"\n'
    )
    loaded = themes.load_themes([tmp_path])
    assert loaded.themes == {} and "is not a Pygments style" in loaded.problems[0]


def test_the_package_carries_the_same_theme_files_for_a_wheel():
    packaged = themes.BUNDLED_DIRS[1]
    names = sorted(p.name for p in (ROOT / "themes").glob("*.toml"))
    assert sorted(p.name for p in packaged.glob("*.toml")) == names
    for name in names:
        assert (packaged / name).read_bytes() == (ROOT / "themes" / name).read_bytes()


def test_a_bad_theme_file_is_skipped_with_its_name(tmp_path: Path):
    (tmp_path / "good.toml").write_text('name = "good"\ndark = true\nprimary = "#112233"\n')
    (tmp_path / "broken.toml").write_text('name = "broken"\ndark = true\nprimary = "nope"\n')
    (tmp_path / "syntax.toml").write_text("name = [\n")
    loaded = themes.load_themes([tmp_path])
    assert list(loaded.themes) == ["good"]
    assert len(loaded.problems) == 2
    assert any("broken.toml" in p and "`primary`" in p for p in loaded.problems)
    assert any("syntax.toml" in p and "not valid TOML" in p for p in loaded.problems)


async def test_a_user_theme_loads_and_a_bad_one_is_a_notice(
    interactive: Interactive, settings: Settings
):
    folder = paths.config_dir() / "themes"
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_text(
        'name = "mine"\ndark = false\nprimary = "#AA3355"\nbackground = "#FFFFFF"\n'
    )
    (folder / "oops.toml").write_text('name = "oops"\ndark = "yes"\nprimary = "#000000"\n')
    app = AgentApp(interactive, dataclasses.replace(settings, theme="mine"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.theme == "mine"
        # The words, however the notice wrapped (the path's length varies with the run).
        notices = " ".join(shown_text(app.transcript.query_one(NoticeView)).split())
        assert "oops.toml: dark must be true or false" in notices


async def test_theme_command_switches_and_the_choice_is_kept(
    interactive: Interactive, settings: Settings
):
    app = AgentApp(interactive, settings)
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "agent-dark"
        await send(pilot, app, "/theme")  # a picker of them (test_pickers.py)
        await until(pilot, lambda: isinstance(app.screen, Picker))
        listed = app.screen.query_one(OptionList)
        ids = [listed.get_option_at_index(i).id for i in range(listed.option_count)]
        assert "agent-light" in ids and "agent-nord" in ids
        await pilot.press("escape")
        await send(pilot, app, "/theme agent-light")
        await until(pilot, lambda: app.theme == "agent-light")
    again = AgentApp(interactive, settings)
    async with again.run_test(size=SIZE):
        assert again.theme == "agent-light"


def chosen(configured: str, available: dict[str, Theme]) -> str:
    return themes.first_available(themes.theme_candidates(configured), available)


def test_a_changed_config_theme_wins_over_the_remembered_choice():
    available = themes.load_themes([themes.bundled_dir()]).themes
    assert chosen("", available) == "agent-dark"
    themes.remember_theme("agent-nord", configured="")
    assert chosen("", available) == "agent-nord"
    assert chosen("agent-paper", available) == "agent-paper"
    themes.remember_theme("agent-ember", configured="agent-paper")
    assert chosen("agent-paper", available) == "agent-ember"
    assert chosen("no-such-theme", available) == "agent-dark"


def bundled_names() -> set[str]:
    folder = themes.bundled_dir()
    assert folder is not None
    return {path.stem for path in folder.glob("*.toml")}


def test_each_bundled_file_is_named_after_its_theme():
    # Before its first frame the app reads only the bundled files it may start in, by name.
    folder = themes.bundled_dir()
    assert folder is not None
    for path in folder.glob("*.toml"):
        assert themes.parse_theme_file(path)[0].name == path.stem


async def test_only_the_theme_it_starts_in_is_read_before_the_first_frame(
    interactive: Interactive, settings: Settings
):
    themes.remember_theme("agent-nord", configured="")
    app = AgentApp(interactive, settings)

    def ours() -> set[str]:
        return {name for name in app.available_themes if name.startswith("agent-")}

    # The remembered choice, and ours should its file be gone; not the other three.
    assert ours() == {"agent-nord", "agent-dark"} and app.theme == "agent-nord"
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: ours() == bundled_names())  # once the first frame is out
        assert app.theme == "agent-nord"
        app.load_other_themes()  # once only: nothing read twice
        assert ours() == bundled_names()


async def test_a_user_theme_replacing_a_bundled_one_stays_after_the_first_frame(
    interactive: Interactive, settings: Settings
):
    folder = paths.config_dir() / "themes"
    folder.mkdir(parents=True)
    (folder / "warm.toml").write_text(  # named as ours, in a file of another name
        'name = "agent-ember"\ndark = true\nprimary = "#123456"\n'
    )
    themes.load_themes([themes.bundled_dir()])  # as another app of this process did
    assert themes.CODE_THEMES["agent-ember"] == "gruvbox-dark"
    app = AgentApp(interactive, settings)
    assert app.available_themes["agent-ember"].primary == "#123456"
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "agent-nord" in app.available_themes)
        assert app.available_themes["agent-ember"].primary == "#123456"
        assert "agent-ember" not in themes.CODE_THEMES  # nor the style of the one it replaced
        await send(pilot, app, "/theme agent-ember")
        await until(pilot, lambda: app.theme == "agent-ember")
        assert app.current_theme.primary == "#123456"


async def test_theme_lists_every_theme_even_before_the_rest_were_read(
    interactive: Interactive, settings: Settings
):
    app = AgentApp(interactive, settings)
    assert "agent-paper" not in app.available_themes
    reply = app.switch_theme("")  # what `/theme NAME` and its listing ask first
    assert "`agent-paper`" in reply.text and "`agent-nord`" in reply.text
    assert app.switch_theme("agent-paper").level != "warn"
