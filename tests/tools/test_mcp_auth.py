"""OAuth for MCP servers in a session (tools/mcp_auth.py through wiring's McpTools), against
the OAuth-protected test server on loopback: the person is asked first, a no leaves the
server out, a yes opens `$BROWSER`; and the token store and loopback listener themselves."""

from __future__ import annotations

import asyncio
import os
import stat
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from agent_cli import mcp_config
from agent_cli.commands.trust import trust_question
from agent_cli.errors import McpLoginError
from agent_cli.tools.base import ToolContext
from agent_cli.tools.mcp import OAuthSettings, ServerConfig
from agent_cli.tools.mcp_auth import Loopback, TokenStore, free_port, store_file
from agent_cli.wiring import McpTools
from tests.support.oauth import Guarded, browser_env, guarded_server, visits
from tests.support.waiting import eventually, movable_clock, within


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("answer", [True, False])
async def test_a_session_asks_before_a_login(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: bool
):
    for name, value in browser_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    asked: list[str] = []

    async def ask(file: Path, items: list) -> bool:
        asked.append(trust_question(file, items))
        return answer

    with guarded_server(tmp_path) as server:
        mcp_config.add_server("guarded", {"url": server.url})
        session_tools = McpTools(workspace, ask)
        try:
            tools, notices = await asyncio.wait_for(session_tools.tools(), 120)
        finally:
            await session_tools.aclose()
    [question] = asked
    assert question.startswith("The MCP server 'guarded' needs you to log in.")
    assert "/authorize?" in question  # the address is shown in the question
    names = [tool.name for tool in tools]
    if answer:
        assert "guarded_hello" in names and notices == []
        assert len(visits(tmp_path)) == 2  # the page, then the loopback callback
    else:
        assert names == [] and visits(tmp_path) == []
        assert "you did not log in: run `agent mcp login guarded`" in notices[0]


async def test_the_store_writes_0600_and_a_pre_registered_client_needs_its_secret():
    settings = OAuthSettings(client_id="app", client_secret_env="APP_SECRET")
    config = ServerConfig("s", url="https://mcp.example/mcp", oauth=settings)
    store = TokenStore(config, {}, "http://127.0.0.1:9/callback")
    with pytest.raises(McpLoginError, match=r"\$APP_SECRET, which is not set"):
        await store.get_client_info()
    store.env = {"APP_SECRET": "s3cret-value"}
    client = await store.get_client_info()
    assert (client.client_id, client.client_secret) == ("app", "s3cret-value")
    assert client.token_endpoint_auth_method == "client_secret_basic"

    from mcp.shared.auth import OAuthToken

    await store.set_tokens(OAuthToken(access_token="a" * 20, refresh_token="r" * 20, expires_in=60))
    assert store.file == store_file(config.url)
    assert stat.S_IMODE(store.file.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.file.parent.stat().st_mode) == 0o700
    assert (await store.get_tokens()).access_token == "a" * 20
    assert store.expires_at() is not None and store.has_tokens()
    store.forget_tokens()
    assert not store.has_tokens() and store.forget() and not store.forget()


async def get(loopback: Loopback, path: str) -> bytes:
    """One GET on the listener, its whole answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", loopback.port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


async def test_a_callback_without_the_logins_state_is_refused_and_the_listener_waits_on():
    loopback = Loopback(free_port())
    await loopback.start(state="s-right")

    assert (await get(loopback, "/callback?code=planted&state=s-wrong")).startswith(b"HTTP/1.1 400")
    assert (await get(loopback, "/callback?code=planted")).startswith(b"HTTP/1.1 400")
    assert (await get(loopback, "/callback?code=x&state=%C3%A9")).startswith(b"HTTP/1.1 400")
    assert b"You are logged in." in await get(loopback, "/callback?code=c1&state=s-right")
    assert await loopback.answer(timeout=5) == {"code": "c1", "state": "s-right"}


async def test_the_listener_takes_one_answer_on_its_path_only():
    loopback = Loopback(free_port())
    await loopback.start()

    assert (await get(loopback, "/favicon.ico")).startswith(b"HTTP/1.1 404")
    assert b"You are logged in." in await get(loopback, "/callback?code=c1&state=s1")
    assert await loopback.answer(timeout=5) == {"code": "c1", "state": "s1"}
    with pytest.raises(OSError):  # closed once answered
        await asyncio.open_connection("127.0.0.1", loopback.port)
    waiting = Loopback(free_port())
    await waiting.start()
    with pytest.raises(McpLoginError, match=r"no login came back within 0\.1 s"):
        await waiting.answer(timeout=0.1)


def test_the_trust_question_names_the_variables_a_url_server_is_sent(tmp_path: Path):
    entry = ServerConfig(
        "web",
        url="https://mcp.example/mcp",
        headers={"Authorization": "Bearer ${WEB_TOKEN}", "X-Team": "${TEAM:-blue}"},
        oauth=OAuthSettings(client_id="app", client_secret_env="AWS_SECRET_ACCESS_KEY"),
    )
    question = trust_question(tmp_path / ".agent" / "mcp.json", [entry])
    sent = "(sent with your $WEB_TOKEN, $TEAM, $AWS_SECRET_ACCESS_KEY)"
    assert f"  web: https://mcp.example/mcp {sent}" in question


# ------------------------------------------------------------------ a login mid-call


@contextmanager
def held_browser(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """From now on `$BROWSER` waits at the page (writing "held" to its visits) until the test
    says `release("go")` (the person logs in) or anything else (they close the page)."""
    hold = folder / "hold"
    os.mkfifo(hold)
    monkeypatch.setenv("BROWSER_HOLD", str(hold))

    def release(word: str) -> None:
        fd = os.open(hold, os.O_WRONLY | os.O_NONBLOCK)  # the browser has it open: no wait
        os.write(fd, f"{word}\n".encode())
        os.close(fd)

    try:
        yield release
    finally:
        monkeypatch.delenv("BROWSER_HOLD")
        with suppress(OSError):  # OSError: nobody is holding
            release("no")  # a failed test leaves no browser waiting (nor the thread it runs in)


def revoke_all(server: Guarded) -> None:
    """The user revokes the app's access: every token the server issued stops working."""
    address = server.url.removesuffix("/mcp") + "/test/revoke"
    with urllib.request.urlopen(urllib.request.Request(address, method="POST"), timeout=30):
        pass


async def session_with_a_call(workspace: Path, server: Guarded, timeout_ms: int) -> McpTools:
    """A session's tools, logged in (the person said yes at once) and one call made."""
    mcp_config.add_server("guarded", {"url": server.url, "timeout_ms": timeout_ms})

    async def ask(_file: Path, _items: list) -> bool:
        return True

    session_tools = McpTools(workspace, ask)
    tools, notices = await within(session_tools.tools())
    assert notices == []
    hello = {t.name: t for t in tools}["guarded_hello"]
    assert (await within(hello.run(ToolContext(None), {"name": "a"}))).text == "hello, a"
    return session_tools


async def test_a_401_mid_session_logs_in_again_and_the_call_timeout_waits_for_the_person(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    for name, value in browser_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    forward = movable_clock(monkeypatch)
    with guarded_server(tmp_path) as server:
        session_tools = await session_with_a_call(workspace, server, timeout_ms=5000)
        try:
            tools, _ = await session_tools.tools()
            hello = {t.name: t for t in tools}["guarded_hello"]
            await asyncio.to_thread(revoke_all, server)
            with held_browser(tmp_path, monkeypatch) as release:
                call = asyncio.ensure_future(hello.run(ToolContext(None), {"name": "b"}))
                await eventually(lambda: "held" in visits(tmp_path), "the login's browser page")
                forward(60)  # the person takes a minute: far past the call's 5 s
                await asyncio.sleep(0)  # one turn of the loop: a deadline due now would fire
                assert not call.done()
                release("go")
                result = await within(call)
        finally:
            await session_tools.aclose()
    assert (result.text, result.is_error) == ("hello, b", False)
    assert [g["grant"] for g in server.grants()] == ["authorization_code"] * 2


async def test_a_stop_during_a_mid_call_login_ends_the_login_and_the_next_call_logs_in(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    for name, value in browser_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    with guarded_server(tmp_path) as server:
        session_tools = await session_with_a_call(workspace, server, timeout_ms=30_000)
        try:
            tools, _ = await session_tools.tools()
            hello = {t.name: t for t in tools}["guarded_hello"]
            await asyncio.to_thread(revoke_all, server)
            with held_browser(tmp_path, monkeypatch) as release:
                call = asyncio.ensure_future(hello.run(ToolContext(None), {"name": "b"}))
                await eventually(lambda: "held" in visits(tmp_path), "the login's browser page")
                call.cancel()  # the person pressed stop
                with pytest.raises(asyncio.CancelledError):
                    await within(call)
                release("go")  # the page, finished late, finds no login waiting for it
                await eventually(lambda: len(visits(tmp_path)) >= 4, "the late page's visits")
            bearers = len(server.bearers())
            again = await within(hello.run(ToolContext(None), {"name": "c"}))
        finally:
            await session_tools.aclose()
    assert (again.text, again.is_error) == ("hello, c", False)
    # The late answer was never exchanged; the next call's own login was.
    assert [g["grant"] for g in server.grants()] == ["authorization_code"] * 2
    assert bearers > 0
