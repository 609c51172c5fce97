"""Fixtures several test folders share: import them into a conftest.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    """The loopback OpenAI-compatible server, listing one model."""
    with FakeOpenAI(models=["m1"]) as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty project folder."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder
