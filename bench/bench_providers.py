"""Per-delta cost of each provider's stream parsing vs a bare httpx reader, in-process.

For each wire format (OpenAI chat completions, Anthropic Messages, OpenAI
Responses) its loopback fake serves the same 20,000-delta answer, and two
readers take it, in the same process and run, interleaved in shuffled order:

- ours: the real provider's `stream()` (HTTP, SSE parsing, decoding into
  `TextDelta` events), the texts collected and checked against the answer;
- baseline: the least a client can do — `httpx.AsyncClient.stream`, then
  `aiter_lines()`, `json.loads` of each `data:` line, and a dict lookup or two
  for the text of that format's delta events.

Each reader also takes the same text as ONE delta; the per-delta cost is the
median over rounds of (time for 20,000 deltas − time for 1) / 19,999, so the
request's own cost cancels out. The goal is ours ≤ 1.5× the baseline, per format.

    python bench/bench_providers.py [--quick] [--rounds N] [--deltas N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from agent_cli.providers.anthropic import AnthropicProvider  # noqa: E402
from agent_cli.providers.base import Message, Request, TextDelta  # noqa: E402
from agent_cli.providers.openai import OpenAIProvider  # noqa: E402
from agent_cli.providers.responses import ResponsesProvider  # noqa: E402
from bench.bench_stream import answer_text  # noqa: E402
from bench.run import Row, error_row, paired_median, print_table, ratio_row  # noqa: E402
from tests.support import fake_anthropic, fake_openai, fake_responses  # noqa: E402

ROUNDS = 10
QUICK_ROUNDS = 2
DELTAS = 20_000
PER_DELTA_GOAL = 1.5
MODEL = "m1"
REQUEST = Request(MODEL, "", (Message("user", "hi"),))


def openai_text(frame: dict[str, Any]) -> str | None:
    for choice in frame.get("choices") or ():
        return (choice.get("delta") or {}).get("content")
    return None


def anthropic_text(frame: dict[str, Any]) -> str | None:
    if frame.get("type") == "content_block_delta":
        return frame["delta"].get("text")
    return None


def responses_text(frame: dict[str, Any]) -> str | None:
    if frame.get("type") == "response.output_text.delta":
        return frame["delta"]
    return None


class Wire(NamedTuple):
    name: str
    fake: Callable[[], fake_openai.FakeOpenAI]
    builders: Any  # the fake's module: text(answer, chunks=N)
    provider: Callable[[str], Any]
    path: str  # POST path under the fake's base URL
    text_of: Callable[[dict[str, Any]], str | None]  # the baseline's per-frame lookup


WIRES = (
    Wire(
        "openai",
        fake_openai.FakeOpenAI,
        fake_openai,
        OpenAIProvider,
        "/chat/completions",
        openai_text,
    ),
    Wire(
        "anthropic",
        fake_anthropic.FakeAnthropic,
        fake_anthropic,
        AnthropicProvider,
        "/v1/messages",
        anthropic_text,
    ),
    Wire(
        "responses",
        fake_responses.FakeResponses,
        fake_responses,
        ResponsesProvider,
        "/responses",
        responses_text,
    ),
)


async def ours(provider: Any) -> str:
    pieces = [event.text async for event in provider.stream(REQUEST) if type(event) is TextDelta]
    return "".join(pieces)


async def bare(client: httpx.AsyncClient, url: str, text_of: Callable[..., str | None]) -> str:
    body = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    pieces: list[str] = []
    async with client.stream("POST", url, json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                continue  # read on to the end, as the providers do (it keeps the connection)
            text = text_of(json.loads(data))
            if text:
                pieces.append(text)
    return "".join(pieces)


class Samples(NamedTuple):
    many: list[float]
    one: list[float]


async def measure(wire: Wire, answer: str, deltas: int, rounds: int) -> dict[str, Samples]:
    """Timings of ours and the baseline on `wire`, for `deltas` deltas and for 1."""
    bodies = {
        "many": wire.builders.text(answer, chunks=deltas),
        "one": wire.builders.text(answer, chunks=1),
    }
    samples = {"ours": Samples([], []), "bare": Samples([], [])}
    with wire.fake() as fake:
        provider = wire.provider(fake.base_url)
        client = httpx.AsyncClient(timeout=60)
        readers: dict[str, Callable[[], Awaitable[str]]] = {
            "ours": lambda: ours(provider),
            "bare": lambda: bare(client, fake.base_url + wire.path, wire.text_of),
        }
        jobs = [(reader, size) for reader in readers for size in bodies]
        try:
            for round_number in range(rounds + 1):  # round 0 warms up and checks
                random.shuffle(jobs)
                for reader, size in jobs:
                    fake.add(bodies[size])
                    gc.collect()
                    started = time.perf_counter()
                    got = await readers[reader]()
                    took = time.perf_counter() - started
                    if got != answer:
                        raise RuntimeError(f"{wire.name} {reader} read a different answer")
                    if round_number:
                        getattr(samples[reader], size).append(took)
        finally:
            await client.aclose()
            await provider.aclose()
    return samples


def per_delta_us(samples: Samples, deltas: int) -> float:
    return paired_median(samples.many, samples.one) / (deltas - 1) * 1e6


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds: a smoke test")
    parser.add_argument("--rounds", type=int, help=f"default {ROUNDS}, quick {QUICK_ROUNDS}")
    parser.add_argument("--deltas", type=int, default=DELTAS, help=f"default {DELTAS}")
    args = parser.parse_args(argv)
    rounds = args.rounds or (QUICK_ROUNDS if args.quick else ROUNDS)
    deltas: int = max(2, args.deltas)
    answer = answer_text(deltas)
    rows: list[Row] = []
    errors: list[str] = []
    for wire in WIRES:
        label = f"{wire.name}: per delta vs bare httpx reader"
        try:
            samples = asyncio.run(measure(wire, answer, deltas, rounds))
        except Exception as exc:  # reported under the table; the others still run
            rows.append(error_row(label))
            errors.append(f"{wire.name}: {type(exc).__name__}: {exc}")
            continue
        ours_us = per_delta_us(samples["ours"], deltas)
        bare_us = per_delta_us(samples["bare"], deltas)
        rows.append(ratio_row(label, ours_us, bare_us, PER_DELTA_GOAL, "us"))
    notes = [
        "in-process, one asyncio loop per format; the fake serves from a thread of this process",
        f"{rounds} round(s) after a warm-up; the 4 runs of a round in a shuffled order",
        f"answer: {len(answer):,} characters in {deltas:,} deltas (or 1); per delta = median "
        f"over rounds of (time with {deltas:,} - time with 1) / {deltas - 1:,}",
        "ours: provider.stream() to TextDelta events; baseline: httpx aiter_lines + json.loads",
        *errors,
    ]
    print_table(f"provider stream parsing: {deltas:,} deltas", rows, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
