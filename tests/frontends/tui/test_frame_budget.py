"""The frame budget while text streams (SPEC §12): one batched update per flush, at most
~30 flushes a second however many deltas come; what else moves meanwhile (the spinner, a
block waiting to be rendered, a block whose height changed) is painted in a flush's frame.

Frames are counted as Textual makes them (`App._display`, once per rendered frame, headless
too) and flushes as the app makes them; how fast is the benchmark's business (bench/)."""

from __future__ import annotations

import dataclasses
import queue
import time
from collections.abc import Iterator

import pytest
from rich.console import RenderableType
from textual.screen import Screen

from agent_cli.engine.events import Delta
from agent_cli.frontends.interactive import Interactive
from agent_cli.frontends.tui import markdown_flow, status_line
from agent_cli.frontends.tui.app import FLUSH_SECONDS, AgentApp
from agent_cli.frontends.tui.assistant_view import AssistantView
from agent_cli.frontends.tui.feed import EventFeed
from agent_cli.settings import Settings
from tests.frontends.tui.support import RUN_TIMEOUT, SIZE, send, settle, until
from tests.support.fake_openai import FakeOpenAI, Scripted, text

PARAGRAPH = "The stream of tokens keeps coming while a model writes its answer. " * 3
GROUP = 10  # deltas the server sends at a time, in the one-frame-per-flush test
ANSWER = "\n\n".join(
    f"## Part {n}\n\n{PARAGRAPH}\n\n- a **point**\n- another `one`" for n in range(12)
)


@pytest.fixture
def moving(settings: Settings) -> Settings:
    """The spinner turning: the budget must hold with it (the other tests turn it off)."""
    return dataclasses.replace(settings, reduce_motion=False)


async def test_a_streamed_answer_paints_per_flush_at_most_30_flushes_a_second(
    moving: Settings, interactive: Interactive, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
):
    # 600 deltas in ~400 network reads (the provider makes one delta of a read), arriving
    # over a second or so: many deltas to a flush.
    fake.add(text(ANSWER, chunks=600).replace(split=200, delay=0.002))
    frames: list[float] = []
    flushes: list[float] = []
    display, show_news = AgentApp._display, AgentApp._show_news

    def counted(app: AgentApp, screen: Screen, renderable: RenderableType | None) -> None:
        if renderable is not None:
            frames.append(time.monotonic())
        display(app, screen, renderable)

    def flush(app: AgentApp) -> None:
        flushes.append(time.monotonic())
        show_news(app)

    monkeypatch.setattr(AgentApp, "_display", counted)
    monkeypatch.setattr(AgentApp, "_show_news", flush)
    app = AgentApp(interactive, moving)
    async with app.run_test(size=SIZE) as pilot:
        app.composer.input.cursor_blink = False  # the input's own blink is not the stream's
        app.composer.input.set_text("write")
        sent, first_frame = len(flushes), len(frames)
        await pilot.press("enter")
        await until(pilot, lambda: not app.session.running)
        streamed_frames = len(frames) - first_frame
        streamed_flushes = len(flushes) - sent
        await settle(pilot, app)
        deltas = app.feed.deltas
        view = app.transcript.query_one(AssistantView)
        assert view.block_count > 20 and not view.streaming
    assert deltas >= 100 and streamed_flushes * 2 < deltas, "many deltas to a flush"
    # Frames follow flushes, not deltas: one a flush (the test below counts them one by
    # one), a little slack for the run's start and end; nothing per delta.
    assert streamed_frames <= streamed_flushes + 3, (streamed_frames, streamed_flushes)
    # The rate over the stream, not the smallest gap: a flush the run's events ask for at
    # once may follow a timed one closely, and a busy machine only ever lowers the rate.
    streamed = flushes[sent:-1]  # the end's comes at once
    assert len(streamed) > 10, streamed
    seconds = streamed[-1] - streamed[0]
    assert len(streamed) <= seconds / FLUSH_SECONDS * 1.1 + 3, "at most ~28 flushes a second"


def test_a_batch_counts_the_characters_it_brings_which_tell_a_flood():
    feed = EventFeed(lambda now: None)
    for _ in range(300):
        feed(Delta(item="a", text="word"))
    feed(Delta(item="b", reasoning="hmm"))
    batch = feed.take()
    assert batch.text == {"a": "word" * 300} and batch.reasoning == {"b": "hmm"}
    assert batch.chars == 1203 and feed.deltas == 301
    assert feed.take().chars == 0, "the next batch counts only its own"


async def test_the_spinner_turns_in_the_streams_frames_not_frames_of_its_own(
    moving: Settings, interactive: Interactive, monkeypatch: pytest.MonkeyPatch
):
    app = AgentApp(interactive, moving)
    async with app.run_test(size=SIZE) as pilot:
        status = app.status
        status.state = "running"
        await pilot.pause()
        asked: list[str] = []  # the repaints the spinner asks for itself
        monkeypatch.setattr(status, "refresh", lambda *a, **k: asked.append("frame"))
        status.render()  # painted just now, as in a flush's frame
        before = status._frame
        status.paint_with_frame()  # a flush before the spinner's tick
        assert asked == [], "not repainted unchanged"
        status._spin()  # the spinner's tick right after such a frame
        assert status._frame == (before + 1) % 10, "it turns"
        assert asked == [], "no frame of its own: the next flush shows it"
        status.paint_with_frame()
        assert asked == ["frame"], "the turn is shown in the flush's frame"
        asked.clear()
        status.render()
        status._painted -= 1.0  # a second since the last paint: the stream has paused
        status._spin()
        assert asked == ["frame"], "with no flush to show it, its own frame"
        status.state = "idle"


async def test_one_flush_paints_exactly_one_frame(
    app: AgentApp, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
):
    """Each flush of a stream (views mounted, text grown, the transcript's scrollbar
    moved) is one frame: no second frame for a layout its sizes ask for, nor one for the
    scrollbar's thumb. The server sends the answer a few deltas at a time, when the test
    says; the test flushes by hand and counts the frames that flush made once the app has
    nothing left to do."""
    events = [e + b"\n\n" for e in text(ANSWER, chunks=240).body.split(b"\n\n") if e]
    gate: queue.Queue[None] = queue.Queue()
    groups = [b"".join(events[i : i + GROUP]) for i in range(1, len(events), GROUP)]

    def released() -> Iterator[bytes]:
        for group in groups:
            gate.get(timeout=RUN_TIMEOUT)
            yield group

    fake.add(Scripted(events[0], more=released))
    # A pause in the stream gets frames of its own by design (a block's late relayout, the
    # run's clock): on a busy machine each step here may be such a pause. Not this test's.
    monkeypatch.setattr(markdown_flow, "STREAMING_RETRY_SECONDS", 3600.0)
    monkeypatch.setattr(status_line, "TICK_SECONDS", 3600.0)
    frames: list[int] = []
    display = AgentApp._display

    def counted(app: AgentApp, screen: Screen, renderable: RenderableType | None) -> None:
        if renderable is not None:
            frames.append(1)
        display(app, screen, renderable)

    monkeypatch.setattr(AgentApp, "_display", counted)
    async with app.run_test(size=SIZE) as pilot:
        app.composer.input.cursor_blink = False
        monkeypatch.setattr(app.feed, "_wake", lambda now: None)  # the test flushes
        await send(pilot, app, "write")
        per_flush: list[int] = []
        for _ in range(len(groups) + 1):  # the user's message, then each group
            await until(pilot, lambda: app.feed.dirty)
            before = len(frames)
            app._show_news()
            await until(pilot, lambda: not app._holds)  # its views mounted
            for _ in range(3):  # whatever that frame asked for afterwards: done by now
                await pilot.pause()
            per_flush.append(len(frames) - before)
            gate.put(None)
        await until(pilot, lambda: not app.session.running)
        view = app.transcript.query_one(AssistantView)
        assert view.block_count > 20 and app.transcript.max_scroll_y > 0, "it scrolled"
        assert per_flush == [1] * len(per_flush), per_flush
        # The thumb was painted where it belongs: repainting it changes nothing.
        shown = app.export_screenshot()
        app.transcript.vertical_scrollbar.refresh()
        await pilot.pause()
        assert app.export_screenshot() == shown
