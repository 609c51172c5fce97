"""MarkdownFlow in a flood of text: blocks stay plain text until it pauses, then render."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.pilot import Pilot
from textual.strip import Strip

from agent_cli.frontends.tui.markdown_flow import (
    FRAME_WINDOW,
    SETTLE_SECONDS,
    Budget,
    MarkdownFlow,
)
from agent_cli.frontends.tui.markdown_render import renderer_for
from tests.frontends.tui.support import until

PARAGRAPH = "Some **bold** words in a paragraph that goes on for a while. " * 6
STEP = 0.02  # seconds between two pieces of a flood, on the test's clock


class Clock:
    """Time that moves only when the test moves it (the flow's render budget reads it)."""

    def __init__(self) -> None:
        self.now = 1000.0  # as a monotonic clock would read, long after it started

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class PaintedFlow(MarkdownFlow):
    """A flow that counts the frames it is painted in."""

    painted = 0

    def render_lines(self, crop: Region) -> list[Strip]:
        self.painted += 1
        return super().render_lines(crop)


class Host(App[None]):
    CSS = "MarkdownFlow { height: auto; }"  # as in the app (markdown_flow.tcss)

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.budget = Budget(clock)

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield PaintedFlow(streaming=True, budget=self.budget)


async def frame(pilot: Pilot[None], flow: MarkdownFlow) -> str:
    """Let the app handle what is pending and paint, then the text of the flow's lines."""
    await pilot.pause()
    return "\n".join(strip.text for strip in flow.render_lines(flow.region))


async def test_a_flood_renders_no_block_until_it_ends_then_what_is_shown():
    clock = Clock()
    app = Host(clock)
    async with app.run_test(size=(100, 30)) as pilot:
        flow = app.query_one(PaintedFlow)
        text = ""
        for _ in range(round(SETTLE_SECONDS * 3 / STEP)):  # ~37,000 characters a second
            piece = f"{PARAGRAPH}\n\n" * 2
            flow.append(piece)
            text += piece
            clock.advance(STEP)
            shown = await frame(pilot, flow)
            assert flow.rendered_count == 0 and "**bold**" in shown, "a block rendered mid-flood"
        assert flow.block_count > 10
        # Three times SETTLE_SECONDS of flood has gone by, yet nothing rendered.
        flow.finish(text)
        shown = await frame(pilot, flow)
        assert flow.rendered_count > 0  # the flood is over: what is on screen renders
        assert "**bold**" not in shown


async def test_the_end_of_a_flood_is_one_frame_of_rendered_markdown_at_the_end():
    # Blocks whose rendered height is not their source's: each rendered in a frame of its
    # own would move the ones above it into view, to be rendered in one more frame.
    blocks = ["## A heading", "- one\n- two\n- three", "```python\nx = 1\n```", PARAGRAPH]
    clock = Clock()
    app = Host(clock)
    async with app.run_test(size=(100, 30)) as pilot:
        flow = app.query_one(PaintedFlow)
        scroll = app.query_one(VerticalScroll)
        scroll.anchor()  # as the transcript follows an answer's end
        text = ""
        for i in range(60):
            piece = f"{blocks[i % len(blocks)]}\n\n"
            flow.append(piece)
            text += piece
            clock.advance(0.001)  # a flood
            await pilot.pause()
        flow.finish(text)
        before, rendered = flow.painted, flow.rendered_count
        assert rendered > 0  # the end's blocks: rendered before the frame lays them out
        for _ in range(5):  # what a frame schedules after itself runs in these
            await pilot.pause()
        # The layout's frame and the scroll's that follows the end; no block rendered in
        # them, no layout again (which took two frames more).
        assert flow.rendered_count == rendered
        assert flow.painted - before <= 2
        shown = flow.render_lines(Region(0, scroll.scroll_y, flow.size.width, scroll.size.height))
        lines = [strip.text.rstrip() for strip in shown]
        assert scroll.scroll_y == scroll.max_scroll_y > 0
        assert not any(mark in line for line in lines for mark in ("**", "##", "```", "- one"))
        assert "Some bold words" in lines[-1] or "Some bold words" in lines[-2]


async def test_at_a_models_pace_a_finished_block_renders_while_streaming():
    clock = Clock()
    app = Host(clock)
    async with app.run_test(size=(100, 30)) as pilot:
        flow = app.query_one(PaintedFlow)
        flow.append("A **first** paragraph.\n\n")
        await frame(pilot, flow)
        assert flow.rendered_count == 0, "rendered before it had settled"
        for word in ("and", "a", "second", "one", "that", "is", "still", "being", "written"):
            clock.advance(0.05)  # ~20 words a second
            flow.append(word + " ")
            await frame(pilot, flow)
        clock.advance(SETTLE_SECONDS)  # a pause: what repaints now is the flow's own retry
        await until(pilot, lambda: flow.rendered_count == 1)
        shown = await frame(pilot, flow)
        assert flow.streaming and flow.rendered_count == 1
        assert "**first**" not in shown and "first" in shown


async def test_a_block_past_the_frames_budget_is_plain_text_until_a_later_frame():
    clock = Clock()
    app = Host(clock)
    async with app.run_test(size=(100, 30)) as pilot:
        flow = app.query_one(PaintedFlow)
        await frame(pilot, flow)
        assert app.budget.allows()  # a frame begins, and other flows spend all of it
        app.budget.spend(app.budget.seconds)
        flow.reset("A **first** paragraph.\n\nA **second** one.", streaming=False)
        shown = await frame(pilot, flow)
        assert flow.rendered_count == 0 and "**first**" in shown and "**second**" in shown
        clock.advance(FRAME_WINDOW * 2)  # the frames that follow have budget left
        await until(pilot, lambda: flow.rendered_count == 2)  # repainted by its own retry
        shown = await frame(pilot, flow)
        assert "**" not in shown and "second one." in shown


def test_the_stand_in_text_is_cut_at_the_width_in_cells():
    app = Host(Clock())
    renderer = renderer_for(app)
    lines = renderer.chopped("abcdef\n\n日本語x\nab\tc", 4)
    texts = ["".join(s.text for s in line) for line in lines]
    assert texts == ["abcd", "ef", "", "日本", "語x", "ab  ", "    ", "c"]
