"""A rewind under `kill -9` (issue #17, item 6): a kill at any moment loses nothing.

A writer process grows one conversation and rewinds it at random points, a
save after each step, and is killed at random moments, again and again; after
each kill the conversation loads, and every item any earlier load saw is still
there: in the conversation, or in its history of rewinds.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from agent_cli.engine.items import AssistantItem, UserItem
from agent_cli.engine.store import Store

ROOT = Path(__file__).resolve().parents[2]
KILLS = 15
SEED = 17
CONVERSATION = "20260101-000000-abcdef"

WRITER = textwrap.dedent(
    f"""
    import random, sys
    from pathlib import Path

    from agent_cli.engine.items import AssistantItem, Conversation, UserItem
    from agent_cli.engine.session import Session
    from agent_cli.engine.store import Store

    folder, rng = Path(sys.argv[1]), random.Random(int(sys.argv[2]))
    store = Store(folder)
    if store.list():
        conversation = store.load("{CONVERSATION}")
    else:
        conversation = Conversation(workspace="/w", id="{CONVERSATION}")
    session = Session(conversation, lambda _c: None, store)
    n = 0
    while True:
        n += 1
        conversation.items.append(UserItem(f"m{{n}} " + "x" * rng.randrange(4000)))
        conversation.items.append(AssistantItem("a" * rng.randrange(4000), streaming=False))
        session.save()
        print("saved", flush=True)
        points = session.rewind_points()
        if len(points) > 2 and rng.random() < 0.6:
            session.rewind(rng.choice(points[1:]).id)
            print("rewound", flush=True)
    """
)


def kept_ids(store: Store) -> list[str]:
    """Every item id the stored conversation holds, in it or in its history; checked whole."""
    conversation = store.load(CONVERSATION)
    kinds = [type(item) for item in conversation.items]
    assert kinds == [UserItem, AssistantItem] * (len(kinds) // 2), "a message lost its answer"
    ids = [item.id for item in conversation.items]
    for rewound in conversation.rewound:
        assert isinstance(rewound.items[0], UserItem), "a rewind starts at a message"
        ids += [item.id for item in rewound.items]
    assert len(ids) == len(set(ids)), "an item is kept twice"
    return ids


def test_kills_during_rewinds_lose_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "conversations"
    rng = random.Random(SEED)
    seen: set[str] = set()
    rewinds = 0
    for _ in range(KILLS):
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(folder), str(rng.randrange(10**6))],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            for _ in range(rng.randrange(1, 15)):
                line = writer.stdout.readline() if writer.stdout else ""
                assert line, "the writer stopped on its own"
                rewinds += line == "rewound\n"
            time.sleep(rng.uniform(0, 0.004))  # into the next save or rewind
            os.kill(writer.pid, signal.SIGKILL)
        finally:
            writer.wait(30)
            if writer.stdout:
                writer.stdout.close()
        ids = kept_ids(Store(folder))
        lost = seen - set(ids)
        assert not lost, f"{len(lost)} items an earlier load saw are gone"
        seen.update(ids)
    assert rewinds > KILLS, "the writers rewound as they went"
    history = Store(folder).load(CONVERSATION).rewound
    assert history, "rewinds were kept"
