"""Cold start: how long `agent` takes to start, answer, and reach the model server.

Each row compares the agent with a baseline measured in the same run: every
round runs every command once, in a shuffled order (so drift of a noisy
machine hits a command and its baseline alike), and the table shows medians.

    python bench/bench_startup.py [--quick] [--rounds N] [--module]

Rows (goals from the performance issue):

- `agent --version` vs `python -c pass`: <= 3x.
- `agent --help`, `agent run --help` vs `python -c "import typer"`: <= 1.3x.
- `agent run "hi"` (a 50-token answer from the fake server) vs
  `python -c "import typer, httpx"`: <= 1.5x; its peak RSS <= 60 MB.
- process start -> first request received by the server, minus the median of
  paired `python -c pass` runs: <= 150 ms. For scale, the same is measured for a
  bare client: a script that imports Typer and sends the request with
  `httpx.AsyncClient` and nothing else (without httpx's own CLI, as the agent)
  — the floor of the agent's dependencies and the standard library they load.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
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
    limit_row,
    median,
    ms,
    paired_median,
    print_table,
    python,
    ratio_row,
    run_rounds,
    warm_up,
)
from tests.support.fake_openai import FakeOpenAI, text  # noqa: E402

ROUNDS = 15
QUICK_ROUNDS = 1
ANSWER_TOKENS = 50
ANSWER = "".join(f"word{i} " for i in range(ANSWER_TOKENS)).strip()  # one delta per word
MODEL = "m1"

VERSION_GOAL = 3.0
HELP_GOAL = 1.3
RUN_GOAL = 1.5
RSS_GOAL_MB = 60.0
FIRST_REQUEST_GOAL_MS = 150.0
# The least a Typer + httpx program does to send the same request (see the docstring).
BARE_CLIENT = """\
import sys
sys.modules["httpx._main"] = None  # as the agent does: httpx's own CLI is not imported
import asyncio, os, typer, httpx
async def main():
    url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
    body = {"model": os.environ["AGENT_MODEL"], "stream": True,
            "messages": [{"role": "user", "content": "hi"}]}
    async with httpx.AsyncClient() as client:
        async with client.stream("POST", url, json=body) as response:
            async for line in response.aiter_lines():
                pass
asyncio.run(main())
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds: a smoke test")
    parser.add_argument(
        "--rounds", type=int, help=f"rounds (default {ROUNDS}, quick {QUICK_ROUNDS})"
    )
    parser.add_argument(
        "--module", action="store_true", help="start the agent as `python -m agent_cli`"
    )
    args = parser.parse_args(argv)
    rounds = args.rounds or (QUICK_ROUNDS if args.quick else ROUNDS)
    agent = agent_command(force_module=args.module)

    with FakeOpenAI(models=[MODEL]) as fake, isolated_home() as (cwd, env):
        env["OPENAI_BASE_URL"] = fake.base_url
        env["AGENT_MODEL"] = MODEL  # no model listing: the first request is the chat
        answer = text(ANSWER)

        def queue_answer() -> None:
            if fake.pending == 0:  # a run that failed may have left one queued
                fake.add(answer)

        def requests_seen() -> int:
            return len(fake.paths)

        def answered(out: str) -> bool:
            return out.strip() == ANSWER

        jobs = {
            job.key: job
            for job in (
                Job("python -c pass", python("-c", "pass")),
                Job("python -c 'import typer'", python("-c", "import typer")),
                Job("python -c 'import typer, httpx'", python("-c", "import typer, httpx")),
                Job("agent --version", agent("--version"), expect=lambda o: "agent" in o),
                Job("agent --help", agent("--help"), expect=lambda o: "run" in o),
                Job("agent run --help", agent("run", "--help"), expect=lambda o: "--model" in o),
                Job('agent run "hi"', agent("run", "hi"), before=queue_answer, expect=answered),
                Job(
                    'agent run "hi" (first request)',
                    agent("run", "hi"),
                    before=queue_answer,
                    expect=answered,
                    seen=requests_seen,
                ),
                Job(
                    "bare client (first request)",
                    python("-c", BARE_CLIENT),
                    before=queue_answer,
                    seen=requests_seen,
                ),
            )
        }
        every = list(jobs.values())
        warm_up(every, cwd=cwd, env=env)
        run_rounds(every, rounds, cwd=cwd, env=env)

    rows = table_rows(jobs)
    notes = [
        f"agent started as: {agent.how}",
        f"{rounds} round(s); every command once per round in a shuffled order; medians",
        f'agent run "hi": a {ANSWER_TOKENS}-delta answer from tests/support/fake_openai.py, '
        "stdin and stdout on /dev/null (read-only mode); AGENT_MODEL set (no model listing)",
        "peak RSS: ru_maxrss of the agent process (wait4), MB = 1024 KiB; baseline: "
        "python -c 'import typer, httpx'",
        "first request: spawn -> the fake server records the POST (polled every 1 ms), "
        "minus python -c pass, as the median of per-round differences",
        "bare client: imports Typer, POSTs the request with httpx.AsyncClient and reads the "
        "stream; nothing else (its start -> request is the dependencies' floor)",
        *failures(every),
    ]
    print_table("cold start", rows, notes)
    return 0


def table_rows(jobs: dict[str, Job]) -> list[Row]:
    def ok(*keys: str) -> bool:
        return all(jobs[k].error is None and jobs[k].samples for k in keys)

    def t(key: str) -> float:
        return median(jobs[key].seconds())

    rows: list[Row] = []
    pairs = (
        ("agent --version", "python -c pass", VERSION_GOAL),
        ("agent --help", "python -c 'import typer'", HELP_GOAL),
        ("agent run --help", "python -c 'import typer'", HELP_GOAL),
        ('agent run "hi"', "python -c 'import typer, httpx'", RUN_GOAL),
    )
    for name, base, goal in pairs:
        label = f"{name} vs {base}"
        rows.append(
            ratio_row(label, t(name), t(base), goal) if ok(name, base) else error_row(label)
        )

    run, typer_httpx = 'agent run "hi"', "python -c 'import typer, httpx'"
    label = 'peak RSS of agent run "hi"'
    if ok(run, typer_httpx):
        mb = median([s.max_rss_kb / 1024 for s in jobs[run].samples])
        base_mb = median([s.max_rss_kb / 1024 for s in jobs[typer_httpx].samples])
        rows.append(
            limit_row(
                label,
                f"{mb:.1f} MB",
                mb <= RSS_GOAL_MB,
                f"<= {RSS_GOAL_MB:g} MB",
                f"{base_mb:.1f} MB",
            )
        )
    else:
        rows.append(error_row(label))

    first, bare = 'agent run "hi" (first request)', "python -c pass"
    arrivals = [s.first_request for s in jobs[first].samples]
    seen = [a for a in arrivals if a is not None]
    if ok(first, bare) and len(seen) == len(arrivals):
        delta = paired_median(seen, jobs[bare].seconds())
        rows.append(
            ratio_row("start -> first request vs python -c pass", median(seen), t(bare), None)
        )
        rows.append(
            limit_row(
                "start -> first request, minus python -c pass",
                ms(delta),
                delta * 1000 <= FIRST_REQUEST_GOAL_MS,
                f"<= {FIRST_REQUEST_GOAL_MS:g} ms",
            )
        )
    else:
        rows.append(error_row("start -> first request vs python -c pass"))
        rows.append(error_row("start -> first request, minus python -c pass"))

    floor = "bare client (first request)"
    label = "bare Typer + httpx client: start -> request, minus python -c pass"
    floor_arrivals = [s.first_request for s in jobs[floor].samples]
    floor_seen = [a for a in floor_arrivals if a is not None]
    if ok(floor, bare) and len(floor_seen) == len(floor_arrivals) and len(seen) == len(arrivals):
        rows.append(Row(label, ms(paired_median(floor_seen, jobs[bare].seconds()))))
        above = paired_median(seen, floor_seen)
        rows.append(Row("start -> first request, agent minus the bare client", ms(above)))
    else:
        rows.append(error_row(label))
    return rows


if __name__ == "__main__":
    sys.exit(main())
