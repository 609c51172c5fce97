"""MarkdownFlow in a flood of text: blocks stay plain text until it pauses, then render."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from agent_cli.frontends.tui.markdown_flow import SETTLE_SECONDS, MarkdownFlow
from agent_cli.frontends.tui.markdown_render import renderer_for

PARAGRAPH = "Some **bold** words in a paragraph that goes on for a while. " * 6


class Host(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield MarkdownFlow(streaming=True)


async def test_a_flood_renders_no_block_until_it_ends_then_what_is_shown():
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        flow = app.query_one(MarkdownFlow)
        text = ""
        deadline = asyncio.get_running_loop().time() + SETTLE_SECONDS * 3
        while asyncio.get_running_loop().time() < deadline:  # ~10,000 characters a second
            piece = f"{PARAGRAPH}\n\n" * 2
            flow.append(piece)
            text += piece
            await pilot.pause(0.02)
        assert flow.block_count > 10
        assert flow.rendered_count == 0  # longer than SETTLE_SECONDS, yet nothing rendered
        assert "**bold**" in "\n".join(s.text for s in flow.render_lines(flow.region))
        flow.finish(text)
        await pilot.pause(0.1)
        await pilot.pause()
        assert flow.rendered_count > 0  # the flood is over: what is on screen renders
        assert "**bold**" not in "\n".join(s.text for s in flow.render_lines(flow.region))


async def test_at_a_models_pace_a_finished_block_renders_while_streaming():
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        flow = app.query_one(MarkdownFlow)
        flow.append("A **first** paragraph.\n\n")
        for word in ("and", "a", "second", "one", "that", "is", "still", "being", "written"):
            await pilot.pause(0.05)  # ~20 words a second
            flow.append(word + " ")
        await pilot.pause(SETTLE_SECONDS + 0.3)
        assert flow.streaming and flow.rendered_count == 1


def test_the_stand_in_text_is_cut_at_the_width_in_cells():
    app = Host()
    renderer = renderer_for(app)
    lines = renderer.chopped("abcdef\n\n日本語x\nab\tc", 4)
    texts = ["".join(s.text for s in line) for line in lines]
    assert texts == ["abcd", "ef", "", "日本", "語x", "ab  ", "    ", "c"]
