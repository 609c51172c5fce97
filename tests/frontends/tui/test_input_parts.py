"""The input's parts without a screen: history, completion, the event feed."""

from __future__ import annotations

from pathlib import Path

from agent_cli.engine.events import Delta, ItemAdded, ItemUpdated, NoticeEvent, RunFinished
from agent_cli.engine.items import AssistantItem, NoticeItem
from agent_cli.frontends.tui.completion import (
    command_candidates,
    file_candidates,
    token_at,
    walk_files,
)
from agent_cli.frontends.tui.feed import EventFeed
from agent_cli.frontends.tui.history import History, history_file


def test_history_walks_back_and_forth_and_keeps_the_draft(tmp_path: Path):
    history = History(tmp_path / "h")
    for text in ("one", "two\nlines", "two\nlines", "three"):
        history.add(text)
    assert history.entries == ["one", "two\nlines", "three"]
    assert history.previous("draft") == "three"
    assert history.previous("three") == "two\nlines"
    assert history.next() == "three"
    assert history.next() == "draft"
    assert history.next() is None
    assert History(tmp_path / "h").entries == ["one", "two\nlines", "three"]


def test_history_is_per_workspace_and_survives_a_torn_line(tmp_path: Path):
    assert history_file(tmp_path / "a") != history_file(tmp_path / "b")
    path = tmp_path / "h"
    path.write_text('{"text": "kept"}\n{"text": "tor')
    assert History(path).entries == ["kept"]


def test_tokens_under_the_cursor():
    assert token_at("/he") == ("command", 0, "he")
    assert token_at("/mode read") is None
    assert token_at("look at @src/ma") == ("file", 8, "src/ma")
    assert token_at("mail@example") is None


def test_files_are_walked_without_the_usual_clutter(tmp_path: Path):
    for name in ("src/app.py", "src/util/io.py", ".git/config", "node_modules/x/y.js", "README.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    files = walk_files(tmp_path)
    assert files == ["README.md", "src/app.py", "src/util/io.py"]
    assert walk_files(tmp_path, limit=2) == files[:2]


def test_fuzzy_file_matching_prefers_the_file_name():
    files = ["docs/apple.md", "src/app.py", "src/mapping/plan.py"]
    assert [c.label for c in file_candidates("app", files)][:2] == ["src/app.py", "docs/apple.md"]
    assert [c.label for c in file_candidates("smp", files)] == ["src/mapping/plan.py"]
    assert file_candidates("zzz", files) == []


def test_commands_complete_by_prefix():
    assert [c.value for c in command_candidates("mo")] == ["/mode ", "/model "]
    assert command_candidates("quit")[0].runs and not command_candidates("mode")[0].runs


def test_the_feed_batches_deltas_and_wakes_once():
    wakes: list[bool] = []
    feed = EventFeed(wakes.append)
    item = AssistantItem()
    feed(ItemAdded(item))
    for piece in ("Hel", "lo", " there"):
        feed(Delta(item.id, text=piece))
    assert wakes == [False]  # at the next frame slot
    batch = feed.take()
    assert batch.added == [item] and batch.text == {item.id: "Hello there"}
    assert feed.streamed(item) == ("", "", True), "the batch is not shown yet"
    feed.commit(batch)
    assert feed.streamed(item) == ("Hello there", "", True)
    item.text, item.streaming = "Hello there", False
    feed(ItemUpdated(item))
    assert wakes == [False, False]
    feed(RunFinished("answered"))
    assert wakes == [False, False, True]  # the end is shown at once
    feed.commit(feed.take())
    assert feed.streamed(item) == ("Hello there", "", False)


def test_a_notice_with_an_item_is_not_shown_twice():
    feed = EventFeed(lambda now: None)
    feed(ItemAdded(NoticeItem("Stopped.")))
    feed(NoticeEvent("Stopped."))
    feed(NoticeEvent("Could not save."))
    assert feed.take().notices == [("Could not save.", "info")]
