"""MarkdownFlow: an answer's text as finished Markdown blocks plus a live plain-text tail.

The streaming design (measured in `bench/bench_tui.py`):

- Text arrives in pieces; `append` adds them to the tail and cuts off every
  block that is finished (`blocks.split_blocks`). A finished block is never
  parsed or laid out again.
- A block is rendered to lines (`markdown_render`) lazily, the first time
  one of its lines is on screen, and then kept for that width and theme.
  Until then its height is estimated from its source, so a long answer or a
  resumed conversation costs only what is visible.
- Rendering shares a per-frame time budget (`RENDER_BUDGET`): a block over
  budget is shown as plain text for a frame and rendered on the next one, so
  no frame waits long for Markdown. A block that has just been finished waits
  `SETTLE_SECONDS` before it is rendered: at a model's pace that is not seen,
  while in a flood of text (thousands of tokens a second: `FLOOD_RATE`) no
  block renders until the flood pauses — they scroll past as plain text, and
  only what is on screen then is rendered, once.
- The tail (the block still being written) is plain text: its complete lines
  are wrapped once each, only the last partial line again on each update.
- It is one Line-API widget however long the answer grows, so the transcript
  around it lays out a handful of children, not one per paragraph.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style
from textual.app import RenderResult
from textual.geometry import Region, Size
from textual.reactive import Reactive
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from agent_cli.frontends.tui.blocks import finish_blocks, split_blocks
from agent_cli.frontends.tui.markdown_render import Line, Renderer, renderer_for

RENDER_BUDGET = 0.006  # seconds of Markdown rendering per frame, for all flows together
FRAME_WINDOW = 0.030  # a render after this much quiet starts a new frame's budget
RETRY_SECONDS = 0.015  # when a block over budget is rendered (the next frame)
SETTLE_SECONDS = 0.12  # a streamed block is rendered once it has been finished this long
STREAMING_RETRY_SECONDS = 0.2  # while text keeps coming, its own repaints come first
FLOOD_RATE = 5_000  # characters a second: past any model's pace (a replay, a flood)


class Budget:
    """How much Markdown rendering the current frame may still do (`seconds` a frame).

    The flows that share a budget read the time from its `clock`: a test drives
    time with a budget of its own whose clock it moves by hand.
    """

    def __init__(
        self, clock: Callable[[], float] = time.perf_counter, seconds: float = RENDER_BUDGET
    ) -> None:
        self.clock = clock
        self.seconds = seconds
        self.start = 0.0
        self.spent = 0.0

    def allows(self) -> bool:
        now = self.clock()
        if now - self.start - self.spent > FRAME_WINDOW:
            self.start, self.spent = now, 0.0
        return self.spent < self.seconds

    def spend(self, seconds: float) -> None:
        self.spent += seconds


BUDGET = Budget()  # shared by every flow of the app


class _Block:
    """A finished block: its source, and its lines once rendered at `width`."""

    __slots__ = (
        "estimate",
        "estimate_width",
        "final",
        "lines",
        "plain",
        "plain_final",
        "settled",
        "source",
        "width",
    )

    def __init__(self, source: str, settled: float = 0.0) -> None:
        self.source = source
        self.settled = settled  # the time from which it may be rendered
        self.lines: list[Line] | None = None  # the rendered lines, at `width`
        self.plain: list[Line] | None = None  # the source as text, shown until rendered
        self.plain_final: dict[int, Strip] = {}  # line -> its strip, as `final`
        self.final: dict[int, Strip] = {}  # line -> strip cropped and styled for the widget
        self.width = -1
        self.estimate = 0
        self.estimate_width = -1

    def height(self, width: int) -> int:
        if self.lines is not None and self.width == width:
            return len(self.lines)
        if self.estimate_width != width:
            self.estimate_width = width
            self.plain = None
            self.estimate = sum(max(1, -(-len(line) // width)) for line in self.source.split("\n"))
        return self.estimate


class MarkdownFlow(Widget):
    """A Markdown document that grows at its end without redrawing what is done."""

    # Widget's own `virtual_size` asks for a second layout pass whenever it changes; for
    # a leaf that grows every frame that doubles the cost of streaming, and the pass that
    # measured the new size has already placed everything. Nor a repaint of its own: that
    # pass painted it, and one more would be a frame after every flush's frame.
    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False, repaint=False)

    def __init__(
        self,
        text: str = "",
        *,
        streaming: bool = False,
        classes: str = "",
        budget: Budget = BUDGET,
    ) -> None:
        super().__init__(classes=classes)
        self._budget = budget  # the render budget, and the clock the flow reads
        self._blocks: list[_Block] = []
        self._tail = ""
        self._length = 0  # characters received, to check the final text against
        self.streaming = streaming
        self._offsets: list[int] = []  # first line of each block at `_blocks_width`
        self._end = 0  # the line after the last block in `_offsets`
        self._blocks_width = -1
        self._tail_offset = 0
        self._total = 0
        self._layout_width = -1
        self._tail_key: tuple[int, int] = (-1, -1)  # (tail version, width) of `_tail_cache`
        self._tail_version = 0
        self._tail_done = 0  # characters of the tail whose lines are in `_done_lines`
        self._done_lines: list[Line] = []
        self._done_final: dict[int, Strip] = {}  # their cropped and styled versions
        self._tail_cache: list[Line] = []
        self._style = Style()
        self._retry_timer: Timer | None = None  # a repaint asked for later
        self._relayout_pending = False
        self._relayout_timer: Timer | None = None  # a streaming relayout, if no flush comes
        self._appended = 0.0  # when text last came
        self._flood_until = 0.0  # no block renders before this while text floods in
        self.reset(text, streaming)

    # -- content -----------------------------------------------------------------

    @property
    def block_count(self) -> int:
        return len(self._blocks)

    @property
    def has_text(self) -> bool:
        return bool(self._blocks) or bool(self._tail.strip())

    @property
    def rendered_count(self) -> int:
        """How many blocks have been rendered (the rest are only estimated)."""
        return sum(1 for block in self._blocks if block.lines is not None)

    def reset(self, text: str, streaming: bool) -> None:
        """Replace the whole document."""
        self._blocks, self._tail, self._length = [], "", 0
        self._blocks_width = -1
        self.streaming = streaming
        if streaming:
            self.append(text)
        else:
            self._length = len(text)
            self._blocks = [_Block(source) for source in finish_blocks(text)]
            self._changed(tail_reset=True)

    def append(self, text: str) -> None:
        """More text of a streaming answer."""
        if not text:
            return
        self._length += len(text)
        split = split_blocks(self._tail + text)
        now = self._budget.clock()
        if len(text) > FLOOD_RATE * (now - self._appended):
            self._flood_until = now + SETTLE_SECONDS
        self._appended = now
        settled = now + SETTLE_SECONDS
        self._blocks.extend(_Block(source, settled) for source in split.blocks)
        self._tail = split.tail
        self._changed(tail_reset=bool(split.blocks))

    def finish(self, text: str) -> None:
        """The answer is complete; `text` is all of it (authoritative)."""
        if len(text) != self._length:
            self.reset(text, streaming=False)
            return
        self._blocks.extend(_Block(source) for source in finish_blocks(self._tail))
        self._tail = ""
        self.streaming = False
        self._flood_until = 0.0
        for block in self._blocks:
            block.settled = 0.0  # the text stopped moving: what is on screen may render now
        if self._retry_timer is not None:  # a streaming retry may be far off: paint now
            self._retry_timer.stop()
            self._retry_timer = None
        self._render_last_screen()
        self._changed(tail_reset=True)

    def _render_last_screen(self) -> None:
        """Render the last blocks, as many as its container shows, now that the answer is done.

        The view follows the answer's end, so these are what the next frame shows. Rendered
        there instead, each one whose height differs from its estimate moves the ones above
        it into view, to be rendered in one more frame: three frames at the end of a long
        answer, the text jumping in each. Laid out at their real heights, it is one frame.
        """
        width = self.size.width
        if not self.is_mounted or width <= 0:
            return
        renderer = renderer_for(self.app)
        room = self.screen.size.height
        if isinstance(self.parent, Widget):  # the transcript: what of the screen it has
            room = min(room, self.parent.size.height)
        moved = False
        for block in reversed(self._blocks):
            if room <= 0:
                break
            if block.lines is None or block.width != width:
                estimated = block.height(width)
                moved |= len(self._render_lines_of(block, width, renderer)) != estimated
            room -= block.height(width) + 1
        if moved:
            self._blocks_width = -1  # the offsets laid out before are wrong now

    def invalidate(self) -> None:
        """Render everything again when next shown (the theme changed)."""
        for block in self._blocks:
            block.lines = block.plain = None
            block.final.clear()
        self._blocks_width = -1
        self._changed(tail_reset=True)

    def _changed(self, tail_reset: bool = False) -> None:
        if self._relayout_timer is not None:  # a block's height changed: lay it all out now
            self._relayout_timer.stop()
            self._relayout_timer = None
            self._relayout_pending = False
            self._blocks_width = -1
        self._tail_version += 1
        if tail_reset:
            self._tail_done, self._done_lines = 0, []
            self._done_final.clear()
        self._layout_width = -1
        if self.is_mounted:
            self.refresh(layout=True)

    # -- layout ------------------------------------------------------------------

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._layout(width)
        return self._total

    def render(self) -> RenderResult:  # pragma: no cover - render_line is used instead
        return ""

    def _layout(self, width: int) -> None:
        """Where each block starts at this width (estimates for blocks not yet rendered).

        Incremental: blocks only ever get appended, so the offsets of the ones laid
        out before are kept unless the width changed or a block's height did.
        """
        if self._layout_width == width:
            return
        if self._blocks_width != width:
            self._offsets, self._end, self._blocks_width = [], 0, width
        offsets, y = self._offsets, self._end
        for block in self._blocks[len(offsets) :]:
            if offsets:
                y += 1  # the blank line between blocks
            offsets.append(y)
            y += block.height(width)
        self._end = y
        tail = self._tail_lines(width)
        if tail and self._blocks:
            y += 1
        self._tail_offset = y
        self._total = y + len(tail)
        self._layout_width = width

    def _tail_lines(self, width: int) -> list[Line]:
        """The tail as plain lines: complete lines wrapped once, the partial one each time."""
        key = (self._tail_version, width)
        if key == self._tail_key:
            return self._tail_cache
        if not self._tail.strip():
            self._tail_key, self._tail_cache = key, []
            return []
        renderer = renderer_for(self.app)
        if self._tail_key[1] != width:
            self._tail_done, self._done_lines = 0, []
            self._done_final.clear()
        done = self._tail.rfind("\n") + 1
        if done > self._tail_done:
            for line in self._tail[self._tail_done : done - 1].split("\n"):
                self._done_lines.extend(renderer.plain(line, width) or [[]])
            self._tail_done = done
        partial = self._tail[done:]
        lines = [*self._done_lines, *(renderer.plain(partial, width) if partial else [])]
        self._tail_key, self._tail_cache = key, lines
        return lines

    # -- rendering ---------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        style = self.rich_style  # once per pass: it walks the ancestors' styles
        if style != self._style:
            self._style = style
            self._done_final.clear()
            for block in self._blocks:
                block.final.clear()
                block.plain_final.clear()
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        self._layout(width)
        if y >= self._tail_offset:
            index = y - self._tail_offset
            if index < len(self._done_lines):  # a complete line of the tail: it stays
                final = self._done_final.get(index)
                if final is None:
                    final = self._done_final[index] = self._finish(self._done_lines[index], width)
                return final
            tail = self._tail_cache
            return self._finish(tail[index] if 0 <= index < len(tail) else [], width)
        index = bisect_right(self._offsets, y) - 1
        if index < 0:
            return Strip.blank(width, self._style)
        block = self._blocks[index]
        local = y - self._offsets[index]
        if block.lines is None or block.width != width:
            renderer = renderer_for(self.app)
            wait = max(block.settled, self._flood_until) - self._budget.clock()
            if wait > 0 or not self._budget.allows():
                self._retry(max(wait, RETRY_SECONDS))
                return self._plain_strip(block, local, width, renderer)
            self._render_block(block, width, renderer)
        final = block.final.get(local)
        if final is None:
            lines = block.lines or []
            line = lines[local] if local < len(lines) else []
            final = block.final[local] = self._finish(line, width)
        return final

    def _finish(self, line: Line, width: int) -> Strip:
        """The widget's line: in its colours, exactly `width` cells (one Strip made)."""
        style = self._style
        styled = list(Segment.apply_style(line, style))
        return Strip(Segment.adjust_line_length(styled, width, style), width)

    def _render_block(self, block: _Block, width: int, renderer: Renderer) -> None:
        estimated = block.height(width)
        lines = self._render_lines_of(block, width, renderer)
        if len(lines) != estimated and not self._relayout_pending:
            # The lines below move: lay out again after this frame (not in the middle of it).
            # While text streams, in the next flush's frame (its append lays out anyway), so
            # a frame that renders blocks is not followed by one more of its own.
            self._relayout_pending = True
            if self.streaming:
                self._relayout_timer = self.set_timer(STREAMING_RETRY_SECONDS, self._relayout)
            else:
                self.call_after_refresh(self._relayout)

    def _render_lines_of(self, block: _Block, width: int, renderer: Renderer) -> list[Line]:
        clock = self._budget.clock
        started = clock()
        block.lines = lines = renderer.markdown(block.source, width)
        block.width = width
        block.final.clear()
        self._budget.spend(clock() - started)
        return lines

    def _plain_strip(self, block: _Block, local: int, width: int, renderer: Renderer) -> Strip:
        """A line of the block's stand-in text; kept, as a flood repaints it every frame."""
        if block.plain is None:
            block.plain = renderer.chopped(block.source, width)
            block.plain_final = {}
        final = block.plain_final.get(local)
        if final is None:
            line = block.plain[local] if local < len(block.plain) else []
            final = block.plain_final[local] = self._finish(line, width)
        return final

    def _retry(self, delay: float) -> None:
        """Paint again later, when the blocks shown as plain text may be rendered."""
        if self._retry_timer is None:
            if self.streaming:  # each flush repaints anyway: only a pause needs the timer
                delay = max(delay, STREAMING_RETRY_SECONDS)
            self._retry_timer = self.set_timer(delay, self._retry_now)

    def _retry_now(self) -> None:
        self._retry_timer = None
        waited = self._budget.clock() - self._appended
        if self.streaming and waited < STREAMING_RETRY_SECONDS:
            # A flush repainted the flow since: its frame did the retry's work. Ask again
            # only for a pause in the stream (a frame of its own is then no extra one).
            self._retry(STREAMING_RETRY_SECONDS - waited)
            return
        self.refresh()

    def _relayout(self) -> None:
        self._relayout_timer = None
        self._relayout_pending = False
        self._blocks_width = self._layout_width = -1
        self.refresh(layout=True)
