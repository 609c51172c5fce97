"""Run the real `agent` CLI in a subprocess, as a person would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agent_cli import paths
from tests.support.fake_openai import FakeOpenAI

TIMEOUT = 60


def agent(
    workspace: Path,
    *args: str,
    fake: FakeOpenAI | None = None,
    stdin: str | bytes | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    environment = dict(os.environ)
    if fake is not None:
        environment["OPENAI_BASE_URL"] = fake.base_url
    environment.update(env or {})
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run(
        [sys.executable, "-m", "agent_cli", *args],
        cwd=workspace,
        env=environment,
        input=data if data is not None else b"",
        capture_output=True,
        timeout=TIMEOUT,
    )


def out(result: subprocess.CompletedProcess) -> str:
    return result.stdout.decode()


def err(result: subprocess.CompletedProcess) -> str:
    return result.stderr.decode()


def saved() -> list[dict]:
    folder = paths.conversations_dir()
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
