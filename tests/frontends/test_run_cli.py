"""`agent run` end to end: the real CLI against the fake server, in this process (see
tests/support/cli.py); a few runs, and what only a process shows, in its own."""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

from agent_cli import paths
from agent_cli.backends.context import SHORTENED_CAP
from agent_cli.engine.store import RECOVERED_NOTICE
from tests.support.cli import TIMEOUT, agent, agent_process, err, out, saved
from tests.support.fake_openai import frames, http_error, raw, text, tool_calls


def test_answer_is_printed_and_exit_is_zero(fake, workspace):
    fake.add(text("Hello from the fake model."))
    result = agent_process(workspace, "run", "hi", fake=fake)
    assert result.returncode == 0, err(result)
    assert out(result) == "Hello from the fake model.\n"
    body = fake.requests[0]
    assert body["model"] == "m1"  # nothing configured: the server's first model
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][-1] == {"role": "user", "content": "hi"}


def test_model_flag_then_env_choose_the_model(fake, workspace):
    fake.add(text("a"), text("b"))
    agent(workspace, "run", "hi", "--model", "m2", fake=fake, env={"AGENT_MODEL": "env-m"})
    agent(workspace, "run", "hi", fake=fake, env={"AGENT_MODEL": "env-m"})
    assert [r["model"] for r in fake.requests] == ["m2", "env-m"]


def test_a_local_servers_window_is_asked_only_when_it_could_change_the_request(fake, workspace):
    fake.serve_props({"default_generation_settings": {"n_ctx": 4000}})
    fake.add(text("Hello."))
    assert agent(workspace, "run", "hi", fake=fake).returncode == 0
    assert "GET /props" not in fake.paths  # nothing could be shortened: the request went at once

    (workspace / "big.txt").write_text("word " * 4_000)
    fake.add(tool_calls(("c1", "read_file", '{"path": "big.txt"}')), text("Read it."))
    result = agent(workspace, "run", "read big.txt", fake=fake)
    assert result.returncode == 0, err(result)
    assert fake.paths.count("GET /props") == 1
    # The 4,000-token window the server runs with, not the 128k default: the result is shortened.
    sent = fake.requests[-1]["messages"][-1]
    assert sent["role"] == "tool" and len(sent["content"]) < SHORTENED_CAP + 300
    assert "shortened" in err(result)


def test_the_system_prompt_has_agents_md_first_8_kib_and_is_the_same_every_round(fake, workspace):
    rules = "".join(f"rule {n:05d}\n" for n in range(1_000))  # 11 bytes a line, 11 KB
    (workspace / "AGENTS.md").write_text(rules)
    fake.add(tool_calls(("c1", "get_info", "{}")), text("Done."))
    result = agent(workspace, "run", "where?", "--mode", "read-only", fake=fake)
    assert result.returncode == 0, err(result)
    first, second = (r["messages"][0] for r in fake.requests)
    assert first["role"] == "system" and first == second  # byte-identical rounds
    prompt = first["content"]
    head = rules[: 8 * 1024]
    assert head.rstrip() in prompt and rules[8 * 1024 :].strip()[:11] not in prompt
    rest = prompt.replace(head.rstrip(), "")
    assert len(rest) < 4_000
    assert str(workspace) in rest and "read-only" in rest
    assert time.strftime("%Y-%m-%d") in rest and platform.system() in rest


def test_no_provider_is_exit_2_with_one_sentence(workspace):
    result = agent_process(workspace, "run", "hi")
    assert result.returncode == 2
    assert "OPENAI_BASE_URL" in err(result)
    assert "Traceback" not in err(result) and len(err(result).strip().splitlines()) == 1


def test_bad_config_file_is_exit_2_naming_it(fake, workspace):
    config = workspace / ".agent" / "config.toml"
    config.parent.mkdir()
    config.write_text("max_rounds = 'x'\n")
    result = agent(workspace, "run", "hi", fake=fake)
    assert result.returncode == 2
    assert str(config) in err(result) and "line 1" in err(result)
    assert "Traceback" not in err(result)


def test_output_json_is_one_object(fake, workspace):
    fake.add(text("The answer."))
    result = agent(workspace, "run", "q", "--output", "json", fake=fake)
    assert result.returncode == 0
    data = json.loads(out(result))
    assert set(data) == {"conversation", "answer", "items", "usage", "rounds", "stopped_reason"}
    assert data["answer"] == "The answer." and data["stopped_reason"] == "answered"
    assert data["rounds"] == 1 and data["usage"]["input_tokens"] == 10
    assert [i["kind"] for i in data["items"]] == ["user", "assistant"]


def test_output_stream_json_is_events_then_result(fake, workspace):
    fake.add(tool_calls(("c1", "get_info", "{}")), text("Done here."))
    result = agent(workspace, "run", "where?", "--output", "stream-json", fake=fake)
    assert result.returncode == 0, err(result)
    lines = [json.loads(line) for line in out(result).splitlines()]
    types = [line["type"] for line in lines]
    # run_started comes first, before the run's first item (the prompt): a reader may
    # start a fresh view on it.
    assert types[:2] == ["run_started", "item_added"] and types[-1] == "result"
    assert lines[1]["item"]["kind"] == "user" and lines[1]["item"]["text"] == "where?"
    assert types[-2] == "run_finished" and lines[-2]["reason"] == "answered"
    assert types.count("run_started") == 1 and "usage" in types
    deltas = "".join(line.get("text", "") for line in lines if line["type"] == "delta")
    assert deltas == "Done here."
    updates = [line["item"] for line in lines if line["type"] == "item_updated"]
    tools = [item for item in updates if item["kind"] == "tool"]
    assert tools[-1]["state"] == "done" and tools[-1]["title"] == "Get workspace info"
    assert lines[-1]["answer"] == "Done here." and lines[-1]["rounds"] == 2


def test_piped_stdin_is_appended_as_a_fenced_block(fake, workspace):
    fake.add(text("ok"))
    agent_process(workspace, "run", "why does this fail?", fake=fake, stdin="Error: ```boom```\n")
    content = fake.requests[0]["messages"][-1]["content"]
    assert content.startswith("why does this fail?\n\n````\nError: ```boom```\n````")


def test_whole_prompt_from_stdin_both_ways(fake, workspace):
    fake.add(text("one"), text("two"))
    assert agent(workspace, "run", fake=fake, stdin="from a pipe\n").returncode == 0
    assert agent(workspace, "run", "-", fake=fake, stdin="from a dash\n").returncode == 0
    assert [r["messages"][-1]["content"] for r in fake.requests] == ["from a pipe", "from a dash"]


def test_large_stdin_is_capped_with_a_notice(fake, workspace):
    fake.add(text("ok"))
    big = "x" * (300 * 1024)
    result = agent_process(workspace, "run", "summarise", fake=fake, stdin=big)
    assert result.returncode == 0
    assert "only the first 262,144 bytes" in err(result)
    assert len(fake.requests[0]["messages"][-1]["content"]) < 270 * 1024


def test_no_prompt_at_all_is_a_usage_error(fake, workspace):
    result = agent(workspace, "run", fake=fake, stdin=" \n")
    assert result.returncode == 2 and "stdin was empty" in err(result)
    assert len(err(result).strip().splitlines()) == 1 and fake.requests == []


def test_no_prompt_and_a_terminal_on_stdin_is_a_usage_error(fake, workspace):
    import pty

    leader, follower = pty.openpty()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "agent_cli", "run"],
            cwd=workspace,
            env=dict(os.environ, OPENAI_BASE_URL=fake.base_url),
            stdin=follower,
            capture_output=True,
            timeout=TIMEOUT,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert result.returncode == 2 and "Give a request" in err(result), err(result)
    assert fake.requests == []


def test_model_from_the_config_file_yields_to_the_environment(fake, workspace):
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('model = "cfg-m"\n')
    fake.add(text("a"), text("b"), text("c"))
    agent(workspace, "run", "hi", fake=fake)
    agent(workspace, "run", "hi", fake=fake, env={"AGENT_MODEL": "env-m"})
    agent(workspace, "run", "hi", "--model", "flag-m", fake=fake, env={"AGENT_MODEL": "env-m"})
    assert [r["model"] for r in fake.requests] == ["cfg-m", "env-m", "flag-m"]


def test_continue_and_resume_carry_the_history(fake, workspace):
    fake.add(text("first answer"), text("second answer"), text("third"))
    first = agent_process(workspace, "run", "one", "--output", "json", fake=fake)
    conversation = json.loads(out(first))["conversation"]
    agent_process(workspace, "run", "two", "--continue", fake=fake)
    agent_process(workspace, "run", "three", "--resume", conversation[:17], fake=fake)
    contents = [m["content"] for m in fake.requests[2]["messages"][1:]]
    assert contents == ["one", "first answer", "two", "second answer", "three"]
    assert len(saved()) == 1 and saved()[0]["title"] == "one"


def test_continue_takes_the_conversation_used_last_not_the_one_made_last(fake, workspace):
    fake.add(text("a"), text("b"), text("a again"), text("which"))
    older = json.loads(out(agent(workspace, "run", "A", "-o", "json", fake=fake)))
    agent(workspace, "run", "B", fake=fake)
    agent(workspace, "run", "A again", "--resume", older["conversation"], fake=fake)
    result = agent(workspace, "run", "which?", "--continue", "-o", "json", fake=fake)
    assert json.loads(out(result))["conversation"] == older["conversation"]
    sent = [m["content"] for m in fake.requests[-1]["messages"][1:]]
    assert sent == ["A", "a", "A again", "a again", "which?"]


def test_continue_and_resume_together_is_a_usage_error(fake, workspace):
    result = agent(workspace, "run", "x", "--continue", "--resume", "abc", fake=fake)
    assert result.returncode == 2 and fake.requests == []
    assert err(result) == "agent: Give --continue or --resume ID, not both.\n"


def test_an_unknown_resume_id_is_a_usage_error(fake, workspace):
    result = agent(workspace, "run", "x", "--resume", "nope", fake=fake)
    assert result.returncode == 2 and fake.requests == []
    assert err(result).strip().splitlines() == [
        "agent: No conversation 'nope' — list them with `agent sessions`."
    ]


def test_a_conversation_another_live_process_runs_is_not_run_twice(fake, workspace):
    fake.add(text("first"), text("after"))
    first = json.loads(out(agent(workspace, "run", "one", "-o", "json", fake=fake)))
    log = paths.conversations_dir() / f"{first['conversation']}.jsonl"
    file = log.with_suffix(".json")  # stored whole, as before the log: it loads the same
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        [stored] = saved()
        log.unlink()
        stored.update(state="running", pid=other.pid, updated=time.time())
        file.write_text(json.dumps(stored))
        busy = agent(workspace, "run", "two", "--continue", fake=fake)
        assert busy.returncode == 2, err(busy)
        assert f"being run by another agent (process {other.pid})" in err(busy)
        assert len(fake.requests) == 1 and json.loads(file.read_text()) == stored
    finally:
        other.kill()
        other.wait()
    # Its process gone, the run it was doing reads as ended, and the conversation goes on.
    after = agent(workspace, "run", "two", "--continue", fake=fake)
    assert after.returncode == 0, err(after)
    (conversation,) = saved()
    assert conversation["state"] == "idle" and conversation["pid"] == 0
    kinds = [i["kind"] for i in conversation["items"]]
    assert kinds == ["user", "assistant", "notice", "user", "assistant"]
    assert conversation["items"][2]["text"] == RECOVERED_NOTICE


def test_continue_with_nothing_to_continue_is_a_usage_error(fake, workspace):
    result = agent(workspace, "run", "x", "--continue", fake=fake)
    assert result.returncode == 2 and "no earlier conversation" in err(result)


def test_no_save_stores_nothing(fake, workspace):
    fake.add(text("ok"))
    assert agent(workspace, "run", "hi", "--no-save", fake=fake).returncode == 0
    assert saved() == []


def test_round_limit_is_exit_1_with_a_notice(fake, workspace):
    fake.add(tool_calls(("c1", "get_info", "{}")))
    result = agent(workspace, "run", "x", "--max-rounds", "1", fake=fake)
    assert result.returncode == 1
    assert "1 rounds" in err(result) and "• Get workspace info" in err(result)


def test_quiet_prints_only_the_answer(fake, workspace):
    fake.add(tool_calls(("c1", "get_info", "{}")), text("fine"))
    result = agent(workspace, "run", "x", "--quiet", fake=fake)
    assert out(result) == "fine\n" and err(result) == ""


def test_quiet_still_says_once_why_a_run_failed(fake, workspace):
    fake.add(http_error(400, "model 'zzz' not found"))
    failed = agent(workspace, "run", "x", "--quiet", fake=fake)
    assert failed.returncode == 1 and out(failed) == ""
    (line,) = err(failed).strip().splitlines()
    assert "model 'zzz' not found" in line

    fake.add(tool_calls(("c1", "get_info", "{}")))
    limited = agent(workspace, "run", "x", "--quiet", "--max-rounds", "1", fake=fake)
    assert limited.returncode == 1
    assert err(limited).strip().splitlines() == [
        "agent: Stopped after 1 rounds, the limit for one message. "
        "Send another message to let it go on."
    ]


def test_server_error_message_is_shown_without_traceback(fake, workspace):
    fake.add(http_error(400, "model 'zzz' not found"))
    result = agent(workspace, "run", "x", fake=fake)
    assert result.returncode == 1
    assert "model 'zzz' not found" in err(result) and "Traceback" not in err(result)


def test_stream_dropping_mid_answer_keeps_what_arrived(fake, workspace):
    partial = frames(
        {"choices": [{"index": 0, "delta": {"content": "Half an "}}]},
        {"choices": [{"index": 0, "delta": {"content": "answer"}}]},
        done=False,
    )
    fake.add(raw(partial, drop=True))
    result = agent(workspace, "run", "x", fake=fake)
    assert result.returncode == 1
    assert out(result).startswith("Half an answer")
    (conversation,) = saved()
    assert conversation["state"] == "idle"
    assert conversation["items"][1]["text"] == "Half an answer"
    assert conversation["items"][-1]["level"] == "error"
    assert len(fake.requests) == 1  # a stream that produced output is never retried


def slow_count(fake, workspace: Path) -> subprocess.Popen:
    """`agent run count` in the background; the answer "w0 w1 ... w199 " comes slowly
    (40 bytes every 50 ms), so the run can be interrupted mid-answer."""
    words = [{"choices": [{"index": 0, "delta": {"content": f"w{i} "}}]} for i in range(200)]
    fake.add(raw(frames(*words), split=40, delay=0.05))
    return subprocess.Popen(
        [sys.executable, "-m", "agent_cli", "run", "count"],
        cwd=workspace,
        env=dict(os.environ, OPENAI_BASE_URL=fake.base_url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_sigint_stops_keeps_items_and_exits_130(fake, workspace):
    proc = slow_count(fake, workspace)
    try:
        assert proc.stdout.read(3) == b"w0 "  # the answer has started
        assert proc.stdout.read(3) == b"w1 "  # and gone on: what is kept has both
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr.decode()
    assert b"Traceback" not in stderr
    assert b"stopping" in stderr  # said at once, before the run has ended
    (conversation,) = saved()
    assert conversation["state"] == "idle"
    text_so_far = conversation["items"][1]["text"]
    assert text_so_far.startswith("w0 w1 ") and not text_so_far.startswith("w0 w1 w2 w3 w4 " * 40)
    assert conversation["items"][-1]["text"] == "Stopped."


def test_a_reader_that_goes_away_stops_the_run_which_is_saved(fake, workspace):
    """`agent run ... | head`: no traceback or "unexpected error", and the answer so far kept."""
    proc = slow_count(fake, workspace)
    try:
        assert proc.stdout.read(3) == b"w0 "
        proc.stdout.close()  # as `head -c 3` does
        stderr = proc.stderr.read()
        proc.wait(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == 1
    assert b"Traceback" not in stderr and b"unexpected" not in stderr
    assert b"reader went away" in stderr
    (conversation,) = saved()
    assert conversation["state"] == "idle"
    assert conversation["items"][1]["text"].startswith("w0 w1 ")
    assert not conversation["items"][1]["text"].startswith("w0 w1 w2 w3 w4 " * 40)  # stopped early
    fake.add(text("Going on."))
    resumed = agent(workspace, "run", "--continue", "go on", fake=fake)
    assert resumed.returncode == 0 and out(resumed) == "Going on.\n"


def test_debug_writes_a_log_and_says_where(fake, workspace):
    fake.add(text("ok"))
    result = agent(workspace, "run", "hi", "--debug", fake=fake)
    assert result.returncode == 0
    line = next(x for x in err(result).splitlines() if "debug log" in x)
    log = Path(line.rsplit(" ", 1)[1])
    assert log.is_file() and log.is_relative_to(paths.log_dir())


def test_version_and_help(workspace):
    version = agent_process(workspace, "--version")
    assert version.returncode == 0 and out(version).startswith("agent ")
    help_text = agent_process(workspace, "run", "--help")
    assert help_text.returncode == 0 and "--output" in out(help_text)
    typo = agent_process(workspace, "rnu")
    assert typo.returncode == 2


def test_continue_with_compact_summarises_older_turns(fake, workspace):
    fake.add(text("a1"), text("a2"), text("a3"), text("We did one, two, three."), text("a4"))
    agent(workspace, "run", "one", fake=fake)
    agent(workspace, "run", "two", "--continue", fake=fake)
    agent(workspace, "run", "three", "--continue", fake=fake)
    compacted = agent(workspace, "run", "--continue", "--compact", fake=fake)
    assert compacted.returncode == 0, err(compacted)
    assert "Compacted" in err(compacted)
    assert fake.requests[3].get("tools") is None  # the summary request offers no tools
    agent(workspace, "run", "four", "--continue", fake=fake)
    contents = [m["content"] for m in fake.requests[4]["messages"][1:]]
    assert "We did one, two, three." in contents[0]
    assert contents[1:] == ["two", "a2", "three", "a3", "four"]
    (conversation,) = saved()
    assert [i["kind"] for i in conversation["items"]].count("summary") == 1
    assert conversation["items"][0]["text"] == "one"  # the original items are kept


def test_context_refusal_shortens_a_result_and_asks_again(fake, workspace):
    (workspace / "big.txt").write_text("line\n" * 5000)
    refusal = '{"error": {"code": "context_length_exceeded", "message": "too long"}}'
    fake.add(
        tool_calls(("c1", "read_file", '{"path": "big.txt"}')),
        http_error(400, "", body=refusal.encode()),
        text("Fits now."),
    )
    result = agent(workspace, "run", "read big.txt", fake=fake)
    assert result.returncode == 0, err(result)
    assert out(result) == "Fits now.\n"
    assert "shortened" in err(result)
    assert len(fake.requests[2]["messages"][-1]["content"]) < 2000
