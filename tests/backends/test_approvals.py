"""Approvals of real file and command tools through the loop (SPEC §8)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agent_cli.backends.loop import BuiltinLoop, LoopParts, LoopSettings
from agent_cli.backends.prompt import system_prompt
from agent_cli.engine.approval import ApprovalRequest, Decision
from agent_cli.engine.backend import StopReason
from agent_cli.engine.events import ApprovalRequested
from agent_cli.engine.items import Conversation, NoticeItem, ToolItem
from agent_cli.engine.session import Session
from agent_cli.policy.rules import RuleSet
from agent_cli.providers.scripted import ScriptedProvider, answer, calls
from agent_cli.tools.base import ToolContext
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.workspace import Workspace
from tests.support.sessions import Recorder

THREE_HUNKS = "".join(f"line {i}\n" for i in range(1, 31))


def edit_args(path: str, *pairs: tuple[str, str]) -> str:
    edits = [{"old_text": old, "new_text": new} for old, new in pairs]
    return json.dumps({"path": path, "edits": edits})


class Harness:
    """A session with the real built-in tools, a rule set and a recording checkpoint."""

    def __init__(self, workspace: Path, turns: list, mode: str = "ask") -> None:
        self.workspace = workspace
        self.provider = ScriptedProvider(turns)
        self.checkpoints: list[str] = []
        confined = Workspace(workspace)
        self.rules = RuleSet(confined)

        async def checkpoint(conversation: str, label: str) -> list[str]:
            self.checkpoints.append(label)
            return []

        def backend(_conversation: Conversation) -> BuiltinLoop:
            return BuiltinLoop(
                provider=self.provider,
                tools=builtin_tools(),
                context=ToolContext(confined),
                settings=LoopSettings("m", workspace, 10),
                system_prompt=lambda m: system_prompt(workspace, m),
                parts=LoopParts(rules=self.rules, checkpoint=checkpoint),
            )

        self.session = Session(Conversation(workspace=str(workspace), mode=mode), backend, None)
        self.recorder = Recorder()
        self.session.events.subscribe(self.recorder)
        self.cards: list = []

    def answer_cards(self, *decisions: Decision, before=None) -> None:
        """Resolve each card in turn with the next decision (after `before(request)`)."""
        queue = list(decisions)

        def on(event) -> None:
            if isinstance(event, ApprovalRequested):
                self.cards.append(event.request)
                if before is not None:
                    before(event.request)
                event.request.resolve(queue.pop(0))

        self.session.events.subscribe(on)

    def tool_items(self) -> list[ToolItem]:
        return [i for i in self.session.conversation.items if isinstance(i, ToolItem)]

    def result_sent(self, round_index: int, call_id: str) -> str:
        messages = self.provider.requests[round_index].messages
        return next(m.content for m in messages if m.role == "tool" and m.tool_call_id == call_id)


async def test_the_card_shows_the_diff_before_anything_is_written(tmp_path):
    (tmp_path / "a.txt").write_text("hello\n")
    h = Harness(
        tmp_path, [calls(("c1", "edit_file", edit_args("a.txt", ("hello", "bye")))), answer("ok")]
    )

    def check(request) -> None:
        assert (tmp_path / "a.txt").read_text() == "hello\n"
        assert "-hello" in request.diff and "+bye" in request.diff
        assert request.kind == "edit" and request.proposed == "bye\n"
        assert request.suggested_rule == "edit_file(*)"

    h.answer_cards(Decision("yes"), before=check)
    await h.session.send("edit")
    assert (tmp_path / "a.txt").read_text() == "bye\n"
    item = h.tool_items()[0]
    assert item.state == "done" and item.file == "a.txt" and "+bye" in item.diff
    assert h.checkpoints == ["Edit a.txt"]


async def test_a_file_changed_while_the_card_waits_is_shown_again(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("one\ntwo\n")
    turn = calls(("c1", "write_file", json.dumps({"path": "a.txt", "content": "new\n"})))
    h = Harness(tmp_path, [turn, answer("ok")])
    meanwhile = iter(["one\ntwo\nthree\n", None])

    def change_the_file(_request) -> None:
        text = next(meanwhile)
        if text is not None:
            target.write_text(text)

    h.answer_cards(Decision("yes"), Decision("yes"), before=change_the_file)
    await h.session.send("write")
    assert len(h.cards) == 2
    assert "-three" not in h.cards[0].diff and "-three" in h.cards[1].diff
    assert target.read_text() == "new\n"


async def test_only_the_accepted_hunks_are_applied_and_the_model_is_told(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text(THREE_HUNKS)
    args = edit_args(
        "a.txt", ("line 2\n", "TWO\n"), ("line 15\n", "FIFTEEN\n"), ("line 28\n", "X\n")
    )
    h = Harness(tmp_path, [calls(("c1", "edit_file", args)), answer("ok")])
    h.answer_cards(Decision("yes", hunks=(0, 2)))
    await h.session.send("edit")
    text = target.read_text()
    assert "TWO" in text and "X\n" in text and "line 15\n" in text and "FIFTEEN" not in text
    told = h.result_sent(1, "c1")
    assert "applied 1, 3 of 3" in told and "not applied: 2" in told


async def test_an_edited_version_is_written_and_the_model_sees_the_difference(tmp_path):
    target = tmp_path / "a.py"
    target.write_text("x = 1\n")
    h = Harness(
        tmp_path, [calls(("c1", "edit_file", edit_args("a.py", ("x = 1", "x = 2")))), answer("ok")]
    )
    h.answer_cards(Decision("yes", edited="x = 3\n"))
    await h.session.send("edit")
    assert target.read_text() == "x = 3\n"
    told = h.result_sent(1, "c1")
    assert "-x = 2" in told and "+x = 3" in told and "edited your proposal" in told


async def test_always_adds_a_rule_and_the_next_call_says_which_rule_allowed_it(tmp_path):
    (tmp_path / "src").mkdir()
    first = calls(("c1", "write_file", json.dumps({"path": "src/a.py", "content": "a\n"})))
    second = calls(("c2", "write_file", json.dumps({"path": "src/b.py", "content": "b\n"})))
    h = Harness(tmp_path, [first, second, answer("ok")])
    h.answer_cards(Decision("always", rule="write_file(src/**)", scope="conversation"))
    await h.session.send("write two")
    assert len(h.cards) == 1
    assert (tmp_path / "src" / "b.py").read_text() == "b\n"
    assert [i.rule for i in h.tool_items()] == [
        "write_file(src/**) (conversation)",
        "write_file(src/**) (conversation)",
    ]


async def test_an_always_with_an_unreadable_rule_allows_once_and_says_so(tmp_path):
    first = calls(("c1", "write_file", json.dumps({"path": "a.py", "content": "a\n"})))
    second = calls(("c2", "write_file", json.dumps({"path": "b.py", "content": "b\n"})))
    h = Harness(tmp_path, [first, second, answer("ok")])
    h.answer_cards(Decision("always", rule="write_file(((", scope="conversation"), Decision("yes"))
    result = await h.session.send("write two")
    assert result.reason is StopReason.ANSWERED  # the run goes on
    assert (tmp_path / "a.py").read_text() == "a\n" and (tmp_path / "b.py").exists()
    assert len(h.cards) == 2  # no rule was kept: the second call is asked about
    assert [i.rule for i in h.tool_items()] == ["", ""]
    notices = [i.text for i in h.session.conversation.items if isinstance(i, NoticeItem)]
    assert any("no rule was kept" in n for n in notices)


async def test_commands_show_the_command_and_folder_and_reads_need_no_card(tmp_path):
    (tmp_path / "f.txt").write_text("data\n")
    turn = calls(
        ("c1", "exec_shell_command", json.dumps({"command": "cat f.txt"})),
        ("c2", "exec_shell_command", json.dumps({"command": "echo hi > out.txt"})),
        ("c3", "read_file", json.dumps({"path": "f.txt"})),
    )
    h = Harness(tmp_path, [turn, answer("ok")])
    h.answer_cards(Decision("yes"))
    await h.session.send("go")
    assert len(h.cards) == 1
    card = h.cards[0]
    assert card.kind == "command" and card.command == "echo hi > out.txt"
    assert card.cwd == str(tmp_path)
    assert card.suggested_rule == ""  # no rule could allow a redirection to a file
    assert (tmp_path / "out.txt").read_text() == "hi\n"
    assert h.checkpoints == [h.tool_items()[1].title]  # only the change was checkpointed
    assert "[exit code: 0]" in h.tool_items()[0].result


async def test_an_escape_is_refused_without_asking(tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    args = json.dumps({"path": f"../{outside.name}", "content": "x"})
    h = Harness(tmp_path, [calls(("c1", "write_file", args)), answer("ok")], mode="full")
    await h.session.send("write outside")
    assert not outside.exists()
    item = h.tool_items()[0]
    assert item.state == "error" and "outside the workspace" in item.result


async def test_full_mode_writes_without_a_card_but_with_a_checkpoint(tmp_path):
    args = json.dumps({"path": "new/dir/a.txt", "content": "hi\n"})
    h = Harness(tmp_path, [calls(("c1", "write_file", args)), answer("ok")], mode="full")
    await h.session.send("write")
    assert (tmp_path / "new" / "dir" / "a.txt").read_text() == "hi\n"
    assert h.cards == [] and h.checkpoints == ["Write new/dir/a.txt"]
    assert "Created" in h.tool_items()[0].result


async def test_a_request_is_awaitable_and_the_first_answer_wins(tmp_path):
    item = ToolItem(tool="write_file", call_id="c1", args="{}")
    request = ApprovalRequest(item, "edit", diff="+x\n")
    waiter = asyncio.ensure_future(request)  # the loop awaits the request itself
    await asyncio.sleep(0)
    assert not waiter.done() and not request.done
    request.resolve(Decision("no", "not now"))
    request.resolve(Decision("yes"))  # a second front end, too late
    assert await waiter == Decision("no", "not now")
    assert await request.wait() == Decision("no", "not now")
    assert request.to_json()["diff"] == "+x\n" and request.to_json()["kind"] == "edit"
