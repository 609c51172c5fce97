"""Hand-off overhead: our prompt to an external agent's first chunk on the event bus.

    python bench/bench_acp.py [--quick] [--rounds N]

A real Session and `ExternalAgent` driving the fixture ACP agent
(tests/support/acp_agent.py, written with the SDK) as a subprocess, in `full`
mode. Each message is one sample: the clock starts when `session.send()` is
called and stops when the first `delta` event of the answer reaches a
subscriber of the Session's bus (what a front end would draw). The agent
measures its own reply time in the same message, from receiving the prompt to
writing its first chunk (it waits `AGENT_DELAY` first, standing in for a
model); the difference is the hand-off path: the Session, the JSON-RPC round
trip over the pipes both ways (both SDKs' parsing included) and the mapping
into items and events. The first message (the agent's start, `initialize`,
`session/new`) is shown apart, for information.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.run import Row, error_row, limit_row, median, ms, print_table  # noqa: E402

ROUNDS, QUICK_ROUNDS = 30, 3
GOAL_MS = 20.0
AGENT_DELAY = 0.02  # seconds the fixture agent "thinks" before its first chunk

OVERHEAD = "prompt -> first chunk event, minus the agent's own time"
TOTAL = "prompt -> first chunk event"
FIRST = "first message: start, initialize, session/new"


class Samples:
    def __init__(self) -> None:
        self.total: list[float] = []  # send() -> first delta on the bus
        self.agent: list[float] = []  # the agent's own prompt -> first chunk
        self.first_message = 0.0


async def measure(rounds: int) -> Samples:
    from agent_cli.backends.external import ExternalAgent
    from agent_cli.engine.events import Delta
    from agent_cli.engine.items import Conversation
    from agent_cli.engine.session import Session
    from tests.support.acp_agent import fixture_spec, records

    samples = Samples()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve()
        workspace = root / "project"
        workspace.mkdir()
        steps = [
            {"op": "sleep", "seconds": AGENT_DELAY},
            {"op": "text", "text": "Hello"},
            {"op": "text", "text": ", world."},
        ]
        spec = fixture_spec({"turns": [{"steps": steps}]}, root / "agent")
        agent = ExternalAgent(spec, workspace)
        conversation = Conversation(workspace=str(workspace), mode="full")
        session = Session(conversation, lambda _conversation: agent, None)
        seen: list[float] = []

        def first_delta(event: object) -> None:
            if not seen and type(event) is Delta:
                seen.append(time.perf_counter())

        session.events.subscribe(first_delta)
        try:
            for index in range(rounds + 1):
                seen.clear()
                started = time.perf_counter()
                result = await session.send(f"message {index}")
                if result.reason.value != "answered" or not seen:
                    raise SystemExit(f"the message was not answered: {result}")
                took = seen[0] - started
                if index == 0:
                    samples.first_message = took
                    continue
                samples.total.append(took)
                samples.agent.append(records(root / "agent", "first_chunk")[-1]["seconds"])
        finally:
            await session.aclose()
    return samples


def rows(samples: Samples | None) -> list[Row]:
    if samples is None or not samples.total:
        return [error_row(OVERHEAD), error_row(TOTAL), error_row(FIRST)]
    overheads = [t - a for t, a in zip(samples.total, samples.agent, strict=True)]
    extra = median(overheads) * 1000
    agent = ms(median(samples.agent))
    return [
        limit_row(OVERHEAD, f"+{extra:.1f} ms", extra <= GOAL_MS, f"<= +{GOAL_MS:g} ms", agent),
        Row(TOTAL, ms(median(samples.total)), agent),
        Row(FIRST, ms(samples.first_message)),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 messages: a smoke test")
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args(argv)
    rounds = args.rounds or (QUICK_ROUNDS if args.quick else ROUNDS)
    notes = [
        f"{rounds} message(s) to one agent process after a first one; medians; 'ours' of the "
        "first row = median of (our time - the agent's own time) in the same message",
        f"the fixture agent waits {AGENT_DELAY * 1000:g} ms before its first chunk (a model's "
        "stand-in); baseline = its own measured time from the prompt to that chunk",
    ]
    try:
        samples: Samples | None = asyncio.run(measure(rounds))
    except (Exception, SystemExit) as e:
        samples = None
        notes.append(f"ERROR: {e!r}")
    print_table("ACP: the hand-off path to an external agent", rows(samples), notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
