"""Automatic compaction (issue 16, item 4): before a round whose request passes the
`auto_compact` share of the window, the older items are summarised as /compact does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.backends.context import CHARS_PER_TOKEN, ITEM_OVERHEAD_TOKENS, SUMMARY_HEADER
from agent_cli.backends.loop import COMPACT_SYSTEM
from agent_cli.backends.prompt import system_prompt
from agent_cli.engine.items import NoticeItem, SummaryItem, UserItem
from agent_cli.errors import ConfigError, ProviderConnectionError
from agent_cli.policy.modes import offered
from agent_cli.providers.scripted import answer
from agent_cli.settings import DEFAULT_AUTO_COMPACT, load_settings
from agent_cli.tools.builtin import builtin_tools
from tests.support.sessions import make_session

TEXT = 1000  # characters of each message: 250 tokens and the overhead
SHARE = 0.85


def window_for(workspace: Path, messages: int, share: float = SHARE) -> int:
    """A context window the `messages`-th message's request passes SHARE of, and no
    earlier one does (three-word answers between them)."""
    specs = [t.spec for t in offered(builtin_tools(), "ask")]
    tools = sum(len(s.name) + len(s.description) + len(json.dumps(s.parameters)) for s in specs)
    system = (len(system_prompt(workspace, "ask")) + tools) // CHARS_PER_TOKEN
    per_message = TEXT // CHARS_PER_TOKEN + ITEM_OVERHEAD_TOKENS
    per_answer = len("Answer number 0.") // CHARS_PER_TOKEN + ITEM_OVERHEAD_TOKENS
    before = system + (messages - 1) * (per_message + per_answer)  # the one before, whole
    at = before + per_message + per_answer  # generous: the new message
    return int((before + at) / 2 / share)


def message(n: int) -> str:
    return f"{n}" + chr(ord("A") + n) * (TEXT - 1)


async def test_the_request_past_the_share_carries_a_summary_instead_of_the_old_items(tmp_path):
    turns = [answer(f"Answer number {n}.") for n in range(3)]
    turns += [answer("Summary: the first two asked for letters."), answer("Answer number 3.")]
    session, provider, _ = make_session(
        tmp_path, turns, tools=(), context_window=window_for(tmp_path, 4), auto_compact=SHARE
    )
    for n in range(4):
        result = await session.send(message(n))
        assert result.reason == "answered", result
    systems = [request.system for request in provider.requests]
    assert systems.count(COMPACT_SYSTEM) == 1 and systems[3] == COMPACT_SYSTEM
    after = provider.requests[4]
    users = [m.content for m in after.messages if m.role == "user"]
    assert users[0].startswith(SUMMARY_HEADER) and "the first two asked" in users[0]
    assert message(0) not in users and message(1) not in users
    assert users[-2:] == [message(2), message(3)]  # the last turns are kept as they are
    items = session.conversation.items
    assert sum(isinstance(i, UserItem) for i in items) == 4  # every item is still stored
    assert any(isinstance(i, SummaryItem) for i in items)
    notices = [i.text for i in items if isinstance(i, NoticeItem)]
    assert any("summarised automatically" in text for text in notices), notices


async def test_a_failing_compaction_leaves_the_conversation_as_it_was(tmp_path):
    """At half the window the request still fits once the summary failed: it goes."""
    turns = [answer(f"Answer number {n}.") for n in range(3)]
    turns += [[ProviderConnectionError("the server went away")], answer("Answer number 3.")]
    session, provider, _ = make_session(
        tmp_path, turns, tools=(), context_window=window_for(tmp_path, 4, 0.5), auto_compact=0.5
    )
    for n in range(4):
        result = await session.send(message(n))
    assert result.reason == "answered"
    items = session.conversation.items
    assert not any(isinstance(i, SummaryItem) for i in items)
    notices = [i.text for i in items if isinstance(i, NoticeItem)]
    assert any(
        t.startswith("Automatic compaction failed (the server went away)") for t in notices
    ), notices
    users = [m.content for m in provider.requests[-1].messages if m.role == "user"]
    assert users == [message(n) for n in range(4)]  # sent whole: it still fits


async def test_a_failed_compaction_of_a_request_that_does_not_fit_says_what_to_do(tmp_path):
    """Past what fits, a failed summary falls back to today's end: a notice and an error."""
    turns = [answer(f"Answer number {n}.") for n in range(3)]
    turns += [[ProviderConnectionError("the server went away")]]
    session, _, _ = make_session(
        tmp_path, turns, tools=(), context_window=window_for(tmp_path, 4), auto_compact=SHARE
    )
    for n in range(3):
        await session.send(message(n))
    result = await session.send(message(3))
    assert result.reason == "error" and "no longer fits" in result.error
    notices = [i.text for i in session.conversation.items if isinstance(i, NoticeItem)]
    assert any(t.startswith("Automatic compaction failed") for t in notices)


async def test_an_empty_summary_is_no_summary(tmp_path):
    turns = [answer(f"Answer number {n}.") for n in range(3)]
    turns += [answer(" "), answer("Answer number 3.")]
    session, _, _ = make_session(
        tmp_path, turns, tools=(), context_window=window_for(tmp_path, 4), auto_compact=SHARE
    )
    for n in range(4):
        await session.send(message(n))
    items = session.conversation.items
    assert not any(isinstance(i, SummaryItem) for i in items)
    assert any("summary came back empty" in i.text for i in items if isinstance(i, NoticeItem))


async def test_off_it_never_compacts_on_its_own(tmp_path):
    turns = [answer(f"Answer number {n}.") for n in range(4)]
    session, provider, _ = make_session(
        tmp_path, turns, tools=(), context_window=window_for(tmp_path, 4), auto_compact=None
    )
    for n in range(4):
        await session.send(message(n))
    assert COMPACT_SYSTEM not in [request.system for request in provider.requests]


@pytest.mark.parametrize(
    ("text", "share"),
    [("", DEFAULT_AUTO_COMPACT), ("auto_compact = false", None), ("auto_compact = 0.5", 0.5),
     ("auto_compact = true", DEFAULT_AUTO_COMPACT)],
)  # fmt: skip
def test_the_setting(tmp_path, text, share):
    folder = tmp_path / "project"
    (folder / ".agent").mkdir(parents=True)
    (folder / ".agent" / "config.toml").write_text(text + "\n")
    assert load_settings(folder).auto_compact == share


def test_a_share_out_of_range_is_a_clear_error(tmp_path):
    folder = tmp_path / "project"
    (folder / ".agent").mkdir(parents=True)
    (folder / ".agent" / "config.toml").write_text("auto_compact = 1.5\n")
    with pytest.raises(ConfigError, match="is not a share of the context window"):
        load_settings(folder)
