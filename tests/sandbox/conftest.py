"""Each mechanism, for real: bubblewrap (required where AGENT_REQUIRE_BWRAP is set, as CI
does) and Landlock with seccomp."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.sandbox import bwrap, landlock
from agent_cli.sandbox.launch import Sandbox, SandboxConfig
from tests.support.fake_openai import FakeOpenAI


def _available(kind: str) -> str:
    """Why `kind` cannot run here ("" when it can)."""
    if kind == "bwrap" and bwrap.find() is None:
        if os.environ.get("AGENT_REQUIRE_BWRAP"):
            pytest.fail("bwrap is required here (AGENT_REQUIRE_BWRAP) but cannot run")
        return "bwrap is not installed"
    if kind == "landlock" and landlock.abi() < 4:
        return "no Landlock with TCP rules in this kernel"
    return ""


@pytest.fixture(params=["bwrap", "landlock"])
def kind(request) -> str:
    why = _available(request.param)
    if why:
        pytest.skip(why)
    return request.param


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the workspace and outside /tmp (bwrap's /tmp is private anyway)."""
    folder = Path(tempfile.mkdtemp(prefix="agent-outside-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def make_sandbox(kind: str, **config) -> Sandbox:
    return Sandbox(SandboxConfig(mode=kind, **config))


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(models=["m1"]) as server:
        yield server
