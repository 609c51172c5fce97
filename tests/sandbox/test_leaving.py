"""Leaving the sandbox is a decision, never a silent fallback (SPEC §14), and `auto` mode.

Through the real loop, the real tools and a real sandbox: a command the sandbox
stopped gets a card in `ask` and `auto` that runs it again outside only on a
yes; in `full` the model reads what was stopped; an "always" on that card keeps
a rule marked unsandboxed.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.backends.loop import BuiltinLoop, LoopParts, LoopSettings
from agent_cli.backends.prompt import system_prompt
from agent_cli.engine.approval import Decision
from agent_cli.engine.events import ApprovalRequested
from agent_cli.engine.items import Conversation, ToolItem
from agent_cli.engine.session import Session
from agent_cli.policy.rules import RuleSet
from agent_cli.providers.scripted import ScriptedProvider, answer, calls
from agent_cli.sandbox.launch import Sandbox
from agent_cli.tools.base import ToolContext
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.workspace import Workspace
from tests.sandbox.conftest import make_sandbox


def shell(call_id: str, command: str):
    return calls((call_id, "exec_shell_command", json.dumps({"command": command})))


class Harness:
    def __init__(self, workspace: Path, turns: list, mode: str, sandbox: Sandbox, rules_dir: Path):
        self.provider = ScriptedProvider(turns)
        confined = Workspace(workspace)
        self.rules = RuleSet(confined, folder=rules_dir)
        self.cards: list = []

        def backend(_conversation: Conversation) -> BuiltinLoop:
            return BuiltinLoop(
                provider=self.provider,
                tools=builtin_tools(),
                context=ToolContext(confined, sandbox=sandbox),
                settings=LoopSettings("m", workspace, 10),
                system_prompt=lambda m: system_prompt(workspace, m),
                parts=LoopParts(rules=self.rules),
            )

        self.session = Session(Conversation(workspace=str(workspace), mode=mode), backend, None)

    def answer(self, *decisions: Decision) -> None:
        queue = list(decisions)

        def on(event) -> None:
            if isinstance(event, ApprovalRequested):
                self.cards.append(event.request)
                event.request.resolve(queue.pop(0))

        self.session.events.subscribe(on)

    def tools(self) -> list[ToolItem]:
        return [i for i in self.session.conversation.items if isinstance(i, ToolItem)]

    def sent(self, round_index: int, call_id: str) -> str:
        messages = self.provider.requests[round_index].messages
        return next(m.content for m in messages if m.role == "tool" and m.tool_call_id == call_id)


async def test_in_ask_a_stopped_command_runs_outside_only_after_a_second_yes(
    kind, tmp_path, outside
):
    target = outside / "written"
    h = Harness(
        tmp_path, [shell("c1", f"echo x > {target}"), answer("ok")], "ask",
        make_sandbox(kind), tmp_path / "rules",
    )  # fmt: skip
    h.answer(Decision("yes"), Decision("yes"))
    await h.session.send("write it")
    first, second = h.cards
    assert not first.outside and second.outside  # the command's card, then the sandbox's
    assert second.command == f"echo x > {target}"
    assert target.read_text() == "x\n"
    assert "[run again outside the sandbox]" in h.sent(1, "c1")


async def test_a_no_on_the_sandbox_card_leaves_it_undone_and_the_model_reads_why(
    kind, tmp_path, outside
):
    target = outside / "written"
    h = Harness(
        tmp_path, [shell("c1", f"echo x > {target}"), answer("ok")], "auto",
        make_sandbox(kind), tmp_path / "rules",
    )  # fmt: skip
    h.answer(Decision("no", "not outside, please"))
    await h.session.send("write it")
    assert len(h.cards) == 1 and h.cards[0].outside  # auto ran it sandboxed without a card
    assert not target.exists()
    sent = h.sent(1, "c1")
    assert "The sandbox stopped this command" in sent and "not outside, please" in sent


async def test_always_keeps_an_unsandboxed_rule_that_the_next_call_uses(kind, tmp_path, outside):
    target = outside / "written"
    command = f"touch {target}"  # no redirection: a rule never covers one
    turns = [shell("c1", command), shell("c2", command), answer("ok")]
    h = Harness(tmp_path, turns, "auto", make_sandbox(kind), tmp_path / "rules")
    h.answer(Decision("always", rule=f"exec_shell_command({command})", scope="project"))
    await h.session.send("append twice")
    assert len(h.cards) == 1  # the second call, sandboxed, would have been stopped again
    assert target.exists()
    first, second = h.tools()
    assert first.rule.endswith(", unsandboxed (project)")
    assert second.rule == f"exec_shell_command({command}), unsandboxed (project)"
    again = RuleSet(Workspace(tmp_path), folder=tmp_path / "rules")  # kept on disk
    assert again.match("exec_shell_command", {"command": command}) == (
        "unsandboxed",
        f"exec_shell_command({command}), unsandboxed (project)",
    )


async def test_in_full_no_card_and_the_model_reads_what_was_stopped(kind, tmp_path, outside):
    target = outside / "written"
    h = Harness(
        tmp_path, [shell("c1", f"echo x > {target}"), answer("ok")], "full",
        make_sandbox(kind), tmp_path / "rules",
    )  # fmt: skip
    h.answer()
    await h.session.send("write it")
    assert h.cards == [] and not target.exists()
    sent = h.sent(1, "c1")
    assert "The sandbox stopped this command" in sent and "approval" in sent


async def test_auto_runs_sandboxed_commands_and_workspace_edits_without_a_card(kind, tmp_path):
    edit = calls(("c2", "write_file", json.dumps({"path": "src/a.py", "content": "x = 1\n"})))
    turns = [shell("c1", "echo built > out.txt"), edit, answer("ok")]
    h = Harness(tmp_path, turns, "auto", make_sandbox(kind), tmp_path / "rules")
    h.answer()
    await h.session.send("go")
    assert h.cards == []
    assert (tmp_path / "out.txt").read_text() == "built\n"
    assert (tmp_path / "src" / "a.py").read_text() == "x = 1\n"


async def test_auto_asks_for_edits_where_code_runs_later(kind, tmp_path):
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "hooks").symlink_to(tmp_path / ".git" / "hooks")
    turns = [
        calls(("c1", "write_file", json.dumps({"path": ".git/hooks/pre-commit", "content": "x"}))),
        calls(("c2", "write_file", json.dumps({"path": "hooks/post-merge", "content": "x"}))),
        calls(("c3", "write_file", json.dumps({"path": ".agent/config.toml", "content": "x"}))),
        answer("ok"),
    ]
    h = Harness(tmp_path, turns, "auto", make_sandbox(kind), tmp_path / "rules")
    h.answer(Decision("no"))
    await h.session.send("go")
    hook, linked, _ = h.tools()
    assert "cannot be written" in hook.result and "cannot be written" in linked.result
    assert [card.item.call_id for card in h.cards] == ["c3"]  # .agent asks, even in auto
    assert not (tmp_path / ".git" / "hooks" / "pre-commit").exists()
    assert not (tmp_path / ".agent").exists()


async def test_auto_without_a_sandbox_asks_for_every_command(tmp_path):
    off = Sandbox(make_sandbox("off").config)
    h = Harness(tmp_path, [shell("c1", "echo x > f"), answer("ok")], "auto", off, tmp_path / "r")
    h.answer(Decision("no"))
    await h.session.send("go")
    assert len(h.cards) == 1 and not h.cards[0].outside
    assert not (tmp_path / "f").exists()
    notices = [i.text for i in h.session.conversation.items if type(i).__name__ == "NoticeItem"]
    assert any("without a sandbox" in text for text in notices)
