"""An external agent over ACP as a backend: a real SDK agent in a subprocess (SPEC §11).

Each test drives the scripted fixture agent (tests/support/acp_agent.py) through
`ExternalAgent` and a real `Session`, and checks the conversation's items, the
events, the files, and what the agent itself recorded hearing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from agent_cli.backends.catalog import AgentSpec
from agent_cli.backends.external import ExternalAgent
from agent_cli.engine.approval import ApprovalRequest, Decision
from agent_cli.engine.backend import StopReason
from agent_cli.engine.events import ApprovalRequested, Delta, ItemAdded, PlanUpdated
from agent_cli.engine.handoff import HEADER
from agent_cli.engine.items import (
    AssistantItem,
    Conversation,
    Item,
    NoticeItem,
    ToolItem,
    UserItem,
)
from agent_cli.engine.session import Session
from tests.support.acp_agent import fixture_spec, records
from tests.support.processes import gone
from tests.support.sessions import Recorder

DIFF_NEW_FILE = "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+print('hi')\n"


class Harness:
    """The fixture agent behind a real Session, with approvals answered from a list."""

    def __init__(
        self,
        root: Path,
        script: dict[str, Any],
        *,
        mode: str = "ask",
        gated: bool = True,
        grace: float = 10.0,
        conversation: Conversation | None = None,
        spec: AgentSpec | None = None,
    ) -> None:
        self.workspace = root / "project"
        self.workspace.mkdir(parents=True)
        self.folder = root / "agent"
        self.spec = spec or fixture_spec(script, self.folder, gated=gated)
        self.checkpoints: list[str] = []
        self.agent = ExternalAgent(
            self.spec, self.workspace, checkpoint=self._checkpoint, cancel_grace=grace
        )
        self.conversation = conversation or Conversation(workspace=str(self.workspace))
        self.conversation.workspace = str(self.workspace)
        self.conversation.mode = mode
        self.session = Session(self.conversation, lambda _c: self.agent, None)
        self.recorder = Recorder()
        self.session.events.subscribe(self.recorder)
        self.session.events.subscribe(self._answer)
        self.answers: list[Decision] = []
        self.cards: list[ApprovalRequest] = []
        self.unexpected: list[dict[str, Any]] = []
        self.hold = False

    async def _checkpoint(self, conversation: str, label: str) -> list[str]:
        assert conversation == self.conversation.id
        self.checkpoints.append(label)
        return []

    def _answer(self, event: object) -> None:
        """Answer each card with the next decision; with none left it waits if `hold`,
        else it is declined and counted as unexpected."""
        if isinstance(event, ApprovalRequested):
            self.cards.append(event.request)
            if self.answers:
                event.request.resolve(self.answers.pop(0))
            elif not self.hold:
                self.unexpected.append(event.request.to_json())
                event.request.resolve(Decision("no"))

    async def send(self, text: str, *answers: Decision) -> StopReason:
        self.answers = list(answers)
        result = await self.session.send(text)
        assert not self.answers, f"cards not shown: {self.answers}"
        assert not self.unexpected, f"unexpected cards: {self.unexpected}"
        return result.reason

    def records(self, event: str | None = None) -> list[dict[str, Any]]:
        return records(self.folder, event)

    def items(self, kind: type) -> list:
        return [item for item in self.conversation.items if isinstance(item, kind)]

    def since(self, text: str) -> list[Item]:
        """The items after the user message `text`."""
        items = self.conversation.items
        start = max(i for i, item in enumerate(items) if getattr(item, "text", None) == text)
        return items[start + 1 :]


@pytest.fixture
async def make(tmp_path: Path) -> AsyncIterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def factory(script: dict[str, Any], **options: Any) -> Harness:
        harness = Harness(tmp_path / f"h{len(made)}", script, **options)
        made.append(harness)
        return harness

    yield factory
    for harness in made:
        await harness.session.aclose()


# ------------------------------------------------------------------ mapping


async def test_text_thoughts_tools_and_plans_become_items_like_the_builtin_agents(make, caplog):
    caplog.set_level(logging.DEBUG, logger="agent_cli.backends.external")
    plan_a = [["Read the test", "completed"], ["Fix it", "in_progress"]]
    steps = [
        {"op": "commands", "commands": [["review", "Review the change"]]},
        {"op": "thought", "text": "Let me "},
        {"op": "thought", "text": "look."},
        {"op": "text", "text": "Hel"},
        {"op": "text", "text": "lo."},
        {"op": "tool", "id": "r1", "title": "Read a.py", "kind": "read", "status": "pending",
         "locations": ["a.py"], "raw_input": {"path": "a.py"}},
        {"op": "update", "id": "r1", "status": "completed", "result": "x = 1"},
        {"op": "tool", "id": "e1", "title": "Write new.py", "kind": "edit", "status": "pending",
         "diff": {"path": "new.py", "new": "print('hi')\n"}},
        {"op": "update", "id": "e1", "status": "in_progress"},
        {"op": "update", "id": "e1", "status": "completed"},
        {"op": "tool", "id": "x1", "title": "pytest -q", "kind": "execute",
         "raw_input": {"command": "pytest -q"}},
        {"op": "update", "id": "x1", "status": "failed", "raw_output": {"output": "1 failed"}},
        {"op": "plan", "entries": plan_a},
        {"op": "plan", "entries": plan_a},
        {"op": "text", "text": "Done."},
        {"op": "plan", "entries": [["Read the test", "completed"], ["Fix it", "completed"]]},
    ]  # fmt: skip
    script = {
        "turns": [
            {"when": "fix", "steps": steps, "usage": {"input": 120, "output": 30, "cached": 100}},
            {
                "when": "more",
                "stop": "max_tokens",
                "steps": [
                    {"op": "spawn", "argv": ["sleep", "60"]},
                    {"op": "text", "text": "partial"},
                ],
            },
        ]
    }
    h = make(script, mode="full")
    (h.workspace / "a.py").write_text("x = 1\n")

    assert await h.send("fix the test") is StopReason.ANSWERED

    user, first, read, edit, run_, last = h.conversation.items
    assert isinstance(user, UserItem)
    assert (first.text, first.reasoning, first.streaming) == ("Hello.", "Let me look.", False)
    assert (read.tool, read.title, read.state, read.result, read.file) == (
        "read", "Read a.py", "done", "x = 1", "a.py",
    )  # fmt: skip
    assert read.call_id == "r1" and '"path": "a.py"' in read.args
    assert (edit.tool, edit.state, edit.diff, edit.file) == (
        "edit",
        "done",
        DIFF_NEW_FILE,
        "new.py",
    )
    assert (run_.tool, run_.state, run_.is_error, run_.result) == (
        "execute",
        "error",
        True,
        "1 failed",
    )
    # The plan is the conversation's, shown by the plan widget: sent twice, published once.
    plans = [e.plan for e in h.recorder.of(PlanUpdated)]
    assert [[(s.step, s.status) for s in plan.steps] for plan in plans] == [
        [("Read the test", "completed"), ("Fix it", "in_progress")],
        [("Read the test", "completed"), ("Fix it", "completed")],
    ]
    assert h.conversation.plan == plans[-1]
    assert isinstance(last, AssistantItem) and last.text == "Done." and not last.streaming
    assert h.agent.commands == [("review", "Review the change")]
    assert h.conversation.usage.input_tokens == 120 and h.conversation.usage.cached_tokens == 100

    deltas = [(e.text, e.reasoning) for e in h.recorder.of(Delta) if e.item == first.id]
    # The thought comes before the text; chunks of one turn may arrive joined (Run.delta).
    thought = "".join(r for t, r in deltas if r)
    said = "".join(t for t, r in deltas if t)
    assert (thought, said) == ("Let me look.", "Hello.")
    assert max(i for i, (t, r) in enumerate(deltas) if r) < min(
        i for i, (t, r) in enumerate(deltas) if t
    )
    added = [e.item.id for e in h.recorder.of(ItemAdded)]
    assert added.index(first.id) < added.index(read.id) < added.index(last.id)

    # The next message goes to the same process and session, without a transcript.
    pid = h.agent.pid
    assert await h.send("more please") is StopReason.ANSWERED
    assert h.agent.pid == pid
    prompts = h.records("prompt")
    assert [p["text"] for p in prompts] == ["fix the test", "more please"]
    assert prompts[0]["session"] == prompts[1]["session"] == h.conversation.agent_session
    assert len(h.records("new_session")) == 1
    assert "output limit" in h.items(NoticeItem)[-1].text
    assert "fixture: fixture agent: ready" in caplog.text  # its stderr: the debug log

    await h.session.aclose()  # ends the agent and whatever it started
    assert gone(pid) and gone(h.records("spawned")[0]["child"])


async def test_titles_show_workspace_paths_relative_and_others_absolute(make, tmp_path: Path):
    h = make({}, mode="full")
    inside, outside = h.workspace / "a.txt", tmp_path / "elsewhere" / "notes.txt"

    def cut(path: Path) -> str:  # OpenCode outside a git repository: relative to "/"
        return str(path).removeprefix("/")

    steps = [
        {"op": "tool", "id": "w1", "title": "write", "kind": "edit", "status": "pending",
         "locations": [str(inside)], "raw_input": {"filePath": str(inside), "content": "hi\n"}},
        {"op": "update", "id": "w1", "title": cut(inside), "status": "completed"},
        {"op": "tool", "id": "r1", "title": cut(outside), "kind": "read",
         "locations": [str(outside)], "raw_input": {"filePath": str(outside)}},
        {"op": "tool", "id": "g1", "title": f"grep todo in {cut(h.workspace / 'src')}",
         "kind": "search"},
        # Claude Code: the absolute path, in a title of words.
        {"op": "tool", "id": "k1", "title": f"Write {h.workspace / 'b.txt'}", "kind": "edit",
         "raw_input": {"file_path": str(h.workspace / "b.txt"), "content": "b\n"}},
        {"op": "permission", "id": "k1"},
        {"op": "tool", "id": "x1", "title": f"ls {h.workspace}", "kind": "execute"},
    ]  # fmt: skip
    fixture_spec({"turns": [{"steps": steps}]}, h.folder)  # the script names h's own paths

    assert await h.send("work") is StopReason.ANSWERED
    titles = {item.call_id: item.title for item in h.items(ToolItem)}
    assert titles == {
        "w1": "a.txt",
        "r1": str(outside),
        "g1": "grep todo in src",
        "k1": "Write b.txt",
        "x1": f"ls {h.workspace}",  # a command is shown as it runs
    }
    assert h.checkpoints == ["Write b.txt"]


# -------------------------------------------------------------- permissions


async def test_permissions_are_the_modes_to_answer(make):
    edit = {
        "op": "tool",
        "id": "e1",
        "title": "Edit a.py",
        "kind": "edit",
        "status": "pending",
        "diff": {"path": "a.py", "old": "old\n", "new": "new\n"},
        "locations": ["a.py"],
    }
    script = {
        "turns": [
            {"when": "edit", "steps": [edit, {"op": "permission", "id": "e1"}]},
            # Gemini CLI: no tool_call first, and no diff: the card is built from the request.
            {"when": "gemini", "steps": [
                {"op": "permission", "id": "g1", "title": "WriteFile a.py", "kind": "edit",
                 "raw_input": {"file_path": "a.py", "content": "gemini\n"}},
            ]},
            # Claude Code: old and new strings in the tool call's arguments, none in the request.
            {"when": "claude", "steps": [
                {"op": "tool", "id": "k1", "title": "Edit a.py", "kind": "edit",
                 "raw_input": {"file_path": "a.py", "old_string": "old", "new_string": "claude"}},
                {"op": "permission", "id": "k1"},
            ]},
            {"when": "run", "steps": [
                {"op": "permission", "id": "c1", "title": "Run tests", "kind": "execute",
                 "raw_input": {"command": ["pytest", "-q"]},
                 "kinds": ["allow_once", "reject_once"]},
            ]},
        ]
    }  # fmt: skip
    h = make(script, mode="ask")
    (h.workspace / "a.py").write_text("old\n")

    assert await h.send("edit it", Decision("yes")) is StopReason.ANSWERED
    card = h.cards[-1]
    assert (card.kind, card.item.call_id) == ("edit", "e1")
    assert card.diff == "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-old\n+new\n"
    assert h.records("permission")[-1]["option"] == "allow-once"
    assert h.items(ToolItem)[-1].state == "done"  # allowed; the turn ended: done

    assert await h.send("gemini writes", Decision("no", "not that file")) is StopReason.ANSWERED
    card = h.cards[-1]
    assert card.item.call_id == "g1" and card.item.title == "WriteFile a.py"
    assert card.diff == "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-old\n+gemini\n"  # ours
    assert h.records("permission")[-1]["option"] == "reject-once"
    denied = h.items(ToolItem)[-1]
    assert denied.state == "denied" and "not that file" in denied.result

    # Only some hunks (here none of one) cannot be done to an edit the agent makes itself.
    assert await h.send("claude replaces", Decision("yes", hunks=())) is StopReason.ANSWERED
    assert h.cards[-1].diff == "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-old\n+claude\n"
    assert h.records("permission")[-1]["option"] == "reject-once"
    assert "only part of this edit" in h.items(ToolItem)[-1].result

    assert await h.send("run the tests", Decision("always")) is StopReason.ANSWERED
    card = h.cards[-1]
    assert (card.kind, card.command, card.cwd) == ("command", "pytest -q", str(h.workspace))
    assert h.records("permission")[-1]["option"] == "allow-once"  # "always" was not offered

    assert await h.send("edit again", Decision("always")) is StopReason.ANSWERED
    assert h.records("permission")[-1]["option"] == "allow-always"

    h.session.set_mode("full")
    cards = len(h.cards)
    assert await h.send("edit in full mode") is StopReason.ANSWERED
    assert len(h.cards) == cards and h.records("permission")[-1]["option"] == "allow-once"

    h.session.set_mode("read-only")
    assert await h.send("edit in read-only mode") is StopReason.ANSWERED
    assert len(h.cards) == cards and h.records("permission")[-1]["option"] == "reject-once"
    assert h.items(ToolItem)[-1].state == "denied"
    assert (h.workspace / "a.py").read_text() == "old\n"  # the fixture itself never writes
    assert h.checkpoints == ["Edit a.py", "Run tests", "Edit a.py", "Edit a.py"]  # once a turn


# -------------------------------------------------------------------- files


async def test_files_are_read_and_written_inside_the_workspace_only(make, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    steps = [
        {"op": "read", "path": "lines.txt", "line": 2, "limit": 2},
        {"op": "read", "path": "lines.txt"},
        {"op": "read", "path": "missing.txt"},
        {"op": "read", "path": "../outside/secret.txt"},
        {"op": "read", "path": str(outside / "secret.txt")},
        {"op": "read", "path": "link/secret.txt"},
        {"op": "write", "path": "src/new.txt", "content": "hi\n"},
        {"op": "write", "path": "../outside/evil.txt", "content": "x"},
        {"op": "write", "path": str(outside / "evil.txt"), "content": "x"},
        {"op": "write", "path": "link/evil.txt", "content": "x"},
        {"op": "write", "path": ".git/config", "content": "x"},
    ]
    h = make({"turns": [{"steps": steps}]}, mode="full")
    (h.workspace / "lines.txt").write_text("one\ntwo\nthree\nfour\n")
    (h.workspace / "link").symlink_to(outside)

    assert await h.send("read and write") is StopReason.ANSWERED

    offered = h.records("initialize")[0]
    assert (offered["read"], offered["write"], offered["terminal"]) == (True, True, False)

    reads = h.records("read")
    assert reads[0]["content"] == "two\nthree\n"
    assert reads[1]["content"] == "one\ntwo\nthree\nfour\n"
    assert reads[2]["content"] == ""  # a missing file inside: empty, as editors answer
    for refused in reads[3:]:
        assert "outside the workspace" in refused["error"], refused
    writes = h.records("write")
    assert writes[0] == {**writes[0], "ok": True}
    assert (h.workspace / "src" / "new.txt").read_text() == "hi\n"
    assert all("error" in w for w in writes[1:]), writes
    assert "outside the workspace" in writes[1]["error"] and ".git" in writes[4]["error"]
    assert not (outside / "evil.txt").exists()
    item = h.items(ToolItem)[0]
    assert (item.tool, item.title, item.state, item.file) == (
        "edit", "Write src/new.txt", "done", "src/new.txt",
    )  # fmt: skip
    assert item.diff == "--- /dev/null\n+++ b/src/new.txt\n@@ -0,0 +1 @@\n+hi\n"
    assert h.checkpoints == ["Write src/new.txt"]


async def test_writes_ask_unless_a_permission_covered_them_and_read_only_takes_none(make):
    write = {"op": "write", "path": "a.txt", "content": "changed\n"}
    covered = [
        {"op": "tool", "id": "e1", "title": "Edit a.txt", "kind": "edit", "status": "pending",
         "diff": {"path": "a.txt", "old": "old\n", "new": "covered\n"}},
        {"op": "permission", "id": "e1"},
        {**write, "content": "covered\n"},
        {"op": "update", "id": "e1", "status": "completed"},
    ]  # fmt: skip
    lines = "".join(f"line {n}\n" for n in range(1, 31))
    both = lines.replace("line 1\n", "first\n").replace("line 30\n", "last\n")
    partial = {"op": "write", "path": "big.txt", "content": both}
    script = {
        "turns": [
            {"when": "partial", "steps": [partial]},
            {"when": "covered", "steps": covered},
            {"when": "write", "steps": [write]},
        ]
    }
    h = make(script, mode="ask")
    (h.workspace / "a.txt").write_text("old\n")

    await h.send("write it", Decision("no"))
    assert h.cards[-1].kind == "edit"
    assert h.cards[-1].diff == "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+changed\n"
    assert "declined" in h.records("write")[-1]["error"]
    assert (h.workspace / "a.txt").read_text() == "old\n"
    assert h.items(ToolItem)[-1].state == "denied"

    await h.send("covered write", Decision("yes"))  # one card: the permission's
    assert len(h.cards) == 2 and h.cards[-1].item.call_id == "e1"
    assert (h.workspace / "a.txt").read_text() == "covered\n"
    item = h.items(ToolItem)[-1]
    assert (item.call_id, item.state, item.file) == ("e1", "done", "a.txt")
    assert item.diff == "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+covered\n"

    await h.send("write it again", Decision("yes"))
    assert (h.workspace / "a.txt").read_text() == "changed\n"
    assert h.checkpoints == ["Edit a.txt", "Write a.txt"]

    (h.workspace / "big.txt").write_text(lines)
    await h.send("partial write", Decision("yes", hunks=(0,)))  # the first hunk only
    assert h.cards[-1].proposed == both
    assert (h.workspace / "big.txt").read_text() == lines.replace("line 1\n", "first\n")
    item = h.items(ToolItem)[-1]
    assert "a version of their own" in item.result and "+last" not in item.diff

    h.session.set_mode("read-only")
    (h.workspace / "a.txt").write_text("old\n")
    await h.send("write it once more")
    assert "read-only mode" in h.records("write")[-1]["error"]
    assert (h.workspace / "a.txt").read_text() == "old\n"
    assert len(h.cards) == 4


# ------------------------------------------------------------ stop and crash


async def wait_for_delta(h: Harness, task: asyncio.Future, text: str) -> None:
    while not any(delta.text == text for delta in h.recorder.of(Delta)):
        assert not task.done(), task.result()
        await asyncio.sleep(0.01)


async def test_an_agent_ignoring_a_cancel_is_killed_after_the_grace_and_restarted(make):
    script = {
        "turns": [
            {"when": "stuck", "steps": [
                {"op": "spawn", "argv": ["sleep", "60"]},
                {"op": "text", "text": "working"},
                {"op": "wait_cancel", "ignore": True},
            ]},
            {"when": "hello", "steps": [{"op": "text", "text": "hi again"}]},
        ]
    }  # fmt: skip
    h = make(script, grace=0.5)
    task = asyncio.ensure_future(h.session.send("stuck forever"))
    await wait_for_delta(h, task, "working")
    pid = h.agent.pid
    assert pid is not None
    stopped = time.monotonic()
    h.session.stop()
    result = await task
    took = time.monotonic() - stopped

    assert result.reason is StopReason.STOPPED
    assert 0.5 <= took < 5, took
    assert gone(pid)
    assert gone(h.records("spawned")[0]["child"])  # its whole process group
    assert h.records("cancel") and h.records("ignoring_cancel")
    assert h.items(AssistantItem)[-1].text == "working"  # what arrived is kept
    assert h.items(NoticeItem)[-1].text == "Stopped."

    # The next message starts a new process; it cannot load the session: a notice and
    # a transcript of the conversation so far.
    assert await h.send("hello") is StopReason.ANSWERED
    assert h.agent.pid not in (None, pid)
    notice = next(i for i in h.since("hello") if isinstance(i, NoticeItem))
    assert "cannot resume its earlier session" in notice.text and notice.level == "warn"
    prompt = h.records("prompt")[-1]["text"]
    assert prompt.startswith(HEADER) and "User: stuck forever" in prompt
    assert prompt.endswith("\n\nhello")
    assert h.conversation.agent_session == h.records("new_session")[-1]["session"]


async def test_a_stop_denies_a_waiting_card_and_an_agent_honouring_the_cancel_is_kept(make):
    script = {
        "turns": [
            {"when": "clean", "steps": [
                {"op": "permission", "id": "c1", "title": "rm -rf build", "kind": "execute"},
                {"op": "text", "text": "not cleaned"},
            ]},
            {"when": "wait", "steps": [{"op": "text", "text": "on it"}, {"op": "wait_cancel"}]},
        ]
    }  # fmt: skip
    h = make(script, grace=5)
    h.hold = True
    task = asyncio.ensure_future(h.session.send("clean up"))
    while not h.session.pending_approvals:
        assert not task.done(), task.result()
        await asyncio.sleep(0.01)
    pid = h.agent.pid
    h.session.stop()
    assert (await task).reason is StopReason.STOPPED
    assert h.records("permission")[-1]["outcome"] == "cancelled"  # as ACP says after a cancel
    assert h.items(ToolItem)[-1].state == "denied"

    task = asyncio.ensure_future(h.session.send("wait for it"))
    await wait_for_delta(h, task, "on it")
    h.session.stop()
    assert (await task).reason is StopReason.STOPPED
    assert h.records("cancel")
    assert h.agent.pid == pid  # it ended its turn in time: kept

    assert await h.send("and now?") is StopReason.ANSWERED
    assert h.agent.pid == pid and len(h.records("new_session")) == 1


async def test_a_crash_is_a_clear_error_and_the_next_message_starts_it_again(make):
    script = {
        "turns": [
            {"when": "crash", "steps": [
                {"op": "text", "text": "about to"},
                {"op": "crash", "code": 3, "stderr": "fatal: out of cheese"},
            ]},
            {"when": "again", "steps": [{"op": "text", "text": "fine now"}]},
        ]
    }  # fmt: skip
    h = make(script)
    assert await h.send("crash now") is StopReason.ERROR
    pid = h.records("prompt")[-1]["pid"]
    error = h.items(NoticeItem)[-1]
    assert error.level == "error"
    assert error.text.startswith(
        "Fixture stopped unexpectedly (exit status 3): fatal: out of cheese — send a message"
    )
    assert h.items(AssistantItem)[-1].text == "about to"

    assert await h.send("again") is StopReason.ANSWERED
    assert h.records("prompt")[-1]["pid"] != pid
    assert h.items(AssistantItem)[-1].text == "fine now"


# ------------------------------------------------------ resume and hand-off


async def test_a_stored_session_is_loaded_where_the_agent_supports_it(make):
    script = {
        "load_session": True,
        "replay": [{"op": "user", "text": "earlier"}, {"op": "text", "text": "replayed answer"}],
    }
    earlier: list[Item] = [UserItem("earlier"), AssistantItem("an answer", streaming=False)]
    conversation = Conversation(workspace="", agent="fixture", agent_session="s-old", items=earlier)
    h = make(script, conversation=conversation)

    assert await h.send("next") is StopReason.ANSWERED

    assert [r["session"] for r in h.records("load_session")] == ["s-old"]
    assert not h.records("new_session")
    prompt = h.records("prompt")[-1]
    assert (prompt["session"], prompt["text"]) == ("s-old", "next")  # it knows the rest
    texts = [item.text for item in h.items(AssistantItem)]
    assert texts == ["an answer", "ok"]  # the replay added nothing
    assert not h.items(NoticeItem)


async def test_a_failed_load_starts_afresh_with_a_notice_and_the_transcript(make):
    script = {"load_session": True, "load_fails": True}
    earlier: list[Item] = [
        UserItem("first question"),
        AssistantItem("first answer", streaming=False),
    ]
    conversation = Conversation(workspace="", agent="fixture", agent_session="s-old", items=earlier)
    h = make(script, conversation=conversation)

    assert await h.send("second question") is StopReason.ANSWERED

    notice = h.items(NoticeItem)[0]
    assert "could not resume its earlier session (Resource not found (no such session))" in (
        notice.text
    )
    prompt = h.records("prompt")[-1]["text"]
    assert "User: first question" in prompt and "Assistant: first answer" in prompt
    assert "second question" not in prompt.removesuffix("second question")
    assert h.conversation.agent_session == h.records("new_session")[-1]["session"] != "s-old"


async def test_a_hand_off_sends_the_work_so_far_with_the_first_prompt_only(make):
    diff = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    earlier: list[Item] = [
        UserItem("fix the bug in app.py"),
        ToolItem("edit_file", "c1", "Edit app.py", "{}", state="done", diff=diff, file="app.py"),
        AssistantItem("Fixed: x is 2.", streaming=False),
    ]
    conversation = Conversation(workspace="", agent="fixture", items=earlier)
    h = make({}, conversation=conversation)

    await h.send("now add a test")
    await h.send("thanks")

    first, second = (p["text"] for p in h.records("prompt"))
    assert first.startswith(HEADER) and first.endswith("\n\nnow add a test")
    assert "User: fix the bug in app.py" in first and "Assistant: Fixed: x is 2." in first
    assert "Files changed: app.py (changed once, +1 −1 lines)" in first
    assert second == "thanks"


# ------------------------------------------------------------- the rest


async def test_an_ungated_agent_is_warned_about_checkpointed_and_its_changes_listed(make):
    edits = [  # as pi does: in its own process (in the workspace), never asking
        {"op": "edit_directly", "path": "a.txt", "content": "changed\n"},
        {"op": "edit_directly", "path": "b.txt", "content": "new\n"},
        {"op": "text", "text": "edited"},
    ]
    h = make({"turns": [{"steps": edits}]}, gated=False, mode="ask")
    (h.workspace / "a.txt").write_text("old\n")

    await h.send("edit the files")
    await h.send("and again")

    warning, changed, changed_again = h.items(NoticeItem)
    assert warning.level == "warn" and "cannot be gated" in warning.text
    assert h.conversation.items.index(warning) < h.conversation.items.index(
        h.items(AssistantItem)[0]
    )
    assert changed.text == "Fixture changed 2 files: M a.txt, A b.txt (agent undo restores them)."
    assert changed_again.level == "warn"
    assert h.checkpoints == ["Fixture: edit the files", "Fixture: and again"]


async def test_a_gated_agent_editing_without_asking_is_named_but_its_writes_through_us_are_not(
    make,
):
    steps = [  # as OpenCode does when its own settings allow edits: no permission asked
        {"op": "edit_directly", "path": "sneaky.txt", "content": "changed\n"},
        {"op": "write", "path": "asked.txt", "content": "through us\n"},
        {"op": "text", "text": "done"},
    ]
    h = make({"turns": [{"steps": steps}]}, mode="full")
    await h.send("edit")
    assert not [n for n in h.items(NoticeItem) if "without asking" in n.text]  # full: all allowed

    h.session.set_mode("ask")
    (h.workspace / "asked.txt").unlink()
    await h.send("edit again", Decision("yes"))  # the write through us asks: answered yes
    assert (h.workspace / "asked.txt").read_text() == "through us\n"
    [notice] = [n for n in h.items(NoticeItem) if "without asking" in n.text]
    assert notice.level == "warn" and "M sneaky.txt" in notice.text
    assert "asked.txt" not in notice.text


async def test_a_missing_program_is_one_clear_error(make, tmp_path: Path):
    spec = AgentSpec("ghost", "Ghost", "no-such-agent-program", install="npm install -g ghost-acp")
    h = make({}, spec=spec)
    assert await h.send("hello") is StopReason.ERROR
    assert h.items(NoticeItem)[-1].text == (
        "Ghost cannot start: no-such-agent-program is not on PATH — install it with: "
        "npm install -g ghost-acp."
    )


async def test_compact_is_the_agents_own_business(make):
    h = make({})
    result = await h.session.compact()
    assert result.reason is StopReason.ANSWERED
    assert "not available for Fixture" in h.items(NoticeItem)[-1].text
    assert h.agent.pid is None  # nothing was started for it
