"""`agent mcp add|list|rm` end to end: the real CLI (in this process; two tests in its own),
isolated XDG folders."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

from agent_cli import mcp_config
from tests.support.cli import agent, agent_process, err, out
from tests.support.mcp_servers import SERVER


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def one_sentence(result) -> bool:
    text = err(result).strip()
    return "Traceback" not in text and len(text.splitlines()) == 1


def test_add_list_rm(workspace: Path, tmp_path: Path):
    added = agent_process(
        workspace, "mcp", "add", "docs", "--", sys.executable, str(SERVER), "--name", "d"
    )
    assert added.returncode == 0, err(added)
    assert "Added the MCP server 'docs'" in out(added)
    port = free_port()  # nothing listens there
    web = agent_process(
        workspace, "mcp", "add", "web", "--url", f"http://127.0.0.1:{port}/mcp",
        "--header", "Authorization=Bearer ${WEB_TOKEN}", "--timeout-ms", "5000",
    )  # fmt: skip
    assert web.returncode == 0, err(web)
    servers = json.loads(mcp_config.user_file().read_text())["mcpServers"]
    assert servers == {
        "docs": {"command": sys.executable, "args": [str(SERVER), "--name", "d"]},
        "web": {
            "url": f"http://127.0.0.1:{port}/mcp",
            "headers": {"Authorization": "Bearer ${WEB_TOKEN}"},
            "timeout_ms": 5000,
        },
    }

    # A workspace file nobody trusted yet: listed, never started.
    marker = tmp_path / "started.json"
    (workspace / ".agent").mkdir()
    entry = {"command": sys.executable, "args": [str(SERVER), "--pids", str(marker)]}
    (workspace / ".agent" / "mcp.json").write_text(json.dumps({"mcpServers": {"local": entry}}))

    listed = agent_process(workspace, "mcp", "list")
    assert listed.returncode == 0, err(listed)
    text = out(listed)
    docs = next(line for line in text.splitlines() if line.startswith("docs"))
    assert "[user " in docs and "ok, 9 tools" in docs
    assert "    docs_echo" in text and "Say the text back." in text
    assert "A second line" not in text  # first lines of descriptions only
    assert "docs_do_thing_x" in text
    web_line = next(line for line in text.splitlines() if line.startswith("web"))
    assert "failed: " in web_line
    assert "local  [workspace" in text and "not trusted]  not started" in text
    assert not marker.exists()

    removed = agent_process(workspace, "mcp", "rm", "docs")
    assert removed.returncode == 0 and "Removed the MCP server 'docs'" in out(removed)
    assert list(json.loads(mcp_config.user_file().read_text())["mcpServers"]) == ["web"]
    again = agent_process(workspace, "mcp", "rm", "docs")
    assert again.returncode == 2 and one_sentence(again)
    assert "There is no MCP server 'docs'" in err(again)


def test_add_usage_errors_are_exit_2_with_one_sentence(workspace: Path):
    neither = agent(workspace, "mcp", "add", "x")
    assert neither.returncode == 2 and one_sentence(neither) and "--url" in err(neither)
    both = agent(workspace, "mcp", "add", "x", "--url", "http://h/mcp", "--", "prog")
    assert both.returncode == 2 and one_sentence(both)
    name = agent(workspace, "mcp", "add", "bad name", "--", "prog")
    assert name.returncode == 2 and one_sentence(name) and "name" in err(name)
    pair = agent(workspace, "mcp", "add", "x", "--url", "http://h/mcp", "--header", "novalue")
    assert pair.returncode == 2 and one_sentence(pair) and "KEY=VALUE" in err(pair)
    assert not mcp_config.user_file().exists()


def test_a_bad_file_is_exit_2_naming_it(workspace: Path):
    file = mcp_config.user_file()
    file.parent.mkdir(parents=True)
    file.write_text('{"mcpServers": {"a": {"command": 1}}}')
    result = agent(workspace, "mcp", "list")
    assert result.returncode == 2 and one_sentence(result)
    assert str(file) in err(result) and "'a'" in err(result)


def test_nothing_configured(workspace: Path):
    result = agent(workspace, "mcp")
    assert result.returncode == 0 and "No MCP servers are configured" in out(result)


def test_help_has_examples_and_never_loads_the_sdk(workspace: Path):
    for command in (["mcp"], ["mcp", "list"], ["mcp", "add"], ["mcp", "rm"]):
        shown = agent(workspace, *command, "--help")
        assert shown.returncode == 0 and "Examples:" in out(shown), command
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('SDK' if 'mcp' in sys.modules else 'no SDK'))\n"
        "sys.argv = ['agent', *sys.argv[1:]]\n"
        "from agent_cli.cli import main\n"
        "main()\n"
    )
    for command in (["--help"], ["mcp", "--help"], ["mcp", "add", "--help"]):
        import subprocess

        result = subprocess.run(
            [sys.executable, "-c", probe, *command], cwd=workspace, capture_output=True, text=True
        )
        assert result.stdout.strip().endswith("no SDK"), (command, result.stdout[-300:])


def test_agent_run_calls_an_mcp_tool_and_workspace_servers_need_trust(workspace: Path):
    from tests.support.fake_openai import FakeOpenAI, text, tool_calls

    assert (
        agent_process(workspace, "mcp", "add", "docs", "--", sys.executable, str(SERVER)).returncode
        == 0
    )
    untrusted = workspace / ".agent" / "mcp.json"
    untrusted.parent.mkdir()
    command = {"command": sys.executable, "args": [str(SERVER), "--name", "repo"]}
    untrusted.write_text(json.dumps({"mcpServers": {"repo": command}}))
    with FakeOpenAI() as fake:
        fake.add(tool_calls(("c1", "docs_echo", '{"text": "hello mcp"}')), text("Echoed."))
        result = agent_process(workspace, "run", "echo it", "--yes", fake=fake)
        assert result.returncode == 0, err(result)
        offered = [t["function"]["name"] for t in fake.requests[0]["tools"]]
        assert "docs_echo" in offered and not any(n.startswith("repo_") for n in offered)
        assert fake.requests[1]["messages"][-1]["content"] == "hello mcp"
        assert str(untrusted) in err(result)  # left out, with a notice naming the file

        fake.add(text("Only reading."))
        read_only = agent_process(workspace, "run", "look", fake=fake)  # no terminal: read-only
        assert read_only.returncode == 0
        assert "docs_echo" not in [t["function"]["name"] for t in fake.requests[2]["tools"]]


def add_server(name: str, *options: str) -> None:
    """The test server in the user's mcp.json, as `agent mcp add` writes it."""
    entry = {"command": sys.executable, "args": [str(SERVER), "--name", name, *options]}
    mcp_config.add_server(name, entry)


def test_servers_start_for_no_help_no_sessions_and_no_read_only_run(workspace: Path, tmp_path):
    from tests.support.fake_openai import FakeOpenAI, text

    marker = tmp_path / "started.json"
    add_server("docs", "--pids", str(marker))
    for command in (["--help"], ["run", "--help"], ["sessions"], ["skills", "list"]):
        result = agent(workspace, *command)
        assert result.returncode == 0, (command, err(result))
    with FakeOpenAI() as fake:
        fake.add(text("Only reading."))
        read_only = agent(workspace, "run", "look", fake=fake)  # no terminal: read-only
        assert read_only.returncode == 0, err(read_only)
        assert not any(t["function"]["name"].startswith("docs_") for t in fake.requests[0]["tools"])
    assert not marker.exists(), "an MCP server was started where none is needed"


def test_an_mcp_call_asks_in_ask_mode_and_an_allow_rule_lets_it_run(workspace: Path):
    from agent_cli import paths
    from tests.support.fake_openai import FakeOpenAI, text, tool_calls

    add_server("docs")
    with FakeOpenAI() as fake:
        # No terminal to ask on: the call is answered "no" at once, and the model reads why.
        fake.add(tool_calls(("c1", "docs_echo", '{"text": "hi"}')), text("Not allowed."))
        asked = agent(workspace, "run", "echo", "--mode", "ask", fake=fake)
        assert asked.returncode == 0, err(asked)
        refused = fake.requests[1]["messages"][-1]
        assert refused["role"] == "tool" and "no terminal to ask" in refused["content"]
        assert "docs_echo" in [t["function"]["name"] for t in fake.requests[0]["tools"]]
        assert "refused" in err(asked)

        # Allowed by name in the user's config: no question, the call runs.
        config = paths.config_dir() / "config.toml"
        config.write_text('[rules]\nallow = ["docs_echo"]\n')
        fake.add(tool_calls(("c2", "docs_echo", '{"text": "hi"}')), text("Echoed."))
        allowed = agent(workspace, "run", "echo", "--mode", "ask", fake=fake)
        assert allowed.returncode == 0, err(allowed)
        assert fake.requests[3]["messages"][-1]["content"] == "hi"


def test_list_warns_about_tools_left_out_and_variables_not_set(workspace: Path):
    add_server("x.y")
    mcp_config.add_server(
        "x_y",
        {
            "command": sys.executable,
            "args": [str(SERVER)],
            "env": {"TOKEN_FOR_TEST": "${AGENT_TEST_UNSET_VARIABLE}"},
            "deny": ["add"],
        },
    )
    listed = agent(workspace, "mcp", "list")
    assert listed.returncode == 0, err(listed)
    warnings = err(listed)
    assert "The MCP tool 'echo' of 'x_y' was left out: its name 'x_y_echo' is taken" in warnings
    assert "'add' of 'x_y'" not in warnings  # denied, so it never collides
    assert "AGENT_TEST_UNSET_VARIABLE not set" in warnings
    assert "ok, 0 tools" in next(
        line for line in out(listed).splitlines() if line.startswith("x_y ")
    )


def test_a_failed_server_is_said_once_in_the_listing(workspace: Path):
    mcp_config.add_server("gone", {"command": str(workspace / "no-such-program")})
    listed = agent(workspace, "mcp", "list")
    assert listed.returncode == 0
    assert "gone  [user" in out(listed) and "failed: the program" in out(listed)
    assert "was left out" not in err(listed)  # the line above says it; no second notice


def test_add_says_when_the_workspace_file_has_the_same_name(workspace: Path):
    (workspace / ".agent").mkdir()
    local = {"mcpServers": {"docs": {"command": "local-docs"}}}
    (workspace / ".agent" / "mcp.json").write_text(json.dumps(local))
    added = agent(workspace, "mcp", "add", "docs", "--", "user-docs")
    assert added.returncode == 0, err(added)
    assert ".agent/mcp.json also has a server 'docs'" in err(added)
    plain = agent(workspace, "mcp", "add", "other", "--", "user-docs")
    assert err(plain) == ""


def test_duplicate_server_names_in_a_file_are_exit_2_naming_the_line(workspace: Path):
    file = mcp_config.user_file()
    file.parent.mkdir(parents=True)
    file.write_text('{"mcpServers": {\n  "a": {"command": "x"},\n  "a": {"command": "y"}\n}}\n')
    for command in (["mcp", "list"], ["mcp", "add", "b", "--", "z"], ["mcp", "rm", "a"]):
        result = agent(workspace, *command)
        assert result.returncode == 2 and one_sentence(result), command
        assert f"{file}, line 3: 'a' is given twice" in err(result)
    assert file.read_text().count('"a"') == 2  # never rewritten
