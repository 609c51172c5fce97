"""Rewinding a conversation and forking it (issue #17, items 6 and 7), in the engine.

A rewind takes a user message and everything after it out of the conversation;
what it takes out stays in the store's history, read back from disk. A fork is
an independent copy under a new id.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_cli.backends.subagent_definitions import Definitions
from agent_cli.backends.subagents import Subagents
from agent_cli.engine.items import AssistantItem, Conversation, UserItem
from agent_cli.engine.session import Session
from agent_cli.engine.store import Store, read_stored
from agent_cli.errors import UsageError
from agent_cli.providers.scripted import ScriptedProvider, answer, calls
from tests.support.sessions import make_session

TIMEOUT = 30


def texts(items: list) -> list[str]:
    return [item.text for item in items if isinstance(item, UserItem | AssistantItem)]


async def three_messages(tmp_path: Path) -> tuple[Session, ScriptedProvider, Store]:
    store = Store(tmp_path / "store")
    turns = [answer("a1"), answer("a2"), answer("a3"), answer("again")]
    session, provider, _ = make_session(tmp_path, turns, store=store)
    for text in ("one", "two", "three"):
        await asyncio.wait_for(session.send(text), TIMEOUT)
    return session, provider, store


def message(session: Session, text: str) -> UserItem:
    return next(point for point in session.rewind_points() if point.text == text)


async def test_a_rewind_takes_the_message_and_what_follows_out_of_what_the_model_reads(
    tmp_path: Path,
) -> None:
    session, provider, _ = await three_messages(tmp_path)
    assert [point.text for point in session.rewind_points()] == ["one", "two", "three"]

    rewound = session.rewind(message(session, "two").id)

    assert texts(session.conversation.items) == ["one", "a1"]
    assert rewound.at == 2 and texts(rewound.items) == ["two", "a2", "three", "a3"]
    await asyncio.wait_for(session.send("two, said better"), TIMEOUT)
    sent = [m.content for m in provider.requests[-1].messages]
    assert sent == ["one", "a1", "two, said better"], "the model must not read what was rewound"


async def test_the_rewound_items_are_gone_from_the_stored_conversation_but_kept_in_its_log(
    tmp_path: Path,
) -> None:
    session, _, store = await three_messages(tmp_path)
    path = store.path(session.conversation.id)
    before = path.read_bytes()

    session.rewind(message(session, "two").id)

    after = path.read_bytes()
    assert after.startswith(before), "a rewind is appended to the log, nothing rewritten"
    assert b'{"rewind":{"at":2,' in after[len(before) :]
    loaded = Store(tmp_path / "store").load(session.conversation.id)
    assert texts(loaded.items) == ["one", "a1"]
    (history,) = loaded.rewound
    assert history.at == 2 and texts(history.items) == ["two", "a2", "three", "a3"]
    assert [i.id for i in history.items] == [i.id for i in session.conversation.rewound[0].items]


async def test_a_log_rewritten_whole_still_holds_every_rewind(tmp_path: Path) -> None:
    session, _, _ = await three_messages(tmp_path)
    session.rewind(message(session, "three").id)
    session.rewind(message(session, "two").id)
    other = Store(tmp_path / "store")  # a new store's first save rewrites the log whole
    loaded = other.load(session.conversation.id)
    loaded.items.append(UserItem("four"))
    other.save(loaded)

    log = other.path(loaded.id).read_bytes()
    assert log.count(b'{"rewound":') == 2 and b'{"rewind":' not in log
    again = Store(tmp_path / "store").load(loaded.id)
    assert [texts(r.items) for r in again.rewound] == [["three", "a3"], ["two", "a2"]]
    assert texts(again.items) == ["one", "a1", "four"]
    assert read_stored(other.path(loaded.id)) == loaded.to_json()


def test_saves_after_a_rewind_append_and_read_back(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    conversation = Conversation(workspace=str(tmp_path))
    words = ["one", "a1", "two", "a2", "three", "a3"]
    conversation.items += [
        UserItem(word * 500) if n % 2 == 0 else AssistantItem(word * 500, streaming=False)
        for n, word in enumerate(words)
    ]  # long items: the log is not big enough beside them to be rewritten
    session = Session(conversation, lambda _c: pytest.fail("no run"), store)
    session.save()
    session.rewind(conversation.items[2].id)
    session.rewind(conversation.items[0].id)
    conversation.items.append(UserItem("fresh"))
    session.save()

    log = store.path(conversation.id).read_bytes()
    assert log.count(b'{"rewind":') == 2 and b'{"rewound":' not in log, "appended"
    loaded = Store(tmp_path / "store").load(conversation.id)
    assert texts(loaded.items) == ["fresh"]
    assert [[t[:3] for t in texts(r.items)] for r in loaded.rewound] == [
        ["two", "a2a", "thr", "a3a"],
        ["one", "a1a"],
    ]
    assert loaded.to_json() == conversation.to_json()


async def test_a_rewind_is_refused_during_a_run_and_for_an_unknown_message(
    tmp_path: Path,
) -> None:
    gate = asyncio.Event()

    class Waiting(ScriptedProvider):
        async def stream(self, request):  # type: ignore[no-untyped-def]
            await gate.wait()
            async for event in super().stream(request):
                yield event

    session, _, _ = make_session(tmp_path, [], provider=Waiting([answer("a")]))
    run = asyncio.ensure_future(session.send("one"))
    while not session.conversation.items:  # the run has begun and added the message
        await asyncio.sleep(0)
    with pytest.raises(UsageError, match="stop it first"):
        session.rewind(session.conversation.items[0].id)
    gate.set()
    await asyncio.wait_for(run, TIMEOUT)
    with pytest.raises(UsageError, match="`/rewind` lists them"):
        session.rewind("no-such-item")
    assert texts(session.conversation.items) == ["one", "a"]


def test_an_external_agents_conversation_cannot_be_rewound(tmp_path: Path) -> None:
    conversation = Conversation(workspace=str(tmp_path), agent="claude-code")
    conversation.items.append(UserItem("hello"))
    session = Session(conversation, lambda _c: pytest.fail("no backend"), None)
    with pytest.raises(UsageError, match=r"claude-code.*cannot be rewound"):
        session.rewind(conversation.items[0].id)
    assert len(conversation.items) == 1


async def test_a_sub_agents_items_go_with_their_task(tmp_path: Path) -> None:
    task = json.dumps({"description": "look", "prompt": "look around"})
    turns = [answer("a1"), calls(("t1", "task", task)), answer("child said"), answer("a2")]
    subagents = Subagents(Definitions(()), 3, 50)
    session, _, _ = make_session(tmp_path, turns, subagents=subagents)
    await asyncio.wait_for(session.send("one"), TIMEOUT)
    await asyncio.wait_for(session.send("two"), TIMEOUT)
    items = session.conversation.items
    assert any(item.parent for item in items), "the sub-agent left items"
    # The sub-agent's prompt is not the person's: it is no place to rewind to.
    assert [point.text for point in session.rewind_points()] == ["one", "two"]

    rewound = session.rewind(message(session, "two").id)

    assert not any(item.parent for item in session.conversation.items)
    assert any(item.parent for item in rewound.items)
    assert texts(session.conversation.items) == ["one", "a1"]


async def test_a_fork_is_an_independent_copy_under_a_new_id(tmp_path: Path) -> None:
    session, _, store = await three_messages(tmp_path)
    session.rewind(message(session, "three").id)
    media = store.directory / f"{session.conversation.id}.media"
    media.mkdir()
    (media / "shot.png").write_bytes(b"png bytes")

    copy = session.fork()

    original = session.conversation
    assert copy.id != original.id and store.path(copy.id).is_file()
    assert store.load(copy.id).to_json()["items"] == original.to_json()["items"]
    assert texts(store.load(copy.id).rewound[0].items) == ["three", "a3"]
    assert (store.directory / f"{copy.id}.media" / "shot.png").read_bytes() == b"png bytes"
    copy.items.append(UserItem("only in the copy"))
    store.save(copy)
    assert texts(store.load(original.id).items) == ["one", "a1", "two", "a2"]


def test_a_fork_without_a_store_says_why(tmp_path: Path) -> None:
    session = Session(Conversation(workspace=str(tmp_path)), lambda _c: pytest.fail(""), None)
    with pytest.raises(UsageError, match="--no-save"):
        session.fork()
