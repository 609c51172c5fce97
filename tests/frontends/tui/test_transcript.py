"""Long conversations: a page is mounted at first, older pages on scroll, search finds all."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent_cli import paths, wiring
from agent_cli.engine.events import ItemAdded
from agent_cli.engine.items import (
    AssistantItem,
    Conversation,
    Item,
    NoticeItem,
    SummaryItem,
    ToolItem,
    UserItem,
)
from agent_cli.engine.store import Store
from agent_cli.frontends.interactive import Interactive
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.assistant_view import AssistantView
from agent_cli.frontends.tui.transcript import FOUND_CLASS, PAGE
from agent_cli.settings import Settings
from agent_cli.wiring import Opening
from tests.frontends.tui.support import SIZE, shown_text, until

ITEMS = 2000
NEEDLE = "a-needle-in-the-haystack"


def long_items(count: int) -> list[Item]:
    items: list[Item] = []
    for n in range(count):
        kind = n % 4
        if kind == 0:
            items.append(UserItem(f"question {n}" + (f" {NEEDLE}" if n == 12 else "")))
        elif kind == 1:
            items.append(AssistantItem(f"Answer {n}.\n\n- a point\n- another", streaming=False))
        elif kind == 2:
            items.append(ToolItem("read_file", f"c{n}", title=f"Read file{n}.txt", state="done"))
        else:
            items.append(NoticeItem(f"notice {n}"))
    return items


@pytest.fixture
async def resumed(settings: Settings) -> AsyncIterator[Interactive]:
    conversation = Conversation(workspace=str(settings.workspace), title="long")
    conversation.items = long_items(ITEMS)
    Store(paths.conversations_dir()).save(conversation)
    opened = await wiring.open_interactive(settings, Opening(resume=conversation.id), "ask")
    try:
        yield opened
    finally:
        await opened.aclose()


async def test_a_long_conversation_opens_with_one_page_and_loads_more_at_the_top(
    resumed: Interactive, settings: Settings
):
    app = AgentApp(resumed, settings)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        await until(pilot, lambda: transcript.first == ITEMS - PAGE)  # the page's rest follows
        assert len(transcript.views) == PAGE
        assert (transcript.first, transcript.last) == (ITEMS - PAGE, ITEMS)
        assert transcript.scroll_y == transcript.max_scroll_y > 0, "opened at the end"
        transcript.scroll_home(animate=False, immediate=True)
        await until(pilot, lambda: transcript.first == ITEMS - 2 * PAGE)
        await pilot.pause()
        assert len(transcript.views) == 2 * PAGE
        assert transcript.scroll_y > 0, "what was on screen stays there"


async def test_ctrl_f_finds_text_in_an_item_not_mounted(resumed: Interactive, settings: Settings):
    app = AgentApp(resumed, settings)
    async with app.run_test(size=SIZE) as pilot:
        target = resumed.session.conversation.items[12]
        assert target.id not in app.transcript.views
        await pilot.press("ctrl+f")
        app.search_bar.input.value = NEEDLE
        await pilot.press("enter")
        await until(pilot, lambda: target.id in app.transcript.views)
        await pilot.pause()
        view = app.transcript.views[target.id]
        assert view.has_class(FOUND_CLASS)
        assert str(app.search_bar.count.render()) == "1 of 1"
        region = app.transcript.region
        assert view.region.overlaps(region), "the match is scrolled into view"
        await pilot.press("escape")
        assert not app.search_bar.display
        assert app.focused is app.composer.input


async def test_search_steps_through_matches_and_says_when_there_is_none(
    resumed: Interactive, settings: Settings
):
    app = AgentApp(resumed, settings)
    async with app.run_test(size=SIZE) as pilot:
        search = app.search_bar.input
        await pilot.press("ctrl+f")
        search.value = "Answer 1997"
        await pilot.press("enter")
        await pilot.pause()
        assert str(app.search_bar.count.render()) == "1 of 1"
        search.value = "no such text"
        await pilot.press("enter")
        await pilot.pause()
        assert str(app.search_bar.count.render()) == "no match"
        search.value = "question 199"  # 199 itself, 1992, 1996
        await pilot.press("enter")
        await pilot.pause()
        first = str(app.search_bar.count.render())
        await pilot.press("up")
        await pilot.pause()
        assert str(app.search_bar.count.render()) != first


async def test_an_answer_far_up_is_rendered_only_when_scrolled_to(
    resumed: Interactive, settings: Settings
):
    app = AgentApp(resumed, settings)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        flows = list(app.transcript.query(AssistantView))
        rendered = sum(flow.rendered_count for flow in flows)
        total = sum(flow.block_count for flow in flows)
        assert rendered < total / 2, f"{rendered} of {total} blocks rendered off screen"
        assert "Answer 1997." in shown_text(app.transcript)


async def test_a_compaction_summary_inserted_above_shows_in_its_place(
    resumed: Interactive, settings: Settings
):
    app = AgentApp(resumed, settings)
    async with app.run_test(size=SIZE) as pilot:
        items = resumed.session.conversation.items
        cut = ITEMS - 10  # inside the mounted window
        summary = SummaryItem("They talked about **modules**.", replaced=cut)
        items.insert(cut, summary)
        resumed.session.events.publish(ItemAdded(summary))
        await until(pilot, lambda: summary.id in app.transcript.views)
        await pilot.pause()
        transcript = app.transcript
        assert transcript.last == len(items)
        order = [child for child in transcript.children if child in transcript.views.values()]
        assert order.index(transcript.views[summary.id]) == cut - transcript.first
        assert "They talked about modules." in shown_text(transcript.views[summary.id])


async def test_a_sub_agents_work_shows_under_its_task_card_when_opened(settings: Settings):
    task = ToolItem("task", "t1", title="Task: find the parser", state="done", result="found")
    child_call = ToolItem("read_file", "c1", title="Read parser.py", state="done", parent=task.id)
    child_answer = AssistantItem("It is in parser.py.", streaming=False, parent=task.id)
    conversation = Conversation(workspace=str(settings.workspace), title="nested")
    conversation.items = [UserItem("where is the parser?"), task, child_call, child_answer]
    Store(paths.conversations_dir()).save(conversation)
    opened = await wiring.open_interactive(settings, Opening(resume=conversation.id), "ask")
    try:
        app = AgentApp(opened, settings)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            views = app.transcript.views
            children = [views[child_call.id], views[child_answer.id]]
            assert all(view.has_class("-child") and not view.display for view in children)
            views[task.id].expanded = True
            await pilot.pause()
            assert all(view.display for view in children)
            assert "It is in parser.py." in shown_text(views[child_answer.id])
            views[task.id].expanded = False
            await pilot.pause()
            assert not any(view.display for view in children)
    finally:
        await opened.aclose()
