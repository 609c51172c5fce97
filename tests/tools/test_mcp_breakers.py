"""Each MCP server's circuit breaker and the calls' idempotency keys, against real SDK
servers (tests/support/mcp_servers) and the loop; time through an injected clock."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent_cli.backends.loop import BuiltinLoop, LoopParts, LoopSettings
from agent_cli.backends.prompt import system_prompt
from agent_cli.engine.events import Event, NoticeEvent
from agent_cli.engine.items import Conversation, ToolItem
from agent_cli.engine.session import Session
from agent_cli.providers.scripted import ScriptedProvider, answer, calls
from agent_cli.tools.base import ToolContext, ToolRegistry
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.mcp import IDEMPOTENCY_KEY, McpServers, ServerConfig
from agent_cli.tools.mcp_breakers import cooling, reset
from agent_cli.tools.mcp_listings import listing_key
from agent_cli.tools.workspace import Workspace
from tests.support.mcp_servers import stdio_args
from tests.support.waiting import within

START = 1_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def stdio(name: str, *options: str) -> ServerConfig:
    command, *args = stdio_args("--name", name, *options)
    return ServerConfig(name, command=command, args=tuple(args))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder.resolve()


def at(seconds: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(seconds))


async def test_a_server_that_dies_on_every_call_is_left_alone_for_a_cooldown(
    workspace: Path, tmp_path: Path
):
    """Five calls in five rounds start it three times; the last ones are refused at once,
    naming the breaker, with one notice for the person; after the cooldown one trial call
    starts it again; a restart resets it."""
    starts = tmp_path / "starts"
    config = stdio("flaky", "--starts", str(starts))
    clock = Clock()
    servers = McpServers([config], workspace, os.environ, clock=clock)

    class Source:
        @property
        def listed_anew(self) -> bool:
            return servers.listed_anew

        @property
        def offering(self) -> int:
            return servers.offering

        async def tools(self):
            return await servers.tools()

        async def aclose(self) -> None:
            await servers.aclose()

    crash = calls(("c", "flaky_crash", "{}"))
    # The loop ends the first message itself after the third identical refusal (round 5).
    provider = ScriptedProvider([*([crash] * 5), crash, answer("no")])

    def backend(_conversation: Conversation) -> BuiltinLoop:
        return BuiltinLoop(
            provider=provider,
            tools=ToolRegistry(builtin_tools()),
            context=ToolContext(Workspace(workspace)),
            settings=LoopSettings("scripted-model", workspace),
            system_prompt=lambda mode: system_prompt(workspace, mode),
            parts=LoopParts(extra_tools=Source()),
        )

    session = Session(Conversation(workspace=str(workspace), mode="full"), backend, None)
    heard: list[Event] = []
    session.events.subscribe(heard.append)
    try:
        first = await within(session.send("call the flaky tool"))
        assert first.reason.value == "repeated_failure"
        results = [i for i in session.conversation.items if isinstance(i, ToolItem)]
        assert len(results) == 5
        assert len(starts.read_text().splitlines()) <= 3, "refused calls start nothing"
        for item in results[-3:]:
            assert "failed 3 times in a row; not calling it until" in item.result
            assert at(START + 30) in item.result and "/mcp restart flaky" in item.result
        told = [e for e in heard if isinstance(e, NoticeEvent) and "MCP server" in e.text]
        assert len(told) == 1 and told[0].level == "warn", "one notice, not one per call"
        key = listing_key(config.identity(workspace))
        assert cooling(key).startswith(f"cooling down until {at(START + 30)}")
        status = {s.config.name: s for s in await servers.status()}["flaky"]
        assert status.state == "cooling" and "cooling down until" in status.reason

        clock.now += 30  # the cooldown has passed: one trial call
        started = len(starts.read_text().splitlines())
        heard.clear()
        await within(session.send("try once more"))
        trial = [i for i in session.conversation.items if isinstance(i, ToolItem)][-1]
        assert len(starts.read_text().splitlines()) == started + 1, "the trial reached it"
        assert "stopped during the call" in trial.result and at(clock.now + 60) in trial.result
        assert not [e for e in heard if isinstance(e, NoticeEvent) and "MCP server" in e.text]

        assert reset(key) and cooling(key) == ""  # `/mcp restart flaky`, `agent mcp list`
        tools = {t.name: t for t in (await servers.tools())[0]}
        echoed = await tools["flaky_echo"].run(ToolContext(None), {"text": "back"})
        assert echoed.text == "back"
    finally:
        await session.aclose()
        await servers.aclose()


async def test_calls_that_change_carry_an_idempotency_key_and_a_resend_the_same(
    workspace: Path, tmp_path: Path
):
    record = tmp_path / "meta.jsonl"
    servers = McpServers([stdio("m", "--meta", str(record))], workspace, os.environ)

    def context() -> tuple[ToolContext, ToolItem]:
        item = ToolItem("m_noted_write", "c1")
        lent = SimpleNamespace(item=item, run=None)  # what the loop lends as extra["call"]
        return ToolContext(None, extra={"call": lent}), item

    try:
        tools = {t.name: t for t in (await servers.tools())[0]}
        read_ctx, read_item = context()
        assert (await tools["m_noted_read"].run(read_ctx, {"text": "r"})).text == "r"
        first_ctx, first = context()
        second_ctx, second = context()
        await tools["m_noted_write"].run(first_ctx, {"text": "w1"})
        await tools["m_noted_write"].run(second_ctx, {"text": "w2"})
        once_ctx, once = context()
        resent = await tools["m_noted_once"].run(once_ctx, {"text": "delivered"})
        assert resent.text == "delivered" and not resent.is_error, "sent again and answered"

        seen = [json.loads(line) for line in record.read_text().splitlines()]
        keys = [entry["meta"].get(IDEMPOTENCY_KEY) for entry in seen]
        assert [entry["tool"] for entry in seen] == [
            "noted_read", "noted_write", "noted_write", "noted_once", "noted_once"
        ]  # fmt: skip
        assert keys[0] is None and read_item.idempotency_key == "", "read-only: no key"
        assert keys[1] == first.idempotency_key and keys[2] == second.idempotency_key
        assert len({keys[1], keys[2]}) == 2 and all(len(k) >= 32 for k in keys[1:3])
        assert keys[3] == keys[4] == once.idempotency_key, "a re-sent call has the same key"
        stored = ToolItem("t", "c", idempotency_key=once.idempotency_key)
        from agent_cli.engine.items import item_from_json, item_to_json

        assert item_from_json(item_to_json(stored)) == stored  # kept with the item
    finally:
        await servers.aclose()


def test_mcp_shows_the_breaker_and_restart_resets_it(workspace: Path):
    """`/mcp` (wiring's Bench): a state column, and `/mcp restart NAME` ends the cooldown."""
    from agent_cli import mcp_config, wiring
    from agent_cli.tools.mcp_breakers import breaker_for

    config = stdio("cold")
    user = mcp_config.user_file()
    user.parent.mkdir(parents=True, exist_ok=True)
    entry = {"command": config.command, "args": list(config.args)}
    user.write_text(json.dumps({"mcpServers": {"cold": entry}}))
    bench = wiring.Bench(workspace)
    (loaded,) = [c for c in mcp_config.load_servers(workspace, trusted=lambda _f: True)[0]]
    breaker = breaker_for(listing_key(loaded.identity(workspace)), "cold", Clock())
    assert bench.mcp_servers().rows[0][3] == "ok"
    for _ in range(3):
        breaker.failure("it crashed")
    assert bench.mcp_servers().rows[0][3].startswith(f"cooling down until {at(START + 30)}")
    assert "is called again" in bench.restart_mcp("cold")
    assert bench.mcp_servers().rows[0][3] == "ok" and breaker.allow()
