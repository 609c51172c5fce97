"""`/rewind` and Esc Esc in the TUI (issue #17, item 6): a picker of the earlier messages,
the chosen one back in the input, the offer to restore the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import OptionList

from agent_cli import paths
from agent_cli.engine.items import UserItem
from agent_cli.engine.store import Store
from agent_cli.frontends.tui.app import AgentApp
from agent_cli.frontends.tui.picker import Picker
from agent_cli.frontends.tui.question import Question
from agent_cli.git import checkpoints_available
from tests.frontends.tui.support import SIZE, send, settle, shown_text, until
from tests.support.fake_openai import FakeOpenAI, text, tool_calls

pytestmark = pytest.mark.skipif(not checkpoints_available(), reason="git is not installed")


def write(path: str, content: str) -> object:
    return tool_calls(("c1", "write_file", json.dumps({"path": path, "content": content})))


async def two_messages(pilot, app: AgentApp, fake: FakeOpenAI, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    """ "say hello" answered, then "change a.txt", which wrote the file."""
    (workspace / "a.txt").write_text("alpha\n")
    fake.add(text("First answer."), write("a.txt", "changed\n"), text("Wrote it."))
    app.session.set_mode("full")
    for message in ("say hello", "change a.txt"):
        await send(pilot, app, message)
        await settle(pilot, app)
    assert (workspace / "a.txt").read_text() == "changed\n"


def stored_user_texts(app: AgentApp) -> tuple[list[str], list[list[str]]]:
    """The user messages of the stored conversation, and of each rewind's, read from disk."""
    conversation = Store(paths.conversations_dir()).load(app.session.conversation.id)
    kept = [i.text for i in conversation.items if isinstance(i, UserItem)]
    rewound = [[i.text for i in r.items if isinstance(i, UserItem)] for r in conversation.rewound]
    return kept, rewound


async def test_escape_twice_picks_a_message_refills_the_input_and_restores_the_files(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    async with app.run_test(size=SIZE) as pilot:
        await two_messages(pilot, app, fake, workspace)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, Picker), "one Escape alone opens nothing"
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, Picker))
        options = app.screen.query_one(OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert labels == ["1.  say hello", "2.  change a.txt"]
        assert options.highlighted == 1, "the newest message comes first to hand"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, Question))
        assert "Restore the files to before 'Write a.txt'" in app.screen.question
        await pilot.press("y")
        await until(pilot, lambda: "Restored 1 file" in shown_text(app.transcript))
        await settle(pilot, app)
        assert (workspace / "a.txt").read_text() == "alpha\n"

        assert app.composer.input.text == "change a.txt"
        shown = shown_text(app.transcript)
        assert "First answer." in shown and "Wrote it." not in shown
        assert "Restored 1 file to before 'Write a.txt'" in shown
        assert stored_user_texts(app) == (["say hello"], [["change a.txt"]])

        fake.add(text("Again."))
        await send(pilot, app, app.composer.input.text + " again")
        await settle(pilot, app)
    sent = [m["content"] for m in fake.requests[-1]["messages"][1:]]
    assert sent == ["say hello", "First answer.", "change a.txt again"]


async def test_rewind_to_the_first_message_keeping_the_files(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    async with app.run_test(size=SIZE) as pilot:
        await two_messages(pilot, app, fake, workspace)
        await send(pilot, app, "/rewind")
        await until(pilot, lambda: isinstance(app.screen, Picker))
        await pilot.press("up", "enter")
        await until(pilot, lambda: isinstance(app.screen, Question))
        await pilot.press("n")
        await until(pilot, lambda: "The files are left as they are." in shown_text(app.transcript))

        assert app.composer.input.text == "say hello"
        assert (workspace / "a.txt").read_text() == "changed\n"
        assert "First answer." not in shown_text(app.transcript)
        assert stored_user_texts(app) == ([], [["say hello", "change a.txt"]])


async def test_escape_twice_during_a_run_or_with_nothing_to_rewind_opens_nothing(
    app: AgentApp,
):
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape", "escape")
        await until(pilot, lambda: "no message to rewind to yet" in shown_text(app.transcript))
        assert not isinstance(app.screen, Picker)


async def test_fork_goes_on_in_a_copy(app: AgentApp, fake: FakeOpenAI):
    fake.add(text("First answer."), text("In the copy."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "say hello")
        await settle(pilot, app)
        original = app.session.conversation.id
        await send(pilot, app, "/fork")
        await until(pilot, lambda: app.session.conversation.id != original)
        await until(pilot, lambda: "Forked: you are now in" in shown_text(app.transcript))
        assert "First answer." in shown_text(app.transcript), "the copy shows the story so far"
        await send(pilot, app, "go on")
        await settle(pilot, app)
    store = Store(paths.conversations_dir())
    texts = [
        [i.text for i in store.load(c).items if isinstance(i, UserItem)]
        for c in (original, app.session.conversation.id)
    ]
    assert texts == [["say hello"], ["say hello", "go on"]]


async def test_ctrl_f_says_a_rewound_message_matches(app: AgentApp, fake: FakeOpenAI):
    fake.add(text("First answer."), text("Second answer."))
    async with app.run_test(size=SIZE) as pilot:
        for message in ("say hello", "a needle in the haystack"):
            await send(pilot, app, message)
            await settle(pilot, app)
        app.session.rewind(app.session.rewind_points()[1].id)  # as /rewind 2 does
        await pilot.press("ctrl+f")
        app.search_bar.input.value = "needle"
        await pilot.press("enter")
        await pilot.pause()
        shown = str(app.search_bar.count.render())
        assert shown == "no match; 1 in rewound items (agent sessions show)"
        app.search_bar.input.value = "nowhere"
        await pilot.press("enter")
        await pilot.pause()
        assert str(app.search_bar.count.render()) == "no match"
