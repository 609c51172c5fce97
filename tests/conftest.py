"""Every test gets its own config, data and log folders: none touches the real home."""

from __future__ import annotations

from pathlib import Path

import pytest

AGENT_VARIABLES = (
    "AGENT_MODEL",
    "AGENT_PROVIDER",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
)


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("home")
    for name, sub in (
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
    ):
        (home / sub).mkdir()
        monkeypatch.setenv(name, str(home / sub))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    for name in AGENT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return home
