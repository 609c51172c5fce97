"""The external agents' catalog: shipped data, the user's additions, lookups (SPEC §11)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_cli import paths
from agent_cli.backends.catalog import AgentSpec, find_agent, load_catalog
from agent_cli.errors import ConfigError, UsageError
from agent_cli.settings import load_settings


def test_the_shipped_catalog_has_the_five_agents_as_the_issue_names_them():
    catalog = load_catalog({})
    starts = {agent_id: [spec.command, *spec.args] for agent_id, spec in catalog.items()}
    assert starts == {
        "opencode": ["opencode", "acp"],
        "codex": ["codex-acp"],
        "claude": ["claude-code-acp"],
        "gemini": ["gemini", "--acp"],
        "pi": ["pi-acp"],
    }
    assert all(spec.install and spec.needs and spec.name for spec in catalog.values())
    # pi-acp needs pi 0.81 or later, which is published under @earendil-works (the
    # @mariozechner package stops at 0.73, which hangs on get_available_thinking_levels).
    assert catalog["pi"].install.startswith("npm install -g @earendil-works/pi-coding-agent pi-acp")
    assert [agent_id for agent_id, spec in catalog.items() if not spec.gated] == ["pi"]
    assert "builtin" not in catalog


def test_user_entries_add_agents_and_change_fields_of_shipped_ones():
    catalog = load_catalog(
        {
            "opencode": {"args": ["acp", "--port", "0"], "env": {"OPENCODE_X": "1"}},
            "mine": {"command": "my-agent", "args": ["--acp"], "gated": False},
        }
    )
    opencode = catalog["opencode"]
    assert opencode.args == ("acp", "--port", "0")
    assert opencode.env == {"OPENCODE_X": "1"}
    assert opencode.name == "OpenCode" and opencode.needs == ("opencode",)  # kept
    mine = catalog["mine"]
    assert (mine.name, mine.command, mine.args, mine.gated) == (
        "mine",
        "my-agent",
        ("--acp",),
        False,
    )


def test_a_new_user_entry_without_a_command_or_named_builtin_is_a_config_error():
    with pytest.raises(ConfigError, match=r"\[agents.mine\].*no command"):
        load_catalog({"mine": {"name": "Mine"}})
    with pytest.raises(ConfigError, match="built-in agent"):
        load_catalog({"builtin": {"command": "x"}})


def test_an_unknown_id_lists_the_ids_and_guesses_the_likely_one():
    catalog = load_catalog({})
    assert find_agent(catalog, "gemini").name == "Gemini CLI"
    with pytest.raises(UsageError) as caught:
        find_agent(catalog, "opencod")
    message = str(caught.value)
    assert "Did you mean 'opencode'?" in message
    assert "builtin, claude, codex, gemini, opencode, pi" in message
    assert "agent agents" in message


def test_missing_names_each_program_not_on_path(tmp_path: Path):
    program = tmp_path / "present-agent"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    spec = AgentSpec("x", "X", "present-agent", needs=("present-agent", "absent-helper"))
    assert spec.missing(path=str(tmp_path)) == ["absent-helper"]
    assert AgentSpec("y", "Y", sys.executable).missing() == []
    message = spec.missing_message(["absent-helper"])
    assert message == "X cannot start: absent-helper is not on PATH — install it."


def test_the_config_file_feeds_the_catalog_and_gated_is_read(tmp_path: Path):
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        '[agents.local]\ncommand = "local-acp"\nname = "Local"\ngated = false\n'
        'install = "pip install local-acp"\n'
    )
    settings = load_settings(tmp_path)
    spec = load_catalog(settings.agents)["local"]
    assert (spec.name, spec.gated, spec.install) == ("Local", False, "pip install local-acp")
