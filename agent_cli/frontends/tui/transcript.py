"""The conversation pane: a window of item views over the conversation's items.

Only a window of items is mounted: the last `PAGE` when a conversation opens
(a resumed conversation of thousands of items opens at once), one more page
each time the person scrolls to the top, a page around a search match when
the match is older than the window. New items are mounted only while the
window reaches the end of the conversation (the live end); otherwise they
load like older ones, when scrolled to.

The view stays pinned to the bottom while the answer streams (Textual's
`anchor`), until the person scrolls up; scrolling back down pins it again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widget import AwaitMount, Widget

from agent_cli.frontends.tui.styles import beside, read_styles

if TYPE_CHECKING:
    from textual.app import App

    from agent_cli.engine.items import AssistantItem, Item
    from agent_cli.frontends.tui.tool_card import ToolCard

PAGE = 50  # items mounted at a time
FIRST_PAINT = 20  # of the first page, mounted before the first frame (the rest just after)
FOUND_CLASS = "-found"
# The views' stylesheets (the app's own are in app.py's STYLES): they name only the views.
VIEW_STYLES = beside(
    __file__,
    "markdown_flow.tcss",
    "user_message.tcss",
    "assistant_view.tcss",
    "reasoning_block.tcss",
    "notice_view.tcss",
    "tool_card.tcss",
    "diff_view.tcss",
    "own_command_view.tcss",
)

Streamed = Callable[["AssistantItem"], tuple[str, str, bool]]  # the items come later


def load_views() -> None:
    """Import the views' modules (~12 ms): a thread does, once the first frame is out."""
    import agent_cli.frontends.tui.assistant_view
    import agent_cli.frontends.tui.notice_view
    import agent_cli.frontends.tui.tool_card
    import agent_cli.frontends.tui.user_message  # noqa: F401


def read_view_styles(app: App[object]) -> None:
    """The views' stylesheets, read with the first view (styles.py): a new conversation's
    first frame has no view, and parsing them cost ~3 ms before it."""
    read_styles(app, VIEW_STYLES)


def make_view(item: Item, streamed: Streamed) -> Widget:
    """The widget for one item (an answer still streaming gets its text so far)."""
    # The views (Markdown, diffs: ~10 ms of imports) and the items' types (~8 ms) come with
    # the first item, after a new conversation's first frame, which has none.
    from agent_cli.engine.items import AssistantItem, NoticeItem, SummaryItem, ToolItem, UserItem
    from agent_cli.frontends.tui.assistant_view import AssistantView
    from agent_cli.frontends.tui.notice_view import NoticeView
    from agent_cli.frontends.tui.tool_card import ToolCard
    from agent_cli.frontends.tui.user_message import UserMessage
    from agent_cli.media import chips

    if isinstance(item, AssistantItem):
        text, reasoning, streaming = streamed(item)
        return AssistantView(text, reasoning, streaming=streaming)
    if isinstance(item, ToolItem):
        return ToolCard(item)
    if isinstance(item, UserItem):
        return UserMessage(item.text, chips(item.images, item.attachments))
    if isinstance(item, NoticeItem):
        return NoticeView(item.text, item.level)
    if isinstance(item, SummaryItem):
        heading = f"**Summary of the {item.replaced} items before it** (the model reads this)"
        return NoticeView(f"{heading}\n\n{item.text}", "info", summary=True)
    raise TypeError(f"no view for {item!r}")


class Transcript(VerticalScroll):
    """Item views for `items[first:last]`, plus replies to slash commands."""

    # As in MarkdownFlow: no second layout pass each time the content grows, nor a repaint
    # of its own (the layout pass that sets it paints what moved). Its scrollbar is always
    # shown (app.tcss), so growing never changes its width either.
    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False, repaint=False)

    def __init__(self, streamed: Streamed, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[Item] = []
        self.first = 0  # index of the first mounted item
        self.last = 0  # index after the last mounted item
        self.floor = 0  # older items than this are not loaded (/clear)
        self.views: dict[str, Widget] = {}
        self._streamed = streamed
        self._loading = False
        self._found: Widget | None = None
        self._open_tasks: set[str] = set()  # ids of expanded cards (a `task` shows its work)
        # Paging and re-windowing await mounts; one at a time, or a page loaded
        # while an insertion re-windows lands with stale indices.
        self._moving = asyncio.Lock()

    def _scroll_update(self, virtual_size: Size) -> None:
        """Textual calls this in the screen's layout pass, before it composes the frame; the
        scrollbars' thumbs it moves would be painted in a frame of their own (a second
        frame per flush): they go into the frame being composed instead."""
        super()._scroll_update(virtual_size)
        bars: set[Widget] = {
            bar
            for bar in (self._vertical_scrollbar, self._horizontal_scrollbar)
            if bar is not None and bar._repaint_required
        }
        if bars and self.is_attached:
            for bar in bars:
                bar._repaint_required = False  # its region is dirty: repainted below
            self.screen._compositor.update_widgets(bars)

    @property
    def live(self) -> bool:
        """Whether the window reaches the end of the conversation."""
        return self.last >= len(self.items)

    # -- whole views -------------------------------------------------------------

    async def show(self, items: list[Item]) -> None:
        """Show a conversation: its last page, scrolled to the end.

        The last `FIRST_PAINT` items are enough to fill a screen, so they are
        mounted first and the rest of the page right after the first frame.
        """
        self.items = items
        self.floor = 0
        async with self._moving:
            await self._window(max(0, len(items) - FIRST_PAINT), len(items))
        self.anchor()
        if self.first > 0:
            self._loading = True
            self.call_after_refresh(self._load_rest_of_page)

    async def _load_rest_of_page(self) -> None:
        await self.load_older(PAGE - FIRST_PAINT)

    async def clear_view(self) -> None:
        """Empty the pane; the conversation is kept (and Ctrl+F still finds it)."""
        self.floor = len(self.items)
        async with self._moving:
            await self._window(self.floor, self.floor)
        self.anchor()

    async def _window(self, first: int, last: int) -> None:
        await self.remove_children()
        self.views.clear()
        self._found = None
        self.first, self.last = first, last
        await self.mount_all([self._view(item) for item in self.items[first:last]])

    def _view(self, item: Item) -> Widget:
        read_view_styles(self.app)
        view = make_view(item, self._streamed)
        self.views[item.id] = view
        if item.parent:  # a sub-agent's work: under its `task` card, shown when that is open
            view.add_class("-child")
            view.display = item.parent in self._open_tasks
        return view

    def on_tool_card_toggled(self, event: ToolCard.Toggled) -> None:
        if event.expanded:
            self._open_tasks.add(event.item_id)
        else:
            self._open_tasks.discard(event.item_id)
        hidden = set()  # closed cards, and everything under one
        for item in self.items[self.first : self.last]:
            if not item.parent:
                continue
            shown = item.parent in self._open_tasks and item.parent not in hidden
            if not shown:
                hidden.add(item.id)
            view = self.views.get(item.id)
            if view is not None:
                view.display = shown

    # -- the live end ------------------------------------------------------------

    def added(self, items: list[Item]) -> AwaitMount | None:
        """Items the run added (they are in `self.items` already); the mount of their
        views, when there are views to mount."""
        count = len(self.items)
        ends = self.items[count - len(items) :]
        if any(a is not b for a, b in zip(ends, items, strict=True)):
            self.call_later(self._rewindow)  # an item went in before others (/compact)
            return None
        if self.last < count - len(items):
            return None  # the window does not reach the end: they load when scrolled to
        fresh = [self._view(item) for item in items if item.id not in self.views]
        self.last = count
        return self.mount_all(fresh) if fresh else None

    async def _rewindow(self) -> None:
        """Mount the window again after an insertion moved the items under it."""
        async with self._moving:
            await self._rewindow_now()

    async def _rewindow_now(self) -> None:
        size = max(PAGE, self.last - self.first)
        if self.last >= len(self.items) - 1:
            await self._window(max(self.floor, len(self.items) - size), len(self.items))
            return
        mounted = (i for i, item in enumerate(self.items) if item.id in self.views)
        first = next(mounted, self.first)
        await self._window(first, min(len(self.items), first + size))

    def view(self, item_id: str) -> Widget | None:
        return self.views.get(item_id)

    def add_view(self, view: Widget) -> None:
        """A widget of the front end's own (a `!command`'s output): shown, never stored."""
        read_view_styles(self.app)
        self.mount(view)
        if self.live:
            self.scroll_end(animate=False)

    def add_reply(self, text: str, level: str) -> None:
        """A slash command's answer: shown, never part of the conversation."""
        from agent_cli.frontends.tui.notice_view import NoticeView  # as in make_view

        read_view_styles(self.app)
        self.mount(NoticeView(text, level, reply=True))
        if self.live:
            self.scroll_end(animate=False)

    # -- paging ------------------------------------------------------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._loading or not self.is_mounted:
            return
        if new_value <= 0 and self.first > self.floor:
            self._loading = True
            self.call_later(self.load_older)
        elif new_value >= self.max_scroll_y and not self.live:
            self._loading = True
            self.call_later(self.load_newer)

    async def load_older(self, count: int = PAGE) -> None:
        """Mount `count` items before the window, keeping what is on screen where it is."""
        try:
            async with self._moving:
                await self._mount_older(count)
        finally:
            self._loading = False

    async def _mount_older(self, count: int) -> None:
        start = max(self.floor, self.first - count)
        if start >= self.first:
            return
        views = [self._view(item) for item in self.items[start : self.first]]
        height = self.virtual_size.height
        at_bottom = self.scroll_y >= self.max_scroll_y  # then the anchor keeps it there
        first_child = self.children[0] if self.children else None
        if first_child is None:
            await self.mount_all(views)
        else:
            await self.mount_all(views, before=first_child)
        self.first = start
        if not at_bottom:
            self.call_after_refresh(self._keep_position, height, self.scroll_y)

    def _keep_position(self, old_height: int, old_y: float) -> None:
        grown = self.virtual_size.height - old_height
        if grown > 0:
            self.scroll_to(y=old_y + grown, animate=False, immediate=True)

    async def load_newer(self) -> None:
        try:
            async with self._moving:
                end = min(len(self.items), self.last + PAGE)
                views = [self._view(item) for item in self.items[self.last : end]]
                self.last = end
                await self.mount_all(views)
        finally:
            self._loading = False

    # -- search ------------------------------------------------------------------

    async def reveal(self, index: int) -> Widget | None:
        """Bring item `index` on screen, mounting a page around it if it is not mounted."""
        if not 0 <= index < len(self.items):
            return None
        item = self.items[index]
        if not self.first <= index < self.last or item.id not in self.views:
            self.floor = 0
            first = max(0, index - PAGE // 2)
            async with self._moving:
                await self._window(first, min(len(self.items), first + PAGE))
            self.release_anchor()
        view = self.views.get(item.id)
        if view is None:
            return None
        if self._found is not None:
            self._found.remove_class(FOUND_CLASS)
        view.add_class(FOUND_CLASS)
        self._found = view
        self.call_after_refresh(self.scroll_to_widget, view, animate=False, top=True)
        return view

    def clear_found(self) -> None:
        if self._found is not None:
            self._found.remove_class(FOUND_CLASS)
            self._found = None

    def theme_changed(self) -> None:
        """Rendered Markdown is in the old theme's colours: render it again."""
        from agent_cli.frontends.tui.markdown_flow import MarkdownFlow  # as in make_view

        for flow in self.query(MarkdownFlow):
            flow.invalidate()
