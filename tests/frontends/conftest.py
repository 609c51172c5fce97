"""Fixtures for front-end tests: a fake model server and an empty project folder."""

from __future__ import annotations

import pytest

from tests.support.fake_openai import FakeOpenAI
from tests.support.fixtures import workspace  # noqa: F401  (a pytest fixture)


@pytest.fixture
def fake():
    with FakeOpenAI(models=["m1", "m2"]) as server:
        yield server
