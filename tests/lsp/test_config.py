"""Which language servers there are: known ones on PATH, and the `lsp` settings."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agent_cli.errors import ConfigError
from agent_cli.lsp.config import KNOWN, find_servers
from agent_cli.lsp.options import LspSettings
from agent_cli.settings import load_settings


def programs(folder: Path, *names: str) -> str:
    """A PATH holding an executable of each name."""
    folder.mkdir(exist_ok=True)
    for name in names:
        program = folder / name
        program.write_text("#!/bin/sh\n")
        program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return str(folder)


def test_known_servers_are_used_when_their_program_is_on_path(tmp_path: Path) -> None:
    path = programs(tmp_path / "bin", "ruff", "gopls")
    found = {
        entry.config.name: entry.program for entry in find_servers(LspSettings().configs(), path)
    }
    assert found["ruff"] == os.path.join(path, "ruff")
    assert found["gopls"] == os.path.join(path, "gopls")
    assert found["clangd"] == ""
    assert {c.name for c in KNOWN} <= set(found)


def test_pyright_is_left_out_when_basedpyright_is_there(tmp_path: Path) -> None:
    path = programs(tmp_path / "bin", "basedpyright-langserver", "pyright-langserver")
    names = [
        entry.config.name for entry in find_servers(LspSettings().configs(), path) if entry.program
    ]
    assert names == ["basedpyright"]
    alone = programs(tmp_path / "other", "pyright-langserver")
    names = [
        entry.config.name for entry in find_servers(LspSettings().configs(), alone) if entry.program
    ]
    assert names == ["pyright"]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def user_config(isolated_home: Path) -> Path:
    return isolated_home / "config" / "agent" / "config.toml"


def test_tables_change_known_servers_and_add_new_ones(isolated_home: Path, tmp_path: Path) -> None:
    write(
        user_config(isolated_home),
        "[lsp]\nsettle_time = 0.5\n"
        '[lsp.ruff]\nfiles = ["*.py"]\ninit_options = { settings = { lineLength = 90 } }\n'
        "[lsp.gopls]\nenabled = false\n"
        '[lsp.mine]\ncommand = ["mine-ls", "--stdio"]\nfiles = ["*.mine"]\n'
        'root_markers = ["mine.toml"]\n',
    )
    settings = load_settings(tmp_path)
    assert settings.lsp.settle_time == 0.5
    configs = {c.name: c for c in settings.lsp.configs()}
    assert configs["ruff"].command == ("ruff", "server")  # kept from the known entry
    assert configs["ruff"].files == ("*.py",)
    assert configs["ruff"].init_options == {"settings": {"lineLength": 90}}
    assert not configs["gopls"].enabled
    assert configs["mine"].command == ("mine-ls", "--stdio")
    assert configs["mine"].matches("a.mine") and not configs["mine"].matches("a.py")


def test_lsp_false_turns_every_server_off(isolated_home: Path, tmp_path: Path) -> None:
    write(user_config(isolated_home), "lsp = false\n")
    assert load_settings(tmp_path).lsp.configs() == []


def test_a_project_may_turn_them_off_and_its_tables_wait_for_trust(
    isolated_home: Path, tmp_path: Path
) -> None:
    write(tmp_path / ".agent" / "config.toml", '[lsp.evil]\ncommand = ["evil"]\nfiles = ["*"]\n')
    settings = load_settings(tmp_path)
    assert "evil" not in {c.name for c in settings.lsp.configs(project_trusted=False)}
    assert "evil" in {c.name for c in settings.lsp.configs(project_trusted=True)}
    assert settings.lsp.project_programs() == [("language server evil", "evil")]
    write(tmp_path / ".agent" / "config.toml", "[lsp]\nenabled = false\n")
    assert load_settings(tmp_path).lsp.configs(project_trusted=True) == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[lsp.mine]\nfiles = ['*.x']\n", "'lsp.mine' needs a command and files"),
        ("[lsp.ruff]\ncommand = []\n", "'lsp.ruff.command' is empty"),
        ("[lsp.ruff]\nfile = ['*.py']\n", "'lsp.ruff.file' is not a language-server setting"),
        ("[lsp]\nsettle_time = 0\n", "'lsp.settle_time' must be more than 0"),
        ("[lsp]\nsettle = 1\n", "'lsp.settle' is not a language-server setting"),
        ("[lsp.ruff]\ncommand = 'ruff server'\n", "'lsp.ruff.command' must be a list"),
    ],
)
def test_a_bad_table_is_an_error_naming_the_key(
    isolated_home: Path, tmp_path: Path, text: str, said: str
) -> None:
    write(user_config(isolated_home), text)
    with pytest.raises(ConfigError, match=said.replace("[", r"\[").replace("(", r"\(")):
        load_settings(tmp_path)
