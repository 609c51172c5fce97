"""MCP servers' prompts as `/server:prompt args…` in the TUI, `/help`, `--plain` and `agent run`.

A real SDK-written server (tests/support/mcp_servers, `--client`: the prompts `review(file,
focus="bugs")` and `pair(topic)`) is configured for the person; the model is the loopback fake.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_cli import mcp_config, wiring
from agent_cli.frontends.interactive import Interactive
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.settings import Settings
from agent_cli.wiring import Opening
from tests.frontends.tui.support import SIZE, notice_says, send, settle, until
from tests.support.cli import agent, err, spawn_plain
from tests.support.fake_openai import FakeOpenAI, text, tool_calls
from tests.support.mcp_servers import write_client_server
from tests.support.waiting import eventually


@pytest.fixture
async def interactive(settings: Settings) -> AsyncIterator[Interactive]:
    write_client_server(mcp_config.user_file())
    opened = await wiring.open_interactive(settings, Opening(), "ask")
    try:
        yield opened
    finally:
        await opened.aclose()


def last_message(fake: FakeOpenAI) -> str:
    return fake.requests[-1]["messages"][-1]["content"]


async def test_a_servers_prompts_are_completed_and_sent_as_the_persons_message(
    app: AgentApp, fake: FakeOpenAI
):
    fake.add(text("Reviewed."), text("Explained."))
    async with app.run_test(size=SIZE) as pilot:
        # Listed once the screen is up (the servers start after the first frame).
        await until(pilot, lambda: app.interactive.commands.get("docs:review") is not None)
        await pilot.press("/", "d", "o", "c", "s", ":")
        labels = [c.label for c in app.composer.menu.candidates]
        assert any(label.startswith("/docs:review") for label in labels), labels
        assert any(label.startswith("/docs:pair") for label in labels), labels
        for _ in range(6):
            await pilot.press("backspace")
        await send(pilot, app, "/docs:review 'my file.py' focus=speed")
        await until(pilot, lambda: len(fake.requests) == 1)
        await settle(pilot, app)
        assert last_message(fake) == "Review my file.py, looking for speed."
        await send(pilot, app, "/docs:pair caching")
        await until(pilot, lambda: len(fake.requests) == 2)
        await settle(pilot, app)
    # Every message of the prompt, in order, as the person's one message.
    assert last_message(fake) == "Explain caching.\n\nWhich part of it?\n\nAll of it, briefly."


async def test_a_prompts_image_goes_to_the_model_as_an_image_and_its_resource_as_text(
    app: AgentApp, fake: FakeOpenAI
):
    fake.add(text("A red square."))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.interactive.commands.get("docs:look") is not None)
        await send(pilot, app, "/docs:look")
        await until(pilot, lambda: len(fake.requests) == 1)
        await settle(pilot, app)
    parts = fake.requests[0]["messages"][-1]["content"]
    words = "\n".join(p["text"] for p in parts if p["type"] == "text")
    assert words.startswith("What is in this picture?\n\n[image: image/png 4×3")
    assert "[resource note://hello (text/plain)]\na red square" in words
    [image] = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    assert image.startswith("data:image/png;base64,")


async def test_a_missing_argument_is_said_with_the_usage_and_nothing_is_sent(
    app: AgentApp, fake: FakeOpenAI
):
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "/docs:review focus=speed")
        await until(pilot, lambda: notice_says(app, "needs file", "error"))
    assert fake.requests == []


async def test_help_lists_the_prompts_with_their_arguments_and_server(interactive: Interactive):
    await interactive.load_commands()
    reply = await interactive.handle("/help")
    assert "`/docs:review file [focus]` — Review a file. (MCP server docs)" in reply.text
    assert "`/docs:pair topic`" in reply.text


async def test_a_prompt_typed_before_the_servers_were_listed_starts_them(
    settings: Settings, fake: FakeOpenAI, workspace: Path
):
    """The early listing is skipped when a workspace's servers wait for their trust: the
    first `/server:prompt` starts them (asking), and is sent."""
    from agent_cli.frontends.interactive import Questions

    write_client_server(workspace / ".agent" / "mcp.json", "repo")
    asked: list[Path] = []

    async def yes(file: Path, _entries: list) -> bool:
        asked.append(file)
        return True

    opened = await wiring.open_interactive(settings, Opening(), "ask", yes, None, Questions())
    try:
        await opened.load_commands()
        assert asked == [] and opened.commands.get("repo:review") is None, "nothing asked early"
        reply = await opened.handle("/repo:review a.py")
        assert asked == [workspace / ".agent" / "mcp.json"]
        assert (reply.action, reply.argument) == ("send", "Review a.py, looking for bugs.")
    finally:
        await opened.aclose()


async def test_prompts_the_server_adds_later_are_offered_at_the_next_command(
    interactive: Interactive, fake: FakeOpenAI
):
    await interactive.load_commands()
    assert interactive.commands.get("docs:later") is None
    fake.add(tool_calls(("c1", "docs_grow_prompt", "{}")), text("Grew."))
    interactive.session.set_mode("full")
    await interactive.session.send("grow a prompt")
    reply = await interactive.handle("/docs:later")
    assert (reply.action, reply.argument) == ("send", "A prompt added later.")


def test_agent_run_sends_a_servers_prompt(fake: FakeOpenAI, workspace: Path):
    write_client_server(mcp_config.user_file())
    fake.add(text("Reviewed."))
    result = agent(workspace, "run", "/docs:review main.py", fake=fake)
    assert result.returncode == 0, err(result)
    assert last_message(fake) == "Review main.py, looking for bugs."
    missing = agent(workspace, "run", "/docs:review", fake=fake)
    assert missing.returncode != 0 and "needs file" in err(missing)
    assert "Traceback" not in err(missing) and len(fake.requests) == 1, "nothing sent"


def test_agent_run_describes_a_prompts_image_to_a_model_without_vision(
    fake: FakeOpenAI, workspace: Path
):
    from agent_cli import paths

    write_client_server(mcp_config.user_file())
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'provider = "blind"\n\n[providers.blind]\nkind = "openai"\nbase_url = "{fake.base_url}"\n'
        "images = false\n"
    )
    fake.add(text("I cannot see it."))
    result = agent(workspace, "run", "/docs:look", fake=fake)
    assert result.returncode == 0, err(result)
    said = last_message(fake)
    assert isinstance(said, str), "no image part for a model without vision"
    assert said.startswith("What is in this picture?\n\n[image: image/png 4×3")
    assert "not shown — this model does not take images." in said
    assert "[resource note://hello (text/plain)]\na red square" in said


def test_the_repl_sends_a_servers_prompt(fake: FakeOpenAI, workspace: Path):
    import pexpect

    write_client_server(mcp_config.user_file())
    fake.add(text("Reviewed it."))
    child = spawn_plain(workspace, fake.base_url)
    try:
        child.expect_exact("›")
        child.send("/docs:review a.py\r")
        child.expect_exact("Reviewed it.")
        child.expect_exact("›")
        child.send("/help\r")
        child.expect(r"/docs:review file \[focus\][^\n]*Review a file. \(MCP server docs\)")
        child.send("/quit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert last_message(fake) == "Review a.py, looking for bugs."


async def test_tools_a_server_adds_reach_the_model_though_a_prompt_command_listed_first(
    interactive: Interactive, fake: FakeOpenAI
):
    """The prompt commands and the loop share the servers: a `/docs:…` command typed after
    a server said its tools changed lists them anew (for itself), and the next message still
    offers the new tool to the model."""
    fake.add(tool_calls(("c1", "docs_grow", "{}")), text("Grew."), text("Paired."))
    interactive.session.set_mode("full")
    await interactive.session.send("grow a tool")
    assert interactive.resources is not None
    servers = interactive.resources.running()
    await eventually(lambda: servers.listed_anew, "the tools/list_changed notification")
    reply = await interactive.handle("/docs:pair speed")
    assert not servers.listed_anew, "the command's listing took the change for itself"
    await interactive.session.send(reply.argument)
    offered = [tool["function"]["name"] for tool in fake.requests[-1]["tools"]]
    assert "docs_grown" in offered, offered
