"""`agent run --input-format stream-json` (issue 16): messages as JSON lines on stdin,
steered into the run going on, a new run when none is; the end is stdin's end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.frontends.stream_input import message_text
from tests.support.fake_openai import FakeOpenAI, Scripted, chunk, frames, text
from tests.support.waiting import GENEROUS, eventually_sync


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"type": "user", "text": "hi"}', "hi"),
        ('{"type": "user", "message": {"role": "user", "content": "hi there"}}', "hi there"),
        (
            '{"type":"user","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}',
            "a\nb",
        ),
    ],
)
def test_a_line_carries_a_message(line, message):
    assert message_text(line) == message


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("hello", "it is not JSON"),
        ('{"type": "assistant", "text": "x"}', "it is not a message"),
        ('{"type": "user", "text": "  "}', '"text" is missing or empty'),
        ('["user"]', "it is not a message"),
    ],
)
def test_a_line_that_is_no_message_says_why(line, why):
    with pytest.raises(ValueError, match=why):
        message_text(line)


def held(answer: str, gate: threading.Event) -> Scripted:
    """An answer whose first frame comes at once and the rest once `gate` is set."""
    whole = text(answer).body
    first = frames(chunk({"role": "assistant", "content": ""}, model="m1"), done=False)

    def rest() -> Iterator[bytes]:
        gate.wait(GENEROUS)
        yield whole[len(first) :]

    return Scripted(first, more=rest)


class Agent:
    """`agent run --input-format stream-json --output stream-json`, lines read as they come."""

    def __init__(self, workspace: Path, fake: FakeOpenAI, *args: str) -> None:
        env = dict(os.environ, OPENAI_BASE_URL=fake.base_url)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agent_cli", "run", "--input-format", "stream-json",
             "--output", "stream-json", *args],
            cwd=workspace, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.events: list[dict] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.events.append(json.loads(line))

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def end(self) -> tuple[int, str]:
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        code = self.process.wait(GENEROUS)
        self._reader.join(GENEROUS)
        return code, self.process.stderr.read()

    def types(self) -> list[str]:
        return [e["type"] for e in self.events]


def user(text: str) -> str:
    return json.dumps({"type": "user", "text": text})


def test_a_line_during_a_run_is_steered_into_it(tmp_path: Path):
    gate = threading.Event()
    with FakeOpenAI(models=["m1"]) as fake:
        fake.add(held("Working on it.", gate), text("Both done."))
        agent = Agent(tmp_path, fake)
        try:
            agent.send(user("fix the bug"))
            eventually_sync(lambda: len(fake.requests) == 1, "the first request")
            agent.send("not json at all")
            agent.send(user("and add a test"))
            eventually_sync(lambda: "pending" in agent.types(), "the steered message, pending")
        finally:
            gate.set()
        code, stderr = agent.end()
    assert code == 0, stderr
    assert "agent: stdin line 2 was skipped: it is not JSON" in stderr
    assert agent.types().count("run_started") == 1  # steered into the run, not a new one
    users = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "user"]
    assert users == ["fix the bug", "and add a test"]
    result = agent.events[-1]
    assert result["type"] == "result" and result["answer"] == "Both done."
    assert result["stopped_reason"] == "answered"


def test_a_line_after_a_run_ended_starts_the_next(tmp_path: Path):
    with FakeOpenAI(models=["m1"]) as fake:
        fake.add(text("One."), text("Two."))
        agent = Agent(tmp_path, fake)
        agent.send(user("first"))
        eventually_sync(lambda: "run_finished" in agent.types(), "the first run's end")
        agent.send(user("second"))
        code, stderr = agent.end()
    assert code == 0, stderr
    assert agent.types().count("run_started") == 2
    assert agent.events[-1]["answer"] == "Two."
    users = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "user"]
    assert users == ["first", "second"]


def test_stdin_without_a_message_is_a_clear_error(tmp_path: Path):
    with FakeOpenAI(models=["m1"]) as fake:
        agent = Agent(tmp_path, fake)
        code, stderr = agent.end()
    assert code == 2
    assert "stdin ended before its first message" in stderr and "Traceback" not in stderr


def test_it_goes_with_stream_json_output(tmp_path: Path):
    with FakeOpenAI(models=["m1"]) as fake:
        result = subprocess.run(
            [sys.executable, "-m", "agent_cli", "run", "--input-format", "stream-json"],
            cwd=tmp_path, env=dict(os.environ, OPENAI_BASE_URL=fake.base_url),
            input="", capture_output=True, text=True, timeout=GENEROUS,
        )  # fmt: skip
    assert result.returncode == 2
    assert "--input-format stream-json goes with --output stream-json" in result.stderr
