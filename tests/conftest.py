"""Every test gets its own config, data and log folders: none touches the real home."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Bytecode is cached even where PYTHONDONTWRITEBYTECODE is set (as on these machines):
# pytest then keeps the test modules it rewrote for their asserts, and the processes the
# tests start (`python -m agent_cli`, the MCP and ACP fixtures) read agent_cli compiled
# once, where each would compile it again. It saves ~10 s of CPU a run, more in parallel.
sys.dont_write_bytecode = False

AGENT_VARIABLES = (
    "AGENT_MODEL",
    "AGENT_PROVIDER",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
)
# A terminal's size, as pytest-xdist sets it for its workers (80x24): a test, and what it
# starts on a pseudo-terminal of its own size, sees the same in a parallel run as in a
# serial one (else Rich wraps at 80 columns on a 120-column terminal).
TERMINAL_VARIABLES = ("COLUMNS", "LINES")


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
    for name in (*AGENT_VARIABLES, *TERMINAL_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    return home
