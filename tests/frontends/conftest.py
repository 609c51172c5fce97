"""Fixtures for front-end tests: a fake model server and an empty project folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def fake():
    with FakeOpenAI(models=["m1", "m2"]) as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder
