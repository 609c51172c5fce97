"""`Run`: what a backend reports becomes events, deltas joined per event-loop turn."""

from __future__ import annotations

import asyncio

from agent_cli.engine.backend import Run
from agent_cli.engine.events import Delta, Event, ItemAdded, NoticeEvent
from agent_cli.engine.items import AssistantItem, Conversation


def recorded() -> tuple[Run, list[Event]]:
    events: list[Event] = []
    run = Run(Conversation(workspace="/w"), events.append, lambda: "ask", lambda: None)
    return run, events


async def test_the_deltas_of_one_turn_are_published_once_at_its_end():
    run, events = recorded()
    item = AssistantItem()
    run.add(item)
    run.delta(item, "Hel")
    run.delta(item, "lo")
    assert [type(e) for e in events] == [ItemAdded]  # the turn is not over yet
    await asyncio.sleep(0)
    assert events[1:] == [Delta(item.id, "Hello")]
    run.delta(item, " there")
    await asyncio.sleep(0)
    assert events[2:] == [Delta(item.id, " there")]  # the next turn's own


async def test_order_holds_across_items_kinds_and_other_events():
    run, events = recorded()
    first, second = AssistantItem(), AssistantItem()
    run.add(first)
    run.add(second)
    run.delta(first, "", "think")  # reasoning, then text: two deltas, in order
    run.delta(first, "a")
    run.delta(second, "b")
    run.delta(first, "c")
    run.notice("note")  # any other event publishes what is pending first
    run.delta(first, "d")
    run.flush()
    got = [e for e in events if not isinstance(e, ItemAdded)]
    assert got == [
        Delta(first.id, "", "think"),
        Delta(first.id, "a"),
        Delta(second.id, "b"),
        Delta(first.id, "c"),
        NoticeEvent("note", "info"),
        Delta(first.id, "d"),
    ]
    await asyncio.sleep(0)  # the flush scheduled for the turn finds nothing left
    assert len([e for e in events if not isinstance(e, ItemAdded)]) == 6


async def test_a_delta_of_both_kinds_is_reasoning_then_text():
    run, events = recorded()
    item = AssistantItem()
    run.add(item)
    run.delta(item, "said", "thought")
    run.flush()
    assert events[1:] == [Delta(item.id, "", "thought"), Delta(item.id, "said")]
