"""Streaming overhead: `agent run` printing a 20,000-delta answer vs a bare httpx loop.

Both read the same answer from the fake server (tests/support/fake_openai.py),
in the same run, interleaved round by round:

- ours: `agent run "hi"`, its stdout on /dev/null (every delta is still
  written and flushed; the warm-up run checks the printed answer);
- baseline: a minimal script run with the same interpreter that POSTs to the
  same server with `httpx.AsyncClient`, reads the stream with `aiter_lines()`,
  `json.loads` each `data:` line and collects `choices[0].delta.content`
  (printing the joined answer once at the end, so it can be checked too).

Each is also run on the same text sent as ONE delta, which is the process's
own startup baseline. The per-delta cost is the median over rounds of
(20,000-delta time − 1-delta time) / 19,999: startup and imports cancel, what
is left is what every streamed token costs. The goal (<= 1.5x) applies to that
per-delta cost; the whole-process ratio is reported for information.

    python bench/bench_stream.py [--quick] [--rounds N] [--deltas N] [--module]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.run import (  # noqa: E402
    Job,
    Row,
    agent_command,
    error_row,
    failures,
    isolated_home,
    median,
    paired_median,
    print_table,
    python,
    ratio_row,
    run_rounds,
    warm_up,
)
from tests.support.fake_openai import FakeOpenAI, Scripted, text  # noqa: E402

ROUNDS = 10
QUICK_ROUNDS = 1
DELTAS = 20_000
MODEL = "m1"
PER_DELTA_GOAL = 1.5

# The bare loop the agent is measured against: the least a client can do with the stream.
BARE_LOOP = """\
import asyncio, json, os, sys
import httpx

async def main():
    url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
    body = {"model": os.environ["AGENT_MODEL"], "stream": True,
            "messages": [{"role": "user", "content": "hi"}]}
    pieces = []
    async with httpx.AsyncClient(timeout=60, verify=False) as client:
        async with client.stream("POST", url, json=body) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                for choice in json.loads(data).get("choices") or ():
                    content = (choice.get("delta") or {}).get("content")
                    if content:
                        pieces.append(content)
    sys.stdout.write("".join(pieces))

asyncio.run(main())
"""


def answer_text(deltas: int) -> str:
    """About four characters per delta, like a model's tokens; deterministic."""
    words = ("the", "stream", "of", "tokens", "keeps", "coming", "while", "we", "wait")
    out: list[str] = []
    size = 0
    i = 0
    while size < deltas * 4:
        word = words[i % len(words)] + (" " if i % 11 else "\n")
        out.append(word)
        size += len(word)
        i += 1
    return "".join(out)[: deltas * 4]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds: a smoke test")
    parser.add_argument(
        "--rounds", type=int, help=f"rounds (default {ROUNDS}, quick {QUICK_ROUNDS})"
    )
    parser.add_argument("--deltas", type=int, default=DELTAS, help=f"default {DELTAS}")
    parser.add_argument(
        "--module", action="store_true", help="start the agent as `python -m agent_cli`"
    )
    args = parser.parse_args(argv)
    rounds = args.rounds or (QUICK_ROUNDS if args.quick else ROUNDS)
    deltas: int = max(2, args.deltas)
    agent = agent_command(force_module=args.module)
    answer = answer_text(deltas)

    # One server per answer, so an answer a failed run left queued is still the right one.
    with (
        FakeOpenAI(models=[MODEL]) as many,
        FakeOpenAI(models=[MODEL]) as one,
        isolated_home() as (cwd, env),
    ):
        env["AGENT_MODEL"] = MODEL

        def served(
            fake: FakeOpenAI, scripted: Scripted
        ) -> tuple[dict[str, str], Callable[[], None]]:
            def queue() -> None:
                if fake.pending == 0:
                    fake.add(scripted)

            return {**env, "OPENAI_BASE_URL": fake.base_url}, queue

        many_env, queue_many = served(many, text(answer, chunks=deltas))
        one_env, queue_one = served(one, text(answer, chunks=1))

        def agent_printed(out: str) -> bool:
            return out.rstrip("\n") == answer.rstrip("\n")

        def loop_printed(out: str) -> bool:
            return out == answer

        run = agent("run", "hi")
        bare = python("-c", BARE_LOOP)
        jobs = {
            job.key: job
            for job in (
                Job("agent many", run, queue_many, agent_printed, env=many_env),
                Job("agent one", run, queue_one, agent_printed, env=one_env),
                Job("bare many", bare, queue_many, loop_printed, env=many_env),
                Job("bare one", bare, queue_one, loop_printed, env=one_env),
            )
        }
        every = list(jobs.values())
        warm_up(every, cwd=cwd, env=env)
        run_rounds(every, rounds, cwd=cwd, env=env)

    notes = [
        f"agent started as: {agent.how}; baseline: a bare httpx.AsyncClient + aiter_lines() "
        "+ json.loads loop (same interpreter)",
        f"{rounds} round(s); the 4 runs of a round in a shuffled order; medians",
        f"answer: {len(answer):,} characters in {deltas:,} deltas (or in 1 delta for the "
        "startup rows); agent stdout on /dev/null, stdin /dev/null",
        f"per delta = median over rounds of (time with {deltas:,} deltas - time with 1) "
        f"/ {deltas - 1:,}; the goal applies to this row (wall time). The CPU-time row is "
        "the same from the child's rusage: steadier on a busy machine",
        *failures(every),
    ]
    print_table(f"streaming: {deltas:,} deltas", table_rows(jobs, deltas), notes)
    return 0


def table_rows(jobs: dict[str, Job], deltas: int) -> list[Row]:
    def ok(*keys: str) -> bool:
        return all(jobs[k].error is None and jobs[k].samples for k in keys)

    def t(key: str) -> float:
        return median(jobs[key].seconds())

    def per_delta_us(prefix: str, cpu: bool = False) -> float:
        many, one = jobs[f"{prefix} many"], jobs[f"{prefix} one"]
        if cpu:
            return paired_median(many.cpu_seconds(), one.cpu_seconds()) / (deltas - 1) * 1e6
        return paired_median(many.seconds(), one.seconds()) / (deltas - 1) * 1e6

    rows: list[Row] = []
    label = f"whole process, {deltas:,} deltas"
    rows.append(
        ratio_row(label, t("agent many"), t("bare many"), None)
        if ok("agent many", "bare many")
        else error_row(label)
    )
    label = "startup: the same answer in 1 delta"
    rows.append(
        ratio_row(label, t("agent one"), t("bare one"), None)
        if ok("agent one", "bare one")
        else error_row(label)
    )
    label = "per delta (time minus startup)"
    cpu_label = "per delta, CPU time of the process"
    if ok("agent many", "agent one", "bare many", "bare one"):
        rows.append(
            ratio_row(label, per_delta_us("agent"), per_delta_us("bare"), PER_DELTA_GOAL, "us")
        )
        rows.append(
            ratio_row(
                cpu_label, per_delta_us("agent", True), per_delta_us("bare", True), None, "us"
            )
        )
    else:
        rows.extend([error_row(label), error_row(cpu_label)])
    return rows


if __name__ == "__main__":
    sys.exit(main())
