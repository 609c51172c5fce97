"""Language servers for the tests: the real ones the dev install brings, and fakes."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import pytest

from agent_cli.lsp.config import Found, ServerConfig
from agent_cli.lsp.servers import LanguageServers
from tests.support.fixtures import workspace  # noqa: F401  (a pytest fixture)
from tests.support.waiting import GENEROUS

SERVERS = Path(__file__).resolve().parents[1] / "support" / "lsp_servers"
FAKE = SERVERS / "fake.py"
SILENT = SERVERS / "silent.py"


def program(name: str) -> str:
    """A dev dependency's program, beside this Python or on PATH; a failure if missing."""
    here = os.path.dirname(sys.executable)
    found = shutil.which(name, path=os.pathsep.join([here, os.environ.get("PATH", "")]))
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[dev]'")
    return found


def found(name: str, command: Sequence[str], files: Sequence[str] = ("*.py",)) -> Found:
    return Found(ServerConfig(name, tuple(command), tuple(files), source="test"), command[0])


def ruff() -> Found:
    return found("ruff", [program("ruff"), "server"])


def basedpyright() -> Found:
    return found("basedpyright", [program("basedpyright-langserver"), "--stdio"])


def fake(name: str = "fake", files: Sequence[str] = ("*.py",)) -> Found:
    return found(name, [sys.executable, str(FAKE)], files)


def silent() -> Found:
    return found("silent", [sys.executable, str(SILENT)])


MakeServers = Callable[..., LanguageServers]


@pytest.fixture
async def make_servers(workspace: Path) -> AsyncIterator[MakeServers]:  # noqa: F811
    """LanguageServers for the workspace, all ended when the test ends. The settle time
    is generous by default: a wait ends as soon as the server has answered."""
    made: list[LanguageServers] = []

    def make(*entries: Found, settle_time: float = GENEROUS, **options: float) -> LanguageServers:
        servers = LanguageServers(entries, workspace, settle_time=settle_time, **options)
        made.append(servers)
        return servers

    yield make
    for servers in made:
        await servers.aclose()
