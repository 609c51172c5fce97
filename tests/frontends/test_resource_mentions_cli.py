"""`@server:uri` in `agent run` and `agent --plain`: an MCP server's resource attached to
the message the model is sent (a real SDK-written server, tests/support/mcp_servers with
`--client`; the model is the loopback fake)."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pexpect

from agent_cli import mcp_config
from tests.support.cli import agent, err, spawn_plain
from tests.support.fake_openai import FakeOpenAI, text
from tests.support.mcp_servers import SERVER
from tests.support.mcp_servers.server import PNG_4X3


def add_client_server(name: str = "docs") -> None:
    entry = {"command": sys.executable, "args": [str(SERVER), "--name", name, "--client"]}
    mcp_config.add_server(name, entry)


def user_content(fake: FakeOpenAI) -> str:
    """The text of the last request's user message (its text parts joined)."""
    content = fake.requests[-1]["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part["type"] == "text")


def test_agent_run_attaches_a_text_resource_and_a_filled_in_template(fake, workspace):
    add_client_server()
    fake.add(text("Read them."))
    prompt = "summarise @docs:note://hello and @docs:greeting://Ann."
    result = agent(workspace, "run", prompt, fake=fake)
    assert result.returncode == 0, err(result)
    sent = user_content(fake)
    assert sent.startswith(prompt)
    assert '<attached resource="docs:note://hello">' in sent
    assert "hello from a resource" in sent
    # The full stop after the URI ends the sentence, not the URI.
    assert '<attached resource="docs:greeting://Ann">' in sent and "Hello, Ann!" in sent
    assert "not attached" not in err(result)


def test_agent_run_sends_an_image_resource_as_an_image_and_binary_as_a_note(fake, workspace):
    add_client_server()
    fake.add(text("Seen."))
    result = agent(workspace, "run", "look at @docs:pic://red and @docs:blob://data", fake=fake)
    assert result.returncode == 0, err(result)
    content = fake.requests[-1]["messages"][-1]["content"]
    uri = "data:image/png;base64," + base64.b64encode(PNG_4X3).decode()
    assert {"type": "image_url", "image_url": {"url": uri}} in content
    sent = user_content(fake)
    assert "[resource blob://data (application/octet-stream): 1.0 KiB of binary data]" in sent


def test_a_long_resource_is_cut_as_a_long_file_is(fake, workspace):
    add_client_server()
    fake.add(text("Long."))
    result = agent(workspace, "run", "read @docs:note://long", fake=fake)
    assert result.returncode == 0, err(result)
    sent = user_content(fake)
    assert "line 0 of a long note" in sent and "line 4999 of a long note" in sent
    assert len(sent.encode()) < 20_000, "capped near MODEL_RESULT_CAP, not 120 kB"


def test_an_unknown_server_or_uri_is_said_and_the_message_still_goes(fake, workspace):
    add_client_server()
    (workspace / "x.py").write_text("print(1)\n")
    fake.add(text("Sent anyway."))
    prompt = "see @nodocs:note://hello and @docs:note://nothing, @x.py:1 and me@docs:note://hello"
    result = agent(workspace, "run", prompt, fake=fake)
    assert result.returncode == 0, err(result)
    assert user_content(fake) == prompt, "nothing attached, the text unchanged"
    said = err(result)
    assert "@nodocs:note://hello is not attached: there is no MCP server 'nodocs'" in said
    assert "the configured ones: docs" in said
    assert "@docs:note://nothing is not attached: The MCP server 'docs' could not read" in said
    assert "x.py" not in said and "me@" not in said and "Traceback" not in said


def test_a_path_with_a_colon_is_still_a_file(fake, workspace):
    """`@name:scheme:…` naming no server is looked for as a file before it is said."""
    add_client_server()
    (workspace / "odd:x:y").write_text("an odd name\n")
    fake.add(text("Fine."))
    result = agent(workspace, "run", "read @odd:x:y", fake=fake)
    assert result.returncode == 0, err(result)
    assert "an odd name" in user_content(fake)
    assert "not attached" not in err(result)


def test_the_repl_completes_a_servers_resources_and_attaches_one(fake, workspace: Path):
    add_client_server()
    fake.add(text("Got the note."))
    child = spawn_plain(workspace, fake.base_url)
    try:
        child.expect_exact("›")
        child.send("read @docs:")
        # Listed in the background once the servers are up: the menu shows them when it is.
        child.expect_exact("note://hello")
        child.expect_exact("greeting://{name}")
        child.send("no")
        child.expect_exact("note://long")
        child.send("\t")  # the first candidate, note://hello
        child.send("\r")  # the completion is taken
        child.send("\r")  # sent
        child.expect_exact("Got the note.")
        child.expect_exact("›")
        child.send("/quit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert '<attached resource="docs:note://hello">' in user_content(fake)


def test_a_resource_of_an_untrusted_workspace_server_says_why_it_is_not_attached(fake, workspace):
    command, *args = [sys.executable, str(SERVER), "--name", "repo", "--client"]
    (workspace / ".agent").mkdir()
    entry = {"mcpServers": {"repo": {"command": command, "args": args}}}
    (workspace / ".agent" / "mcp.json").write_text(json.dumps(entry))
    fake.add(text("Without it."))
    result = agent(workspace, "run", "read @repo:note://hello", fake=fake)
    assert result.returncode == 0, err(result)
    assert user_content(fake) == "read @repo:note://hello"
    said = err(result)
    assert "@repo:note://hello is not attached:" in said and "not trusted yet" in said
