"""Against a real llama.cpp server — only when AGENT_TEST_LLAMA_URL names one.

Start one with `llama-server -m MODEL.gguf --jinja --port 8080` and run
`AGENT_TEST_LLAMA_URL=http://127.0.0.1:8080/v1 python -m pytest tests/providers/test_llama_real.py`.
Nothing here can download weights, so CI skips it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cli import agent_process, out

URL = os.environ.get("AGENT_TEST_LLAMA_URL", "")
pytestmark = pytest.mark.skipif(not URL, reason="set AGENT_TEST_LLAMA_URL to a llama.cpp server")


def run_json(workspace: Path, prompt: str, *args: str) -> dict:
    env = {"OPENAI_BASE_URL": URL, "AGENT_PROVIDER": ""}
    result = agent_process(workspace, "run", "--output", "json", *args, prompt, env=env)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(out(result))


def test_a_real_server_answers_with_usage(tmp_path: Path):
    data = run_json(tmp_path, "Reply with the single word: ready")
    assert data["answer"].strip() and data["stopped_reason"] == "answered"
    assert data["usage"]["output_tokens"] > 0


def test_a_real_server_reads_a_file_with_a_tool(tmp_path: Path):
    (tmp_path / "secret.txt").write_text("The password is swordfish.\n")
    data = run_json(
        tmp_path, "Use the read_file tool to read secret.txt, then tell me the password."
    )
    tools = [item for item in data["items"] if item["kind"] == "tool"]
    assert any(item["tool"] == "read_file" and item["state"] == "done" for item in tools)
    assert "swordfish" in data["answer"].lower()
