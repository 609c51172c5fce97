"""What our MCP client answers its servers: roots, forms, progress, changed tools, cancels.

Against the real test server (tests/support/mcp_servers/server.py --client), which
speaks the 2025 protocol as the servers people run do, so it asks the client
through requests of its own.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from agent_cli.backends.loop import BuiltinLoop, LoopParts, LoopSettings
from agent_cli.backends.prompt import system_prompt
from agent_cli.engine.events import ElicitationRequested, ElicitationResolved, Event, ItemUpdated
from agent_cli.engine.items import Conversation, NoticeItem, ToolItem
from agent_cli.engine.session import Session
from agent_cli.frontends.run import Refusals
from agent_cli.providers.scripted import ScriptedProvider, answer, calls
from agent_cli.tools.base import ToolContext, ToolRegistry
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.mcp import McpServers, ServerConfig
from agent_cli.tools.mcp_forms import ElicitAnswer
from agent_cli.tools.workspace import Workspace
from tests.support.mcp_servers import stdio_args
from tests.support.waiting import FOREVER, GENEROUS, eventually, within

CTX = ToolContext(None)


def client_server(name: str = "c", *options: str) -> ServerConfig:
    command, *args = stdio_args("--name", name, "--client", *options)
    return ServerConfig(name, command=command, args=tuple(args))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder.resolve()


async def test_roots_are_the_workspace_and_follow_a_change(workspace: Path, tmp_path: Path):
    servers = McpServers([client_server()], workspace, os.environ, start_timeout=GENEROUS)
    try:
        found = {t.name: t for t in (await servers.tools())[0]}
        assert (await found["c_roots"].run(CTX, {})).text == workspace.as_uri()
        other = tmp_path / "other"
        other.mkdir()
        await servers.set_roots([workspace, other])
        text = (await found["c_roots"].run(CTX, {})).text
        assert text.splitlines() == [workspace.as_uri(), other.resolve().as_uri()]
    finally:
        await servers.aclose()


async def test_a_form_without_anyone_to_ask_is_declined_and_a_hook_can_answer(workspace: Path):
    servers = McpServers([client_server()], workspace, os.environ, start_timeout=GENEROUS)
    try:
        found = {t.name: t for t in (await servers.tools())[0]}
        assert (await found["c_ask"].run(CTX, {})).text == "decline"
        asked = []

        async def defaults(form):
            asked.append(form)
            return ElicitAnswer("accept", {**form.defaults(), "name": "Ann"})

        servers.answers.elicit = defaults  # as `agent mcp call --accept-defaults` would
        text = (await found["c_ask"].run(CTX, {})).text
        assert json.loads(text.removeprefix("accept ")) == {
            "age": 30, "colour": "green", "name": "Ann", "subscribe": True,
        }  # fmt: skip
        form = asked[0]
        assert (form.server, form.message) == ("c", "Who are you?")
        assert [(f.name, f.kind, f.required, f.default) for f in form.fields] == [
            ("name", "string", True, None),
            ("age", "integer", False, 30),
            ("colour", "choice", False, "green"),
            ("subscribe", "boolean", False, True),
        ]
        assert form.fields[2].options == ("red", "green", "blue")
    finally:
        await servers.aclose()


async def test_a_servers_changed_tools_are_offered_at_the_next_load(workspace: Path):
    servers = McpServers([client_server()], workspace, os.environ, start_timeout=GENEROUS)
    try:
        found = {t.name: t for t in (await servers.tools())[0]}
        assert "c_grown" not in found and not servers.listed_anew
        assert (await found["c_grow"].run(CTX, {})).text == "grew"
        await eventually(lambda: servers.listed_anew, "the tools/list_changed notification")
        grown = {t.name: t for t in (await servers.tools())[0]}["c_grown"]
        assert (await grown.run(CTX, {})).text == "grown here"
        assert not servers.listed_anew
    finally:
        await servers.aclose()


async def test_a_stopped_call_is_cancelled_on_the_server(workspace: Path, tmp_path: Path):
    naps = tmp_path / "naps"
    servers = McpServers(
        [client_server("c", "--naps", str(naps))], workspace, os.environ, start_timeout=GENEROUS
    )
    try:
        found = {t.name: t for t in (await servers.tools())[0]}
        task = asyncio.ensure_future(found["c_nap"].run(CTX, {"seconds": FOREVER}))
        await eventually(naps.exists, "the call to reach the server")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await within(task)
        await eventually(lambda: "cancelled" in naps.read_text(), "the server to hear the cancel")
    finally:
        await servers.aclose()


# ---------------------------------------------------------- through a session


def session_with(workspace: Path, servers: McpServers, script: list) -> Session:
    provider = ScriptedProvider(script)

    class Source:
        listed_anew = False

        @property
        def offering(self) -> int:
            return servers.offering

        async def tools(self):
            return await servers.tools()

        async def aclose(self) -> None:
            await servers.aclose()

    def backend(_conversation: Conversation) -> BuiltinLoop:
        return BuiltinLoop(
            provider=provider,
            tools=ToolRegistry(builtin_tools()),
            context=ToolContext(Workspace(workspace)),
            settings=LoopSettings("scripted-model", workspace),
            system_prompt=lambda mode: system_prompt(workspace, mode),
            parts=LoopParts(extra_tools=Source()),
        )

    return Session(Conversation(workspace=str(workspace), mode="full"), backend, None)


async def test_a_form_reaches_the_front_end_and_its_answer_the_server(workspace: Path):
    servers = McpServers([client_server()], workspace, os.environ, start_timeout=GENEROUS)
    session = session_with(workspace, servers, [calls(("c1", "c_ask", "{}")), answer("thanks")])
    seen: list[Event] = []

    def front_end(event: Event) -> None:
        seen.append(event)
        if isinstance(event, ElicitationRequested):
            form = event.request.form
            event.request.resolve(ElicitAnswer("accept", {**form.defaults(), "name": "Bo"}))

    session.events.subscribe(front_end)
    try:
        await session.send("who am I?")
        item = next(i for i in session.conversation.items if isinstance(i, ToolItem))
        assert item.state == "done" and '"name": "Bo"' in item.result, item.result
        resolved = [e for e in seen if isinstance(e, ElicitationResolved)]
        assert [e.action for e in resolved] == ["accept"]
        assert resolved[0].to_json() == {
            "type": "elicitation_resolved", "server": "c", "action": "accept",
        }  # fmt: skip
    finally:
        await session.aclose()


async def test_headless_a_form_is_declined_with_a_notice(workspace: Path):
    servers = McpServers([client_server()], workspace, os.environ, start_timeout=GENEROUS)
    session = session_with(workspace, servers, [calls(("c1", "c_ask", "{}")), answer("fine")])
    session.events.subscribe(Refusals())  # what `agent run` answers with nobody to ask
    try:
        await session.send("who am I?")
        item = next(i for i in session.conversation.items if isinstance(i, ToolItem))
        assert item.result == "decline"
        notices = [i.text for i in session.conversation.items if isinstance(i, NoticeItem)]
        assert any(
            "The MCP server 'c' asked for information (Who are you?); it was declined" in n
            and "agent run" in n
            for n in notices
        ), notices
    finally:
        await session.aclose()


async def test_progress_shows_on_the_running_call_and_is_gone_when_done(workspace: Path):
    servers = McpServers([client_server()], workspace, os.environ, start_timeout=GENEROUS)
    session = session_with(workspace, servers, [calls(("c1", "c_steps", "{}")), answer("ok")])
    progress: list[str] = []

    def front_end(event: Event) -> None:
        item = event.item if isinstance(event, ItemUpdated) else None
        if isinstance(item, ToolItem) and item.progress and item.progress not in progress:
            progress.append(item.progress)

    session.events.subscribe(front_end)
    try:
        await session.send("step")
        assert progress == ["1/3 · step 1", "2/3 · step 2", "3/3 · step 3"]
        item = next(i for i in session.conversation.items if isinstance(i, ToolItem))
        assert (item.state, item.result, item.progress) == ("done", "stepped", "")
    finally:
        await session.aclose()


async def test_resources_are_listed_and_read_with_templates(workspace: Path):
    servers = McpServers([client_server()], workspace, os.environ, start_timeout=GENEROUS)
    try:
        found = {t.name: t for t in (await servers.tools())[0]}
        listing = (await found["list_mcp_resources"].run(CTX, {})).text
        assert "c: 4 resource(s)" in listing
        assert "- note://hello — hello (text/plain): A note." in listing
        assert "- pic://red — red (image/png)" in listing
        assert "- greeting://{name} — greeting" in listing and "Greets by name." in listing
        read = found["read_mcp_resource"]
        assert (await read.run(CTX, {"server": "c", "uri": "note://hello"})).text.endswith(
            "hello from a resource"
        )
        picture = await read.run(CTX, {"server": "c", "uri": "pic://red"})
        assert [(i.width, i.height) for i in picture.images] == [(4, 3)]
        filled = await read.run(CTX, {"server": "c", "uri": "greeting://Ann"})
        assert filled.text.endswith("Hello, Ann!")
        missing = await read.run(CTX, {"server": "c", "uri": "note://nothing"})
        assert missing.is_error and "could not read note://nothing" in missing.text
        other = await read.run(CTX, {"server": "nope", "uri": "x://y"})
        assert other.is_error and "The ones that do: c." in other.text
    finally:
        await servers.aclose()


async def test_resource_tools_are_not_offered_without_a_server_that_has_resources(
    workspace: Path,
):
    command, *args = stdio_args("--name", "plain")
    config = ServerConfig("plain", command=command, args=tuple(args))
    servers = McpServers([config], workspace, os.environ, start_timeout=GENEROUS)
    try:
        names = {t.name for t in (await servers.tools())[0]}
        assert "plain_echo" in names and "list_mcp_resources" not in names
    finally:
        await servers.aclose()


async def test_prompts_are_listed_their_arguments_read_and_their_messages_fetched(
    workspace: Path,
):
    from agent_cli.errors import ToolError
    from agent_cli.tools.mcp_prompts import fetch, parse_arguments, prompts

    servers = McpServers([client_server()], workspace, os.environ, start_timeout=GENEROUS)
    try:
        await servers.tools()
        (review,) = [p for p in await prompts(servers) if p.name == "review"]
        assert (review.command, review.description) == ("c:review", "Review a file.")
        assert review.arguments == (("file", True), ("focus", False))
        assert parse_arguments(review, "main.py") == {"file": "main.py"}
        assert parse_arguments(review, "'my file.py' style") == {
            "file": "my file.py", "focus": "style",
        }  # fmt: skip
        assert parse_arguments(review, "focus=speed a.py") == {"focus": "speed", "file": "a.py"}
        with pytest.raises(ToolError, match="needs file"):
            parse_arguments(review, "focus=speed")
        with pytest.raises(ToolError, match="'c' is one too many"):
            parse_arguments(review, "a b c")
        fetched = await fetch(servers, review, {"file": "a.py"})
        assert (fetched.text, fetched.images) == ("Review a.py, looking for bugs.", ())
    finally:
        await servers.aclose()


async def test_prompts_are_listed_page_after_page_and_an_endless_listing_ends(workspace: Path):
    from agent_cli.tools.mcp_prompts import prompts
    from agent_cli.tools.mcp_resources import PAGES

    paged = client_server("c", "--prompt-pages", "1")
    endless = client_server("e", "--prompt-pages", "forever")
    servers = McpServers([paged, endless], workspace, os.environ, start_timeout=GENEROUS)
    try:
        await servers.tools()
        listed = await prompts(servers)
        # One prompt a page: every page read, not the first one only.
        assert sorted(p.name for p in listed if p.server == "c") == ["look", "pair", "review"]
        # A server whose listing never ends is read for PAGES pages, then left there.
        assert [p.name for p in listed if p.server == "e"] == ["review"] * PAGES
    finally:
        await servers.aclose()
