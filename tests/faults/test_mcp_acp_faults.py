"""MCP servers and ACP agents that die, hang or write garbage, through the real `agent run`.

Issue #8, "Reliability under faults": each ends with a clear error result or
message, the right exit code, and the stored conversation intact and
resumable. The MCP server is the tests' SDK server (tests/support/mcp_servers,
`--faults` adds `garbage` and `freeze`) configured in the user's mcp.json; the
ACP agent is the scripted fixture (tests/support/acp_agent.py) added as
`[agents.fixture]`; the model is the loopback fake OpenAI server. What the
backends do with each fault in isolation is tested in tests/tools/test_mcp.py
and tests/backends/test_external.py; here it is the whole run a person sees.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_cli import mcp_config
from agent_cli.engine.session import STOPPED_RESULT
from tests.support.acp_agent import add_to_user_config, records
from tests.support.cli import TIMEOUT, agent, agent_process, err, out, saved
from tests.support.fake_openai import FakeOpenAI, text, tool_calls
from tests.support.mcp_servers import SERVER
from tests.support.processes import gone

NO_LIMIT = 3_600_000  # an MCP entry's timeout_ms that no test waits out

# ------------------------------------------------------------------ helpers


def add_mcp_server(name: str, *options: str, timeout_ms: int | None = None) -> None:
    """The test server in the user's mcp.json, as `agent mcp add` writes it."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(SERVER), *options]}
    if timeout_ms is not None:
        entry["timeout_ms"] = timeout_ms
    file = mcp_config.user_file()
    file.parent.mkdir(parents=True, exist_ok=True)
    servers = json.loads(file.read_text())["mcpServers"] if file.exists() else {}
    file.write_text(json.dumps({"mcpServers": {**servers, name: entry}}))


def tool_result(request: dict[str, Any], call_id: str) -> str:
    """What the model read as the result of `call_id` in a request."""
    for message in request["messages"]:
        if message["role"] == "tool" and message["tool_call_id"] == call_id:
            return message["content"]
    raise AssertionError(f"no result for {call_id} in {request['messages']}")


def tool_items(conversation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {i["call_id"]: i for i in conversation["items"] if i["kind"] == "tool"}


def notices(conversation: dict[str, Any], level: str | None = None) -> list[str]:
    return [
        i["text"]
        for i in conversation["items"]
        if i["kind"] == "notice" and (level is None or i["level"] == level)
    ]


def clean(stderr: str) -> None:
    """No traceback, no library log line, nothing the server or agent wrote."""
    for noise in ("Traceback", "Error parsing", "Exception", "not JSON-RPC", "ERROR:"):
        assert noise not in stderr, stderr


def start_run(workspace: Path, *args: str, fake: FakeOpenAI | None = None) -> subprocess.Popen:
    """`agent run ...` in the background, to be interrupted as a person would."""
    environment = dict(os.environ)
    if fake is not None:
        environment["OPENAI_BASE_URL"] = fake.base_url
    return subprocess.Popen(
        [sys.executable, "-m", "agent_cli", "run", *args],
        cwd=workspace,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_until(condition: Any, what: str, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def interrupt(process: subprocess.Popen) -> tuple[str, float]:
    """SIGINT, as Ctrl-C: its stderr and how long it took to exit."""
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        _, stderr = process.communicate(timeout=TIMEOUT)
    finally:
        process.kill()
    return stderr.decode(), time.monotonic() - sent


def resumes(workspace: Path, fake: FakeOpenAI | None = None) -> dict[str, Any]:
    """`agent run --continue` answers, and the one stored conversation gets the new turn.

    Read-only (no terminal), so no MCP server is started again: only the store is tried."""
    if fake is not None:
        fake.add(text("Carrying on."))
    before = len(saved()[0]["items"])
    result = agent(workspace, "run", "--continue", "carry on", fake=fake)
    assert result.returncode == 0, err(result)
    clean(err(result))
    [conversation] = saved()
    assert len(conversation["items"]) > before and conversation["state"] == "idle"
    return conversation


# ---------------------------------------------------------------------- MCP


def test_an_mcp_server_dying_or_hanging_mid_call_is_an_error_result_and_started_again(
    workspace: Path, fake: FakeOpenAI
):
    """One run (each MCP run costs seconds of SDK imports): the server dies mid-call, the
    next call starts it again; that one hangs past `timeout_ms`, the next starts a third."""
    add_mcp_server("f", "--faults", timeout_ms=1000)
    fake.add(
        tool_calls(("c1", "f_whoami", "{}")),
        tool_calls(("c2", "f_crash", "{}")),  # exits with 3 in the middle of the call
        tool_calls(("c3", "f_whoami", "{}")),
        tool_calls(("c4", "f_freeze", "{}")),  # SIGSTOP: it answers nothing any more
        tool_calls(("c5", "f_whoami", "{}")),
        text("The server is back."),
    )
    result = agent(workspace, "run", "use the server", "--mode", "full", fake=fake)

    assert result.returncode == 0, err(result)
    assert out(result).endswith("The server is back.\n")
    clean(err(result))
    results = {f"c{n}": tool_result(fake.requests[n], f"c{n}") for n in range(1, 6)}
    first, second, third = (json.loads(results[c])["pid"] for c in ("c1", "c3", "c5"))
    assert results["c2"] == (
        "The MCP server 'f' stopped during the call (exit code 3); the call did not finish. "
        "It will be started again for the next call. Sent once more with the same idempotency "
        "key, it failed the same way."
    )
    assert results["c4"] == (
        "The MCP server 'f' did not answer within 1 s; the call ended. "
        "It does not answer at all now, so the next call starts it again."
    )
    assert len({first, second, third}) == 3
    assert gone(first) and gone(second)  # the stopped one was killed, not left behind
    assert gone(third)  # the run's end closed it

    [conversation] = saved()
    calls = tool_items(conversation)
    states = [calls[f"c{n}"]["state"] for n in range(1, 6)]
    assert states == ["done", "error", "done", "error", "done"]
    assert calls["c2"]["mcp"] == "f" and calls["c2"]["result"] == results["c2"]
    resumed = resumes(workspace, fake)
    assert tool_result(fake.requests[-1], "c4") == results["c4"]  # the history as it was
    assert resumed["id"] == conversation["id"]


def test_ctrl_c_during_a_hanging_mcp_call_exits_130_and_ends_the_server(
    workspace: Path, fake: FakeOpenAI, tmp_path: Path
):
    pids, naps = tmp_path / "pids.json", tmp_path / "naps"
    # Only the Ctrl+C ends the call: an hour's nap, and no timeout before it.
    add_mcp_server("f", "--pids", str(pids), "--child", "--naps", str(naps), timeout_ms=NO_LIMIT)
    fake.add(tool_calls(("c1", "f_nap", '{"seconds": 3600}')))
    process = start_run(workspace, "take a nap", "--mode", "full", fake=fake)
    wait_until(lambda: fake.requests and pids.exists(), "the model's call")
    wait_until(lambda: "child" in json.loads(pids.read_text()), "the server's child")
    wait_until(naps.exists, "the call to reach the server")

    stderr, took = interrupt(process)

    assert process.returncode == 130, stderr
    assert took < 10, took
    clean(stderr)
    started = json.loads(pids.read_text())
    assert gone(started["server"]) and gone(started["child"])  # its whole process group
    [conversation] = saved()
    assert conversation["state"] == "idle"
    napping = tool_items(conversation)["c1"]
    assert (napping["state"], napping["result"]) == ("error", STOPPED_RESULT)
    assert notices(conversation)[-1] == "Stopped."
    resumes(workspace, fake)
    assert tool_result(fake.requests[-1], "c1") == STOPPED_RESULT  # what the model reads


def test_garbage_on_an_mcp_servers_stdout_is_skipped_and_a_non_server_is_left_out(
    workspace: Path, fake: FakeOpenAI
):
    add_mcp_server("f", "--faults", "--garbage", timeout_ms=5000)  # junk before the handshake
    file = mcp_config.user_file()
    servers = json.loads(file.read_text())["mcpServers"]
    servers["chatty"] = {"command": "/bin/sh", "args": ["-c", "echo hello; echo oops >&2"]}
    file.write_text(json.dumps({"mcpServers": servers}))
    fake.add(
        tool_calls(("c1", "f_garbage", '{"lines": 3}')),  # junk, not UTF-8, mid-call
        tool_calls(("c2", "f_echo", '{"text": "still talking"}')),
        text("All fine."),
    )
    result = agent(workspace, "run", "use the server", "--mode", "full", fake=fake)

    assert result.returncode == 0, err(result)
    assert out(result).endswith("All fine.\n")
    assert tool_result(fake.requests[1], "c1") == "answered after the garbage"
    assert tool_result(fake.requests[2], "c2") == "still talking"
    clean(err(result))
    left_out = [line for line in err(result).splitlines() if "'chatty'" in line]
    assert len(left_out) == 1 and "was left out" in left_out[0]
    assert "its last output: oops" in left_out[0] and "agent mcp list" in left_out[0]
    offered = [t["function"]["name"] for t in fake.requests[0]["tools"]]
    assert "f_garbage" in offered and not any(n.startswith("chatty_") for n in offered)
    resumes(workspace, fake)


# ---------------------------------------------------------------------- ACP


def test_an_agent_dying_mid_prompt_is_exit_1_with_one_sentence_and_resumable(
    workspace: Path, tmp_path: Path
):
    folder = tmp_path / "agent"
    add_to_user_config(
        {
            "turns": [
                {"when": "crash", "steps": [
                    {"op": "text", "text": "About to"},
                    {"op": "crash", "code": 3, "stderr": "fatal: out of cheese"},
                ]},
                {"steps": [{"op": "text", "text": "Fine now."}]},
            ]
        },
        folder,
    )  # fmt: skip
    result = agent_process(workspace, "run", "--agent", "fixture", "crash now")

    assert result.returncode == 1, err(result)
    assert out(result).startswith("About to")  # what arrived was shown
    assert err(result) == (
        "agent: Fixture stopped unexpectedly (exit status 3): fatal: out of cheese — send a "
        "message to start it again; run with --debug to log all it wrote.\n"
    )
    [conversation] = saved()
    assert conversation["state"] == "idle"
    assert [i["text"] for i in conversation["items"] if i["kind"] == "assistant"] == ["About to"]
    assert notices(conversation, "error")[-1].startswith("Fixture stopped unexpectedly")
    crashed = records(folder, "prompt")[-1]["pid"]
    assert gone(crashed)

    resumed = resumes(workspace)
    prompt = records(folder, "prompt")[-1]
    assert prompt["pid"] != crashed  # a new process
    assert "User: crash now" in prompt["text"] and prompt["text"].endswith("carry on")
    assert resumed["items"][-1]["text"] == "Fine now."


def test_ctrl_c_stops_a_waiting_agent_with_130_and_its_process_group_ends(
    workspace: Path, tmp_path: Path
):
    folder = tmp_path / "agent"
    add_to_user_config(
        {
            "turns": [
                {"when": "wait", "steps": [
                    {"op": "spawn", "argv": ["sleep", "300"]},
                    {"op": "text", "text": "Working"},
                    {"op": "wait_cancel"},  # nothing more until told to stop
                ]},
                {"steps": [{"op": "text", "text": "Back again."}]},
            ]
        },
        folder,
    )  # fmt: skip
    process = start_run(workspace, "--agent", "fixture", "wait for me")
    assert process.stdout is not None and process.stdout.read(7) == b"Working"
    wait_until(lambda: records(folder, "spawned"), "the agent's child")

    stderr, took = interrupt(process)

    assert process.returncode == 130, stderr
    assert took < 8, took
    clean(stderr)
    assert records(folder, "cancel")  # asked to end its turn (session/cancel) first
    agent_pid = records(folder, "prompt")[-1]["pid"]
    assert gone(agent_pid) and gone(records(folder, "spawned")[-1]["child"])  # the whole group
    [conversation] = saved()
    assert conversation["state"] == "idle" and notices(conversation)[-1] == "Stopped."
    assert [i["text"] for i in conversation["items"] if i["kind"] == "assistant"] == ["Working"]

    assert resumes(workspace)["items"][-1]["text"] == "Back again."
    prompt = records(folder, "prompt")[-1]
    assert prompt["pid"] != agent_pid and "User: wait for me" in prompt["text"]


def test_an_agent_deaf_to_the_cancel_is_left_at_once_by_a_second_ctrl_c_and_its_group_ends(
    workspace: Path, tmp_path: Path
):
    """One Ctrl-C gives a hung agent CANCEL_GRACE (10 s) to end its turn (tested with a short
    grace in tests/backends/test_external.py); a person presses it again meanwhile."""
    folder = tmp_path / "agent"
    add_to_user_config(
        {
            "turns": [
                {"when": "stuck", "steps": [
                    {"op": "spawn", "argv": ["sleep", "300"]},
                    {"op": "text", "text": "Working"},
                    {"op": "wait_cancel", "ignore": True},  # deaf to session/cancel
                ]},
                {"steps": [{"op": "text", "text": "Back again."}]},
            ]
        },
        folder,
    )  # fmt: skip
    process = start_run(workspace, "--agent", "fixture", "stuck forever")
    assert process.stdout is not None and process.stdout.read(7) == b"Working"
    wait_until(lambda: records(folder, "spawned"), "the agent's child")
    process.send_signal(signal.SIGINT)
    wait_until(lambda: records(folder, "ignoring_cancel"), "the agent to ignore the cancel")

    stderr, took = interrupt(process)

    assert process.returncode == 130, stderr
    assert took < 5, took
    clean(stderr)
    assert gone(records(folder, "prompt")[-1]["pid"])
    assert gone(records(folder, "spawned")[-1]["child"])  # its whole process group
    [conversation] = saved()
    assert [i["text"] for i in conversation["items"] if i["kind"] == "assistant"] == ["Working"]
    assert resumes(workspace)["items"][-1]["text"] == "Back again."


def test_garbage_lines_from_an_agent_are_skipped(workspace: Path, tmp_path: Path):
    steps = [
        {"op": "text", "text": "Before, "},
        {"op": "garbage"},  # not even UTF-8
        {"op": "garbage", "line": "this is not JSON"},
        {"op": "garbage", "line": '{"jsonrpc": "2.0", "id": 999, "result": {}}'},  # unasked for
        {"op": "text", "text": "after."},
    ]
    add_to_user_config({"turns": [{"steps": steps}]}, tmp_path / "agent")
    result = agent(workspace, "run", "--agent", "fixture", "hi")
    assert result.returncode == 0, err(result)
    assert out(result) == "Before, after.\n"
    assert err(result) == ""  # nothing of it, and no library's log line, reaches the screen
    [conversation] = saved()
    assert conversation["items"][-1]["text"] == "Before, after."


def test_an_agent_writing_json_that_is_not_a_message_is_ended_with_one_sentence(
    workspace: Path, tmp_path: Path
):
    folder = tmp_path / "agent"
    steps = [{"op": "text", "text": "Before"}, {"op": "garbage", "line": "[1, 2, 3]"}]
    add_to_user_config(
        {"turns": [{"when": "hi", "steps": steps}, {"steps": [{"op": "text", "text": "Fine."}]}]},
        folder,
    )
    result = agent(workspace, "run", "--agent", "fixture", "hi")

    assert result.returncode == 1, err(result)
    assert err(result) == (
        "agent: Fixture wrote something that is not ACP on its output, so it was ended — send "
        "a message to start it again; run with --debug for details.\n"
    )
    assert gone(records(folder, "prompt")[-1]["pid"])
    [conversation] = saved()
    assert notices(conversation, "error")[-1].startswith("Fixture wrote something")
    assert resumes(workspace)["items"][-1]["text"] == "Fine."


async def test_a_program_that_writes_garbage_and_never_answers_is_left_out_quietly(
    workspace: Path, caplog: pytest.LogCaptureFixture
):
    """Not an MCP server at all: junk on stdout, then silence. The start timeout (10 s in
    `agent`; 1 s here) leaves it out with a notice and its group killed, and asyncio has no
    stray error to log about it (the SDK's own log of the junk goes to the debug log)."""
    import gc

    from agent_cli.tools.mcp import McpServers, ServerConfig

    marker = workspace / "pid"
    script = f"echo $$ > {marker}; echo 'hello, I am not a server'; exec sleep 60"
    config = ServerConfig("junk", command="/bin/sh", args=("-c", script))
    servers = McpServers([config], workspace, os.environ, start_timeout=1.0)
    try:
        tools, told = await servers.tools()
    finally:
        await servers.aclose()
    assert tools == []
    assert told == [
        "The MCP server 'junk' was left out: it did not start within 1 s. "
        "Check it with `agent mcp list`."
    ]
    assert gone(int(marker.read_text()))
    gc.collect()  # a start's error nobody retrieved would be logged by asyncio now
    assert not [r for r in caplog.records if r.name == "asyncio"], caplog.text
