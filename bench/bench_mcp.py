"""First-round latency with two stdio MCP servers configured vs none.

    python bench/bench_mcp.py [--quick] [--rounds N]

A real Session and the built-in loop, talking to the fake model server
(tests/support/fake_openai.py) through the real OpenAI provider, in `full`
mode, with `extra_tools` = the tools of a `McpServers` (as the wiring does).
The clock starts when `session.send()` is called and stops when the fake
server has received the first request: between them the loop loads the MCP
tools (the SDK's import, the servers' start, handshake and listing) and sends
the round. Each sample is a fresh process (the SDK's import is once per
process), scenarios interleaved round by round, medians and paired
differences against "none" of the same round:

- none: no MCP server configured (the baseline);
- 2 SDK servers, remembered: two copies of tests/support/mcp_servers/server.py
  (written with the SDK) whose tools an earlier session listed
  (`mcp_listings`): offered from there, the servers start at a first call —
  every start after the first one, so the goal applies here;
- 2 SDK servers, first start: the same with nothing remembered, so the round
  waits for both servers to start and list their tools (each pays the SDK's
  import too);
- 2 minimal servers: two tiny stdio servers speaking JSON-RPC by hand, which
  start in milliseconds: what is left is the client's own cost;
- the same, the SDK already imported: spawn, handshake and listing alone;
- 2 SDK servers started when the session opened, 3 s before the message (what
  a front end gets by calling `McpServers.start()` when a conversation opens).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.run import (  # noqa: E402
    TIMEOUT_SECONDS,
    Row,
    error_row,
    limit_row,
    median,
    ms,
    paired_median,
    print_table,
)

ROUNDS, QUICK_ROUNDS = 10, 1
GOAL_MS = 300.0
PREWARM_SECONDS = 3.0
SCENARIOS = ("none", "sdk-remembered", "sdk", "minimal", "minimal-warm", "sdk-prewarmed")
GOAL_SCENARIO = "sdk-remembered"
LABELS = {
    "sdk-remembered": "2 SDK servers, tools remembered, vs none",
    "sdk": "2 SDK servers, first start, vs none",
    "minimal": "2 minimal servers vs none",
    "minimal-warm": "2 minimal servers, SDK imported, vs none",
    "sdk-prewarmed": f"2 SDK servers started {PREWARM_SECONDS:g} s earlier, vs none",
}

# A stdio MCP server in a few lines: the least a server can cost to start.
MINIMAL_SERVER = """\
import json, sys
TOOLS = [{"name": n, "description": "A tool.", "inputSchema": {"type": "object"}}
         for n in ("one", "two", "three")]
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, answer = message.get("method"), None
    if method == "initialize":
        answer = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "mini", "version": "1"}}
    elif method == "tools/list":
        answer = {"tools": TOOLS}
    reply = {"jsonrpc": "2.0", "id": message["id"]}
    if answer is None:
        reply["error"] = {"code": -32601, "message": "Method not found"}
    else:
        reply["result"] = answer
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 round: a smoke test")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--one", choices=SCENARIOS, help=argparse.SUPPRESS)
    parser.add_argument("--workspace", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps({"seconds": asyncio.run(one_sample(args.one, args.workspace))}))
        return 0
    rounds = args.rounds or (QUICK_ROUNDS if args.quick else ROUNDS)
    samples: dict[str, list[float]] = {s: [] for s in SCENARIOS}
    errors: dict[str, str] = {}
    order = list(SCENARIOS)
    import random

    shuffle = random.Random(20261129).shuffle
    with tempfile.TemporaryDirectory() as home:
        for index in range(rounds + 1):  # round 0 is the warm-up: caches and bytecode
            shuffle(order)
            results = {s: sample(s, Path(home), errors) for s in order if s not in errors}
            if index and all(v is not None for v in results.values()):
                for scenario, seconds in results.items():
                    samples[scenario].append(seconds)  # type: ignore[arg-type]
    print_table(
        "MCP: first round with two stdio servers", rows(samples, errors), notes(rounds, errors)
    )
    return 0


def sample(scenario: str, home: Path, errors: dict[str, str]) -> float | None:
    """One fresh process measuring one scenario once.

    Each scenario keeps its workspace and cache folder across rounds, so the
    warm-up round's start is what "remembered" remembers; a first start gets an
    empty cache every time.
    """
    workspace, cache = home / scenario / "workspace", home / scenario / "cache"
    workspace.mkdir(parents=True, exist_ok=True)
    if scenario != "sdk-remembered":
        shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    command = [sys.executable, str(Path(__file__).resolve()), "--one", scenario]
    command += ["--workspace", str(workspace)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, cwd=ROOT, env=env
        )
    except subprocess.TimeoutExpired:
        errors[scenario] = "timed out"
        return None
    if done.returncode != 0:
        errors[scenario] = done.stderr.strip()[-1500:] or f"exit {done.returncode}"
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])["seconds"]


def rows(samples: dict[str, list[float]], errors: dict[str, str]) -> list[Row]:
    table: list[Row] = []
    base = samples["none"]
    table.append(
        Row("first request, no MCP server", ms(median(base))) if base else error_row("none")
    )
    for scenario, label in LABELS.items():
        ours = samples[scenario]
        if not ours or not base or scenario in errors:
            table.append(error_row(label))
            continue
        extra = paired_median(ours, base) * 1000
        value = f"+{extra:.0f} ms"
        if scenario == GOAL_SCENARIO:
            goal = f"<= +{GOAL_MS:g} ms"
            table.append(limit_row(label, value, extra <= GOAL_MS, goal, ms(median(base))))
        else:
            table.append(Row(label, value, ms(median(base))))
    return table


def notes(rounds: int, errors: dict[str, str]) -> list[str]:
    lines = [
        f"{rounds} round(s) after a warm-up; scenarios shuffled in each round; each sample a "
        "fresh process; 'ours' = median of (scenario - none) in the same round",
        "clock: session.send() -> the fake model server has the first request; "
        "mode full, real OpenAI provider, extra_tools = McpServers(...)",
        "an SDK server's own start is mostly the SDK's import (~1-2 s on a busy machine); "
        "the client imports the SDK once per process, in a worker thread",
        "remembered: the tools the warm-up round's start listed (kept in the user cache dir), "
        "the servers not started before the first request; first start: an empty cache",
    ]
    lines += [f"ERROR {k}: {' | '.join(v.splitlines()[-3:])}" for k, v in errors.items()]
    return lines


# ------------------------------------------------------------ one sample


async def one_sample(scenario: str, workspace: Path) -> float:
    from agent_cli.backends.loop import BuiltinLoop, LoopParts, LoopSettings
    from agent_cli.backends.prompt import system_prompt
    from agent_cli.engine.items import Conversation
    from agent_cli.engine.session import Session
    from agent_cli.providers.openai import OpenAIProvider
    from agent_cli.tools.base import ToolContext
    from agent_cli.tools.builtin import builtin_tools
    from agent_cli.tools.mcp import McpServers, ServerConfig
    from agent_cli.tools.workspace import Workspace
    from tests.support.fake_openai import FakeOpenAI, text
    from tests.support.mcp_servers import stdio_args

    with FakeOpenAI(models=["m1"]) as fake:
        workspace = workspace.resolve()
        configs = []
        if scenario.startswith("sdk"):
            for name in ("alpha", "beta"):
                command, *args = stdio_args("--name", name)
                configs.append(ServerConfig(name, command=command, args=tuple(args)))
        elif scenario.startswith("minimal"):
            script = workspace / "minimal.py"
            script.write_text(MINIMAL_SERVER)
            for name in ("alpha", "beta"):
                configs.append(ServerConfig(name, command=sys.executable, args=(str(script),)))
        if scenario == "minimal-warm":
            from agent_cli.tools.mcp import _import_sdk

            _import_sdk()
        servers = McpServers(configs, workspace, os.environ)

        provider = OpenAIProvider(fake.base_url, "", name="fake")
        fake.add(text("done"))

        def backend(_conversation: Conversation) -> BuiltinLoop:
            return BuiltinLoop(
                provider=provider,
                tools=builtin_tools(),
                context=ToolContext(Workspace(workspace)),
                settings=LoopSettings("m1", workspace),
                system_prompt=lambda mode: system_prompt(workspace, mode),
                parts=LoopParts(extra_tools=servers if configs else None),
            )

        session = Session(Conversation(workspace=str(workspace), mode="full"), backend, None)
        if scenario == "sdk-prewarmed":
            servers.start()
            await asyncio.sleep(PREWARM_SECONDS)
        try:
            started = time.perf_counter()
            run = asyncio.ensure_future(session.send("hi"))
            while not fake.requests and not run.done():
                await asyncio.sleep(0.0005)
            seconds = time.perf_counter() - started
            await run
            if len(fake.requests) != 1:
                raise SystemExit("the fake server did not get the round's request")
            if configs:
                names = {t["function"]["name"] for t in fake.requests[0].get("tools", [])}
                if not {"alpha_echo", "beta_echo"} & names and "alpha_one" not in names:
                    raise SystemExit(f"the MCP tools were not offered: {sorted(names)}")
        finally:
            await session.aclose()
            await servers.aclose()
            await provider.aclose()
        return seconds


if __name__ == "__main__":
    sys.exit(main())
