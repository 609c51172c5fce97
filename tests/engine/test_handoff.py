"""Hand-off: the transcript another agent gets, and the Session switching agents (SPEC §11)."""

from __future__ import annotations

import json

import pytest

from agent_cli.engine.handoff import FOOTER, HEADER, transcript
from agent_cli.engine.items import AssistantItem, NoticeItem, SummaryItem, ToolItem, UserItem
from agent_cli.errors import UsageError
from agent_cli.providers.scripted import answer
from tests.support.sessions import make_session
from tests.support.waiting import FOREVER, eventually, within

DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,3 @@\n-x = 1\n+x = 2\n+y = 3\n z = 0\n"


def work() -> list:
    return [
        UserItem("fix the failing test"),
        AssistantItem("Looking at it.", streaming=False),
        ToolItem("read_file", "c1", "Read app.py", '{"path": "app.py"}', state="done"),
        ToolItem("edit_file", "c2", "Edit app.py", "{}", state="done", diff=DIFF, file="app.py"),
        ToolItem("edit_file", "c3", "Edit app.py", "{}", state="done", diff=DIFF, file="app.py"),
        ToolItem(
            "exec_shell_command",
            "c4",
            "Run pytest",
            json.dumps({"command": "pytest -q"}),
            state="done",
            result="1 passed\n[exit code: 0]",
        ),
        ToolItem("write_file", "c5", "Write secret.txt", "{}", state="denied"),
        NoticeItem("a notice the next agent does not need"),
        AssistantItem("Fixed: x is 2 now.", streaming=False),
    ]


def test_the_transcript_carries_requests_answers_files_and_commands():
    text = transcript(work())
    assert text.startswith(HEADER) and text.endswith(FOOTER)
    assert "User: fix the failing test" in text
    assert "Assistant: Fixed: x is 2 now." in text
    assert "Command: pytest -q → exit code 0" in text
    assert "Files changed: app.py (changed 2 times, +4 −2 lines)" in text
    assert "Not done (refused): Write secret.txt" in text
    assert "notice" not in text and "Read app.py" not in text


def test_an_external_agents_tool_kinds_count_too():
    items = [
        UserItem("go"),
        ToolItem(
            "execute",
            "t1",
            "npm test",
            json.dumps({"command": "npm test"}),
            state="error",
            result="boom",
            is_error=True,
        ),
        ToolItem("edit", "t2", "Edit src/a.ts", "{}", state="done", diff=DIFF, file="src/a.ts"),
    ]
    text = transcript(items)
    assert "Command: npm test → failed" in text
    assert "src/a.ts (changed once" in text


def test_nothing_said_carries_nothing():
    assert transcript([NoticeItem("hello")]) == ""


def test_a_long_history_keeps_the_first_request_and_the_latest_work():
    items = [UserItem("the original request")]
    for n in range(400):
        items += [UserItem(f"question {n}"), AssistantItem(f"answer {n} " + "x" * 100)]
    text = transcript(items, cap=4_000)
    assert len(text) <= 4_000
    assert "User: the original request" in text and "answer 399" in text
    assert "earlier entries left out" in text and "question 5 " not in text
    assert text.endswith(FOOTER)


def test_only_what_the_latest_summary_stands_for_is_carried():
    items = [UserItem("old"), SummaryItem("they fixed the parser"), UserItem("new")]
    text = transcript(items)
    assert "old" not in text.replace(HEADER, "")
    assert "Summary of the work before: they fixed the parser" in text and "User: new" in text


async def test_switching_to_the_builtin_agent_gives_it_the_transcript(tmp_path):
    session, provider, _ = make_session(tmp_path, [answer("first"), answer("second")])
    await session.send("hello there")
    session.conversation.agent = "opencode"  # as if an external agent had worked it
    session.conversation.agent_session = "acp-1"
    await session.switch_agent("builtin")
    assert session.conversation.agent_session == ""
    notice, summary = session.conversation.items[-2:]
    assert isinstance(notice, NoticeItem) and "from opencode to builtin" in notice.text
    assert isinstance(summary, SummaryItem) and "User: hello there" in summary.text
    await session.send("and now?")
    sent = provider.requests[-1].messages
    assert [m.role for m in sent] == ["user", "user"]  # the transcript, then the new message
    assert "Assistant: first" in sent[0].content and sent[1].content == "and now?"


async def test_an_agent_chosen_before_the_first_message_is_no_hand_off(tmp_path):
    session, _, recorder = make_session(tmp_path, [answer("hi")])
    await session.switch_agent("gemini")
    assert session.conversation.agent == "gemini"
    assert session.conversation.items == [] and recorder.events == []
    await session.switch_agent("builtin")
    await session.send("hello")
    await session.switch_agent("gemini")
    notice = session.conversation.items[-1]
    assert notice.text.startswith("Handed over from builtin to gemini.")


async def test_no_switching_while_a_run_goes_on(tmp_path):
    session, _, _ = make_session(tmp_path, [[FOREVER, *answer("slow")]])
    import asyncio

    task = asyncio.ensure_future(session.send("take your time"))
    await eventually(lambda: session.running, "the run to start")
    with pytest.raises(UsageError, match="before switching"):
        await session.switch_agent("codex")
    session.stop()
    await within(task)
