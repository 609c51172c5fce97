"""The debug log: where it goes, what it holds (bodies), and what it never holds (secrets)."""

from __future__ import annotations

import json
import logging
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli import credentials, logs, paths
from tests.support.cli import agent, agent_process, err
from tests.support.fake_openai import FakeOpenAI, http_error, text, tool_calls

KEY = "sk-DEBUGLOG-5e8a1f0c2b7d"
STORED_KEY = "or-STORED-0b9c8d7e6f5a"
VARIABLE_SECRET = "tok-FROMENV-3c4d5e6f7a8b"


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("Authorization: Bearer abc123xyz", "abc123xyz"),
        ("proxy-authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
        ("{'authorization': 'Bearer abc123xyz', 'accept': '*/*'}", "abc123xyz"),
        ("x-api-key: sk-ant-999888777", "sk-ant-999888777"),
        ("Cookie: session=s3cr3tv4lue; theme=dark", "s3cr3tv4lue"),
        ("[(b'date', b'today'), (b'set-cookie', b'sid=zz99yy88; Path=/')]", "zz99yy88"),
        ('{"api_key": "k-111222333", "model": "m1"}', "k-111222333"),
        ('{"apiKey":"k-111222333"}', "k-111222333"),
        ('{"access_token": "at-444555666", "n": 1}', "at-444555666"),
        ('{"client_secret": "cs-777888999"}', "cs-777888999"),
        ('{"password": "hunter2hunter2"}', "hunter2hunter2"),
        ('{"content": "{\\"token\\": \\"tk-123456789\\"}"}', "tk-123456789"),
        ("GET /v1/x?api_key=q-55667788&limit=3", "q-55667788"),
        ("password=hunter2hunter2 user=bob", "hunter2hunter2"),
        ("secret: plain-words-secret", "plain-words-secret"),
    ],
)
def test_redactor_removes_credentials_in_every_form(line: str, secret: str) -> None:
    redacted = logs.Redactor()(line)
    assert secret not in redacted, redacted
    assert logs.REDACTED in redacted


def test_redactor_keeps_what_only_looks_like_a_secret() -> None:
    body = '{"max_tokens": 512, "usage": {"prompt_tokens": 10, "total_tokens": 15}, "model": "m1"}'
    assert logs.Redactor()(body) == body
    assert logs.Redactor()("the token, which expired") == "the token, which expired"


def test_redactor_removes_given_values_wherever_they_are() -> None:
    redact = logs.Redactor([KEY, "ab"])  # "ab" is too short to be a key: ignored
    assert redact(f"the user pasted {KEY} into the prompt") == "the user pasted *** into the prompt"
    assert redact("abc") == "abc"


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    """The root logger, restored after the test (logs.start adds a handler to it)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield root
    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


def test_the_log_file_is_private_and_redacts_messages_args_and_tracebacks(
    tmp_path: Path, root_logger: logging.Logger
) -> None:
    path = logs.start(tmp_path / "log", secrets=[KEY])
    log = logging.getLogger("agent_cli.test")
    log.debug("request headers %s", {"Authorization": f"Bearer {KEY}", "X-Trace": "t1"})
    try:
        raise ValueError(f"the server said: invalid key {KEY}")
    except ValueError:
        log.exception("call failed with password=%s", "hunter2hunter2")
    log.debug("body %s", json.dumps({"messages": [{"role": "user", "content": "hello"}]}))
    for handler in root_logger.handlers:
        handler.flush()
    written = path.read_text()
    assert KEY not in written and "hunter2hunter2" not in written
    assert "ValueError: the server said: invalid key ***" in written  # the traceback, redacted
    assert '"content": "hello"' in written and "X-Trace" in written
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_old_logs_are_pruned_to_the_newest(tmp_path: Path, root_logger: logging.Logger) -> None:
    folder = tmp_path / "log"
    folder.mkdir()
    for n in range(logs.LOG_FILES_KEPT + 5):
        (folder / f"agent-20200101-0000{n:02d}-1.log").write_text("old")
    new = logs.start(folder)
    kept = sorted(folder.glob("agent-*.log"))
    assert len(kept) == logs.LOG_FILES_KEPT and new in kept
    assert (folder / "agent-20200101-000000-1.log") not in kept  # the oldest went first


def test_debug_run_logs_bodies_but_no_key(tmp_path: Path) -> None:
    """A real `agent run --debug`: the log holds the request and the answer, never a key."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    credentials.set_key("openrouter", STORED_KEY)  # a stored key this run does not even use
    prompt = f"explain these: {STORED_KEY} {VARIABLE_SECRET} password=hunter2hunter2"
    with FakeOpenAI(models=["m1"]) as fake:
        fake.add(text("The answer is forty-two."))
        env = {"OPENAI_API_KEY": KEY, "DEPLOY_TOKEN": VARIABLE_SECRET}
        result = agent_process(workspace, "run", "--debug", prompt, fake=fake, env=env)
        assert result.returncode == 0, err(result)
        assert fake.request_headers[0]["authorization"] == f"Bearer {KEY}"  # it was sent
    said = next(line for line in err(result).splitlines() if "debug log" in line)
    log = Path(said.rsplit(" ", 1)[1])
    assert log.is_file() and log.parent == paths.log_dir()
    written = log.read_text()
    assert KEY not in written, "the API key is in the debug log"
    assert STORED_KEY not in written and VARIABLE_SECRET not in written
    assert "hunter2hunter2" not in written
    assert '"messages":' in written and "explain these:" in written  # the request body
    assert "forty-two." in written and "chat.completion.chunk" in written  # the stream


def test_an_error_answer_is_logged_without_the_key_it_echoes(tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    with FakeOpenAI(models=["m1"]) as fake:
        fake.add(http_error(401, f"Incorrect API key provided: {KEY}"))
        result = agent(workspace, "run", "--debug", "hi", fake=fake, env={"OPENAI_API_KEY": KEY})
    assert result.returncode == 1
    written = "".join(p.read_text() for p in paths.log_dir().glob("*.log"))
    assert "answered 401" in written and "Incorrect API key provided" in written
    assert KEY not in written


def test_debug_before_the_command_logs_too(tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    with FakeOpenAI(models=["m1"]) as fake:
        fake.add(text("Logged."))
        result = agent(workspace, "--debug", "run", "hi", fake=fake, env={"OPENAI_API_KEY": KEY})
    assert result.returncode == 0, err(result)
    said = next(line for line in err(result).splitlines() if "debug log" in line)
    written = Path(said.rsplit(" ", 1)[1]).read_text()
    assert "Logged." in written and KEY not in written


STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [A-Z]+ \[(?P<turn>[^\]]+)\] ")


def test_every_line_of_a_turn_carries_its_correlation_id(tmp_path: Path) -> None:
    """`agent run --debug` with a tool call: each log line between the turn's first and
    last names it, and `agent sessions show --json` has the same id on the user item."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("a note\n")
    with FakeOpenAI(models=["m1"]) as fake:
        fake.add(tool_calls(("c1", "read_file", '{"path": "notes.txt"}')), text("Read it."))
        env = {"OPENAI_API_KEY": KEY}
        result = agent(workspace, "run", "--debug", "read notes.txt", fake=fake, env=env)
        assert result.returncode == 0, err(result)
    said = next(line for line in err(result).splitlines() if "debug log" in line)
    lines = Path(said.rsplit(" ", 1)[1]).read_text().splitlines()
    begins = [i for i, line in enumerate(lines) if " turn t-" in line and line.endswith("begins")]
    assert len(begins) == 1, "one message, one turn"
    turn = lines[begins[0]].split(" turn ")[1].split()[0]
    end = next(i for i, line in enumerate(lines) if line.endswith(f"turn {turn} ends"))
    stamped = [m for line in lines[begins[0] : end + 1] if (m := STAMP.match(line))]
    strays = [m.string for m in stamped if m["turn"] != turn]
    assert not strays, f"lines of turn {turn} without its id: {strays[:3]}"
    text_of_turn = "\n".join(m.string for m in stamped)
    assert text_of_turn.count("/chat/completions: {") == 2, "both requests of the turn are in it"
    assert "tool read_file called" in text_of_turn
    listed = agent(workspace, "sessions", "list", "--json")
    conversation = json.loads(listed.stdout.splitlines()[0])["id"]
    shown = json.loads(agent(workspace, "sessions", "show", conversation, "--json").stdout)
    users = [item for item in shown["items"] if item["kind"] == "user"]
    assert [item["turn"] for item in users] == [turn]
