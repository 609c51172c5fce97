"""`agent run` with tools, end to end: modes, refusals, timeouts, undo, and the inline card."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests.support.cli import agent, agent_process, err, out
from tests.support.fake_openai import FakeOpenAI, text, tool_calls


def call(name: str, **args: object) -> tuple[str, str, str]:
    return (f"call_{name}", name, json.dumps(args))


def tool_result(fake: FakeOpenAI, request: int = 1) -> str:
    return fake.requests[request]["messages"][-1]["content"]


def offered(fake: FakeOpenAI, request: int = 0) -> list[str]:
    return [t["function"]["name"] for t in fake.requests[request].get("tools", [])]


def test_read_file_result_reaches_the_model(fake, workspace):
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    fake.add(tool_calls(call("read_file", path="notes.txt")), text("It says alpha."))
    result = agent(workspace, "run", "read notes", fake=fake)
    assert result.returncode == 0, err(result)
    assert "alpha\nbeta" in tool_result(fake)
    assert "• Read notes.txt" in err(result)


def test_an_escape_is_refused_and_the_model_reads_why(fake, workspace):
    (workspace.parent / "secret.txt").write_text("top secret")
    fake.add(tool_calls(call("read_file", path="../secret.txt")), text("Cannot."))
    result = agent(workspace, "run", "read it", fake=fake)
    assert result.returncode == 0
    told = tool_result(fake)
    assert "outside the workspace" in told and "top secret" not in told


def test_write_and_edit_in_full_mode(fake, workspace):
    fake.add(
        tool_calls(call("write_file", path="src/app.py", content="print('hi')\n")),
        tool_calls(
            call("edit_file", path="src/app.py", edits=[{"old_text": "hi", "new_text": "bye"}])
        ),
        text("Done."),
    )
    result = agent_process(workspace, "run", "make it", "--yes", fake=fake)
    assert result.returncode == 0, err(result)
    assert (workspace / "src" / "app.py").read_text() == "print('bye')\n"
    assert "-print('hi')" in tool_result(fake, 2)


def test_read_only_is_the_default_without_a_terminal(fake, workspace):
    fake.add(tool_calls(call("write_file", path="a.txt", content="x")), text("ok"))
    result = agent(workspace, "run", "write", fake=fake)
    assert result.returncode == 0
    assert "write_file" not in offered(fake) and "read_file" in offered(fake)
    assert "exec_shell_command" in offered(fake)  # read-only commands still run
    assert not (workspace / "a.txt").exists()
    assert "read-only" in tool_result(fake)


def test_ask_without_a_terminal_refuses_at_once_and_counts(fake, workspace):
    fake.add(
        tool_calls(
            call("write_file", path="a.txt", content="x"),
            call("exec_shell_command", command="touch b.txt"),
        ),
        text("ok"),
    )
    result = agent(workspace, "run", "change", "--mode", "ask", fake=fake)
    assert result.returncode == 0
    assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
    assert "2 change(s) were refused" in err(result)
    assert "no terminal" in tool_result(fake)


def test_command_timeout_kills_the_whole_group(fake, workspace):
    command = "sleep 300 & echo $! > child.pid; sleep 300"
    fake.add(tool_calls(call("exec_shell_command", command=command, timeout=1)), text("ok"))
    started = time.monotonic()
    # Unsandboxed: the pid it writes is the host's (the sandboxed case: tests/sandbox).
    result = agent(workspace, "run", "wait", "--yes", "--sandbox", "off", fake=fake)
    assert result.returncode == 0, err(result)
    assert time.monotonic() - started < 30
    assert "timed out after 1 s" in tool_result(fake)
    child = int((workspace / "child.pid").read_text())
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(child)], capture_output=True, text=True)
    assert state.stdout.strip() in ("", "Z"), f"the background child {child} is still alive"


def test_undo_after_an_edit_and_after_a_command(fake, workspace):
    (workspace / "keep.txt").write_text("original\n")
    fake.add(
        tool_calls(call("write_file", path="keep.txt", content="changed\n")),
        text("edited"),
        tool_calls(call("exec_shell_command", command="rm keep.txt && echo x > made.txt")),
        text("ran"),
    )
    assert agent_process(workspace, "run", "edit", "--yes", fake=fake).returncode == 0
    assert agent_process(workspace, "run", "cmd", "--yes", "--continue", fake=fake).returncode == 0
    assert not (workspace / "keep.txt").exists() and (workspace / "made.txt").exists()

    first = agent_process(workspace, "undo")
    assert first.returncode == 0, err(first)
    assert (workspace / "keep.txt").read_text() == "changed\n"
    assert not (workspace / "made.txt").exists()
    assert "keep.txt" in out(first) and "made.txt" in out(first)

    second = agent_process(workspace, "undo")
    assert second.returncode == 0, err(second)
    assert (workspace / "keep.txt").read_text() == "original\n"


@pytest.fixture
def pty_env(fake: FakeOpenAI) -> dict[str, str]:
    return dict(os.environ, OPENAI_BASE_URL=fake.base_url, TERM="xterm", NO_COLOR="1")


def spawn(workspace: Path, env: dict[str, str], *args: str) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        ["-m", "agent_cli", "run", *args],
        cwd=str(workspace),
        env=env,
        timeout=30,
        encoding="utf-8",
        dimensions=(40, 120),
    )


def exit_status(child: pexpect.spawn) -> int:
    """Wait for the run to end; its exit status."""
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def propose_goodbye(fake, workspace: Path) -> None:
    """a.txt says hello; the model's first call edits it to goodbye, then it answers "Edited."."""
    (workspace / "a.txt").write_text("hello\n")
    edits = [{"old_text": "hello", "new_text": "goodbye"}]
    fake.add(tool_calls(call("edit_file", path="a.txt", edits=edits)), text("Edited."))


def test_inline_card_on_a_terminal_yes_applies_the_edit(fake, workspace, pty_env):
    propose_goodbye(fake, workspace)
    child = spawn(workspace, pty_env, "edit it")
    child.expect("Allow\\?")
    assert "+goodbye" in child.before and "-hello" in child.before
    assert (workspace / "a.txt").read_text() == "hello\n"  # nothing before the yes
    child.sendline("y")
    child.expect("Edited.")
    assert exit_status(child) == 0
    assert (workspace / "a.txt").read_text() == "goodbye\n"


def test_inline_card_no_with_a_reason_reaches_the_model(fake, workspace, pty_env):
    fake.add(tool_calls(call("exec_shell_command", command="touch made.txt")), text("Fine."))
    child = spawn(workspace, pty_env, "make a file")
    child.expect("Allow\\?")
    assert "touch made.txt" in child.before
    child.sendline("n")
    child.expect("Reason")
    child.sendline("not today")
    exit_status(child)
    assert not (workspace / "made.txt").exists()
    told = tool_result(fake)
    assert "declined" in told and "not today" in told


def test_inline_always_for_the_project_is_remembered_and_named(fake, workspace, pty_env):
    fake.add(tool_calls(call("exec_shell_command", command="mkdir -p d1")), text("One."))
    child = spawn(workspace, pty_env, "make a folder")
    child.expect("Allow\\?")
    child.sendline("a")
    child.expect("Rule \\(Enter for exec_shell_command\\(mkdir -p \\*\\)\\)")
    child.sendline("not a rule (")  # refused, asked again: the loop could not use it
    child.expect("is not a rule")
    child.expect("Rule \\(Enter")
    child.sendline("")
    child.expect("Scope")
    child.sendline("p")
    child.expect("One.")
    assert exit_status(child) == 0 and (workspace / "d1").is_dir()

    # A later run, even without a terminal to ask on, is allowed by the project rule.
    fake.add(tool_calls(call("exec_shell_command", command="mkdir -p d2")), text("Two."))
    result = agent(
        workspace, "run", "another", "--mode", "ask", "--output", "stream-json", fake=fake
    )
    assert result.returncode == 0, err(result)
    assert (workspace / "d2").is_dir()
    rules = {
        event["item"].get("rule")
        for event in map(json.loads, out(result).splitlines())
        if event.get("type") == "item_updated" and event["item"].get("kind") == "tool"
    }
    assert "exec_shell_command(mkdir -p *) (project)" in rules
    assert sorted(p.name for p in workspace.iterdir()) == ["d1", "d2"]  # nothing in the repo
    stored = Path(os.environ["XDG_DATA_HOME"]).rglob("project-*.json")
    assert any("mkdir -p *" in p.read_text() for p in stored)  # in the user data dir

    # Text output names the rule on the call's line.
    fake.add(tool_calls(call("exec_shell_command", command="mkdir -p d3")), text("Three."))
    result = agent(workspace, "run", "a third", "--mode", "ask", fake=fake)
    assert result.returncode == 0, err(result)
    assert "(allowed by exec_shell_command(mkdir -p *) (project))" in err(result)


def test_inline_hunks_applies_only_the_chosen_ones(fake, workspace, pty_env):
    lines = [f"line {n}\n" for n in range(1, 31)]
    (workspace / "a.txt").write_text("".join(lines))
    edits = [
        {"old_text": "line 2\n", "new_text": "LINE TWO\n"},
        {"old_text": "line 29\n", "new_text": "LINE TWENTY-NINE\n"},
    ]
    fake.add(tool_calls(call("edit_file", path="a.txt", edits=edits)), text("Edited."))
    child = spawn(workspace, pty_env, "edit it")
    child.expect("Allow\\?")
    child.sendline("h")
    child.expect("Hunks to apply")
    assert "hunk 1" in child.before and "hunk 2" in child.before
    child.sendline("2")
    child.expect("Edited.")
    exit_status(child)
    text_now = (workspace / "a.txt").read_text()
    assert "LINE TWENTY-NINE" in text_now and "line 2\n" in text_now and "LINE TWO" not in text_now
    told = tool_result(fake)
    assert "applied 2 of 2" in told and "not applied: 1" in told


def test_inline_edit_in_editor_writes_the_persons_version(fake, workspace, pty_env):
    propose_goodbye(fake, workspace)
    env = {**pty_env, "VISUAL": "", "EDITOR": "sed -i s/goodbye/farewell/"}
    child = spawn(workspace, env, "edit it")
    child.expect("Allow\\?")
    child.sendline("e")
    child.expect("Edited.")
    assert exit_status(child) == 0
    assert (workspace / "a.txt").read_text() == "farewell\n"
    told = tool_result(fake)
    assert "edited your proposal" in told and "+farewell" in told


def test_inline_editor_that_cannot_start_returns_to_the_card(fake, workspace, pty_env):
    propose_goodbye(fake, workspace)
    env = {**pty_env, "VISUAL": "", "EDITOR": "no-such-editor-here"}
    child = spawn(workspace, env, "edit it")
    child.expect("Allow\\?")
    child.sendline("e")
    child.expect("could not be started")
    child.expect("Allow\\?")
    child.sendline("y")
    child.expect("Edited.")
    assert exit_status(child) == 0
    assert (workspace / "a.txt").read_text() == "goodbye\n"


# ------------------------------------------------------------ [shell_environment]


def write_config(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_commands_get_the_environment_the_config_allows(fake, workspace):
    from agent_cli import paths

    write_config(
        paths.user_config_file(),
        '[shell_environment]\nexclude = ["agent_test_hidden"]\nset = { AGENT_TEST_SET = "s" }\n',
    )
    # A cloned repository's config may hide more, but not show a secret.
    write_config(
        paths.project_config_file(workspace),
        '[shell_environment]\nignore_default_excludes = true\nexclude = ["AGENT_TEST_EXTRA"]\n',
    )
    env = {"AGENT_TEST_VISIBLE": "v", "AGENT_TEST_HIDDEN": "h", "AGENT_TEST_EXTRA": "e",
           "AGENT_TEST_API_KEY": "sk-x"}  # fmt: skip
    command = "env | grep ^AGENT_TEST_ | sort"
    fake.add(tool_calls(call("exec_shell_command", command=command)), text("ok"))
    result = agent(workspace, "run", "show env", "--yes", fake=fake, env=env)
    assert result.returncode == 0, err(result)
    assert tool_result(fake).splitlines()[:2] == ["AGENT_TEST_SET=s", "AGENT_TEST_VISIBLE=v"]
    assert "sk-x" not in tool_result(fake) and "AGENT_TEST_HIDDEN" not in tool_result(fake)
    assert "'shell_environment.ignore_default_excludes' is ignored in a project file" in err(result)


def test_an_mcp_server_gets_the_environment_the_config_allows(fake, workspace):
    from agent_cli import mcp_config, paths
    from tests.support.mcp_servers import stdio_args

    command, *args = stdio_args("--name", "docs")
    entry = {"command": command, "args": args, "env": {"FROM_ENTRY": "${AGENT_TEST_VISIBLE}-x"}}
    write_config(mcp_config.user_file(), json.dumps({"mcpServers": {"docs": entry}}))
    write_config(paths.user_config_file(), '[shell_environment]\nexclude = ["AGENT_TEST_VIS*"]\n')
    write_config(
        paths.project_config_file(workspace),
        'shell_environment = { inherit = "all", ignore_default_excludes = true }\n',
    )
    env = {"AGENT_TEST_VISIBLE": "seen", "AGENT_TEST_API_KEY": "sk-x"}
    fake.add(tool_calls(call("docs_whoami")), text("ok"))
    result = agent(workspace, "run", "who are you", "--yes", fake=fake, env=env)
    assert result.returncode == 0, err(result)
    assert json.loads(tool_result(fake))["env"] == {
        "AGENT_TEST_VISIBLE": None,  # the user's exclude
        "AGENT_TEST_API_KEY": None,  # the project could not turn the default excludes off
        "FROM_ENTRY": "seen-x",  # the entry's own env names a variable of the whole environment
    }
