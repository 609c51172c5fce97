"""Provider faults through the real CLI (issue 8): each ends with one clear sentence, the
right exit code, and the stored conversation intact and resumable.

`agent run` runs (in this process, once in its own) against a loopback fake server (or
an address where nothing can answer). Waits are shrunk through real settings: a `Retry-After` the
client honours, `read_timeout` in the project's config file. Format-specific parsing
is covered in tests/providers/; the Anthropic and Responses formats get one fault
each here, the one whose parsing differs most: a stream cut while a call is written.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agent_cli import paths
from tests.support import fake_anthropic, fake_responses
from tests.support.cli import TIMEOUT, agent, agent_process, err, out, saved
from tests.support.fake_openai import (
    LONG_TEXT_PIECE,
    FakeOpenAI,
    chunk,
    frames,
    http_error,
    long_text,
    raw,
    self_signed_certificate,
    text,
    tool_calls,
)
from tests.support.measured import agent_measured

MODEL = ("--model", "m1")  # skips GET /models, so every fault meets the streamed request
RETRIES = 3  # providers/retry.py DEFAULT_ATTEMPTS: the budget a storm must exhaust
RETRY_NOTICE = "trying again in"
PROMPT = "first question"
HUGE_ANSWER = 50 * 1024 * 1024  # characters: the 50 MB answer
PEAK_RSS_LIMIT = 400 * 1024 * 1024  # bytes: generous; a 50 MB answer must not cost gigabytes
CUT_CALL_ID = "call_cut_1"


# -- what every fault must end with ----------------------------------------------------


def error_line(result: subprocess.CompletedProcess, exit_code: int = 1) -> str:
    """The run's one error sentence, after checking the exit code and that stderr holds
    nothing else but retry notices and tool lines."""
    stderr = err(result)
    assert result.returncode == exit_code, stderr
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    errors = [ln for ln in lines if ln.startswith("agent: ") and RETRY_NOTICE not in ln]
    others = [ln for ln in lines if not ln.startswith(("agent: ", "✗ ", "• "))]
    assert len(errors) == 1 and others == [], f"not one sentence about the failure: {stderr}"
    (line,) = errors
    assert line.count(" — ") == 1, line  # what happened — what to do
    return line


def retries_announced(result: subprocess.CompletedProcess) -> int:
    return err(result).count(RETRY_NOTICE)


def stored_after_failure(message: str) -> dict[str, Any]:
    """The one stored conversation: idle, the prompt kept, the error as its last notice."""
    (conversation,) = saved()
    assert conversation["state"] == "idle"
    first = conversation["items"][0]
    assert first["kind"] == "user" and first["text"] == PROMPT
    last = conversation["items"][-1]
    assert last["kind"] == "notice" and last["level"] == "error"
    assert last["text"] in message
    return conversation


def resumes(workspace: Path, fake: FakeOpenAI, env: dict[str, str] | None = None) -> dict[str, Any]:
    """`agent run --continue` against a healthy server carries the earlier prompt on;
    returns the request it sent."""
    fake.add(text("Back on track."))
    before = len(saved()[0]["items"])
    result = agent(workspace, "run", "--continue", "go on", *MODEL, fake=fake, env=env)
    assert result.returncode == 0, err(result)
    assert out(result).endswith("Back on track.\n")
    sent = fake.requests[-1]
    assert {"role": "user", "content": PROMPT} in sent["messages"]
    (conversation,) = saved()
    assert len(conversation["items"]) > before and conversation["state"] == "idle"
    return sent


def run_json(workspace: Path, fake: FakeOpenAI | None, **kwargs: Any) -> dict[str, Any]:
    """`agent run --output json`: exit 1 and one JSON object saying why, on stdout."""
    result = agent(workspace, "run", PROMPT, *MODEL, "--output", "json", fake=fake, **kwargs)
    line = error_line(result)
    data = json.loads(out(result))
    assert data["stopped_reason"] == "error"
    assert line == f"agent: {data['error']}"
    assert data["items"][-1]["level"] == "error"
    return data


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def short_read_timeout(workspace: Path, seconds: float = 1) -> None:
    config = workspace / ".agent" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(f"read_timeout = {seconds}\n")


# -- cannot connect ----------------------------------------------------------------------


def test_connection_refused_is_retried_then_says_to_start_the_server(fake, workspace):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    result = agent_process(workspace, "run", PROMPT, *MODEL, env={"OPENAI_BASE_URL": dead})
    line = error_line(result)
    assert retries_announced(result) == RETRIES
    assert f"No server answers at {dead.removesuffix('/v1')}" in line and "start" in line
    stored_after_failure(line)
    resumes(workspace, fake)


def test_a_host_name_that_does_not_resolve_is_named(fake, workspace):
    dead = "http://no-such-host.invalid/v1"
    result = agent(workspace, "run", PROMPT, *MODEL, env={"OPENAI_BASE_URL": dead})
    line = error_line(result)
    assert "Could not find the host no-such-host.invalid" in line
    assert "check the base URL" in line
    stored_after_failure(line)
    resumes(workspace, fake)


def test_an_untrusted_certificate_fails_at_once_and_trusting_it_resumes(tmp_path, workspace):
    certificate = self_signed_certificate(tmp_path)
    if certificate is None:
        pytest.skip("neither the cryptography package nor openssl is here to make a certificate")
    with FakeOpenAI(models=["m1"], certificate=certificate) as secure:
        result = agent(workspace, "run", PROMPT, *MODEL, fake=secure)
        line = error_line(result)
        assert "certificate" in line and "self-signed certificate" in line
        assert "SSL_CERT_FILE" in line
        assert retries_announced(result) == 0  # a certificate does not change on a retry
        assert secure.tls_refused >= 1 and secure.requests == []  # TLS failed, for real
        stored_after_failure(line)
        resumes(workspace, secure, env={"SSL_CERT_FILE": str(certificate[0])})


# -- the server answers, but not with an answer -----------------------------------------------


def test_a_429_storm_beyond_the_retry_budget_says_it_is_rate_limited(fake, workspace):
    fake.add(*[http_error(429, "Rate limit reached", retry_after=0.05)] * (RETRIES + 1))
    result = agent(workspace, "run", PROMPT, *MODEL, fake=fake)
    line = error_line(result)
    assert retries_announced(result) == RETRIES and len(fake.requests) == RETRIES + 1
    # Retry-After honoured each time, not the default backoff (0.25 s at the very least).
    assert err(result).count(f"{RETRY_NOTICE} 0.1 s (retry") == RETRIES, err(result)
    assert "answered 429: Rate limit reached" in line and "rate limiting" in line
    stored_after_failure(line)
    resumes(workspace, fake)


def test_500s_beyond_the_retry_budget_in_json_output(fake, workspace):
    fake.add(*[http_error(500, "internal failure")] * (RETRIES + 1))
    data = run_json(workspace, fake)
    assert "answered 500: internal failure" in data["error"]
    assert "try again later" in data["error"]
    assert data["answer"] == "" and len(fake.requests) == RETRIES + 1
    stored_after_failure(data["error"])
    resumes(workspace, fake)


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_200_with_an_html_page_is_not_retried(fake, workspace, output):
    page = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>...</body></html>"
    fake.add(raw(page, content_type="text/html; charset=utf-8"))
    if output == "json":
        line = run_json(workspace, fake)["error"]
    else:
        line = error_line(agent(workspace, "run", PROMPT, *MODEL, fake=fake))
    assert "answered with an HTML page" in line and "check the base URL" in line
    assert len(fake.requests) == 1  # another try would get the same page
    stored_after_failure(line)
    if output == "text":
        resumes(workspace, fake)


# -- the stream breaks -------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_stream_that_stalls_past_the_read_timeout_keeps_what_arrived(fake, workspace, output):
    short_read_timeout(workspace)
    half = frames(chunk({"role": "assistant", "content": "Half an answer"}), done=False)
    fake.add(raw(half, stall=TIMEOUT))  # silent far longer than the test may run
    started = time.monotonic()
    if output == "json":
        data = run_json(workspace, fake)
        line = data["error"]
        assert data["answer"] == "Half an answer"
    else:
        result = agent(workspace, "run", PROMPT, *MODEL, fake=fake)
        line = error_line(result)
        assert out(result).startswith("Half an answer")
    assert time.monotonic() - started < TIMEOUT / 2  # the idle timeout ended it, not the server
    assert "nothing arrived for 1 s" in line and "incomplete" in line
    assert len(fake.requests) == 1  # output had started: a retry would show another answer
    conversation = stored_after_failure(line)
    assert conversation["items"][1]["text"] == "Half an answer"
    if output == "text":
        resumes(workspace, fake)


def cut_openai_call() -> bytes:
    """A write_file call whose arguments stop half way, with no end to the stream."""
    whole = tool_calls((CUT_CALL_ID, "write_file", '{"path": "notes.txt", "content": "half"}'))
    return whole.body[: whole.body.index(b"half")]


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_stream_dropped_while_a_call_is_written_never_runs_the_call(fake, workspace, output):
    fake.add(raw(cut_openai_call(), drop=True))
    args = (PROMPT, *MODEL, "--yes")  # the call would run without asking, were it whole
    if output == "json":
        line = run_json(workspace, fake)["error"]
    else:
        line = error_line(agent(workspace, "run", *args, fake=fake))
    assert "broke after the answer had started" in line and "incomplete" in line
    assert not (workspace / "notes.txt").exists()
    assert len(fake.requests) == 1
    conversation = stored_after_failure(line)
    (card,) = [i for i in conversation["items"] if i["kind"] == "tool"]
    assert card["state"] == "error" and card["tool"] == "write_file"
    if output == "text":
        sent = resumes(workspace, fake)
        assert no_call_without_its_result(sent)


def no_call_without_its_result(request: dict[str, Any]) -> bool:
    """A resumed request may leave the cut call out, or carry it with a result; a call
    alone is one every API refuses (a call id appears in the call and in its result)."""
    return json.dumps(request).count(CUT_CALL_ID) != 1


def cut_stream(body: bytes, event: bytes, kept: int) -> bytes:
    """`body` up to its `kept + 1`-th `event` line: the stream as far as it got."""
    start = -1
    for _ in range(kept + 1):
        start = body.index(b"event: " + event + b"\n", start + 1)
    return body[:start]


def configure_provider(kind: str, base_url: str) -> None:
    """The user's config file naming a provider of this wire format (providers live there)."""
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    table = f'provider = "fake"\n\n[providers.fake]\nkind = "{kind}"\nbase_url = "{base_url}"\n'
    config.write_text(table)


@pytest.mark.parametrize("wire", ["anthropic", "openai-responses"])
def test_other_formats_dropped_while_a_call_is_written_resume_cleanly(workspace, wire):
    support = fake_anthropic if wire == "anthropic" else fake_responses
    server_class = support.FakeAnthropic if wire == "anthropic" else support.FakeResponses
    delta = b"content_block_delta"
    if wire == "openai-responses":
        delta = b"response.function_call_arguments.delta"
    whole = support.tool_calls(
        (CUT_CALL_ID, "write_file", '{"path": "notes.txt", "content": "some text"}')
    )
    with server_class(models=["m1"]) as server:
        configure_provider(wire, server.base_url)
        server.add(support.raw(cut_stream(whole.body, delta, kept=2), drop=True))
        keys = {"ANTHROPIC_API_KEY": "test-key", "OPENAI_API_KEY": "test-key"}
        line = error_line(agent(workspace, "run", PROMPT, *MODEL, "--yes", env=keys))
        assert "broke after the answer had started" in line
        assert not (workspace / "notes.txt").exists()
        stored_after_failure(line)
        server.add(support.text("Back on track."))
        result = agent(workspace, "run", "--continue", "go on", *MODEL, env=keys)
        assert result.returncode == 0, err(result)
        assert out(result) == "Back on track.\n"
        assert PROMPT in json.dumps(server.requests[-1])
        assert no_call_without_its_result(server.requests[-1])


# -- what arrives is not what was expected -------------------------------------------------


@pytest.mark.parametrize("output", ["text", "json"])
def test_invalid_utf8_in_a_stream_becomes_replacement_characters(fake, workspace, output):
    good = "naïve café €5 "
    marker = "\x00"
    body = frames(chunk({"content": good + marker + " done"}))
    # An invalid byte, a lone continuation byte and a truncated three-byte sequence,
    # sent a few bytes at a time so characters also straddle reads.
    body = body.replace(json.dumps(marker)[1:-1].encode(), b"\xff\x80\xe2\x82")
    fake.add(raw(body, split=3))
    result = agent(workspace, "run", PROMPT, *MODEL, "--output", output, fake=fake)
    assert result.returncode == 0, err(result)
    assert "Traceback" not in err(result)
    answer = json.loads(out(result))["answer"] if output == "json" else out(result)
    assert answer.startswith(good) and answer.rstrip("\n").endswith(" done")
    assert "\ufffd" in answer and not any("\udc80" <= ch <= "\udcff" for ch in answer)
    (conversation,) = saved()
    assert conversation["items"][1]["text"] == answer.rstrip("\n")
    if output == "text":
        resumes(workspace, fake)


def run_measured(workspace: Path, fake: FakeOpenAI, folder: Path) -> tuple[int, int, str]:
    """`agent run` with its output to `folder/stdout`: its exit code, its own peak RSS in
    bytes (see tests/support/measured.py), and its stderr."""
    measured = agent_measured(workspace, "run", PROMPT, *MODEL, fake=fake)
    (folder / "stdout").write_bytes(measured.result.stdout)
    peak = int(measured.peak_rss_mib * 1024 * 1024)
    return measured.result.returncode, peak, measured.result.stderr.decode()


def test_a_50_mb_answer_arrives_whole_in_bounded_memory(fake, workspace, tmp_path):
    fake.add(long_text(HUGE_ANSWER))
    exit_code, peak, stderr = run_measured(workspace, fake, tmp_path)
    assert exit_code == 0 and stderr == "", stderr
    assert peak < PEAK_RSS_LIMIT, f"peak RSS {peak / 2**20:.0f} MB for a 50 MB answer"
    expected = LONG_TEXT_PIECE * (HUGE_ANSWER // len(LONG_TEXT_PIECE))
    assert (tmp_path / "stdout").read_text() == expected + "\n"  # every byte, in order
    (conversation,) = saved()
    assert conversation["items"][1]["text"] == expected
    # Going on loads it, and says plainly that it no longer fits the model (and, as there is
    # no older turn to summarise, not to try /compact).
    result = agent(workspace, "run", "--continue", "go on", *MODEL, fake=fake)
    line = error_line(result)
    assert "no longer fits" in line and "new conversation" in line and "/compact" not in line
    assert len(saved()[0]["items"]) > 2
