"""Tool faults (issue #8): a huge file, a file that vanishes, a read-only file, and
commands that print forever, ignore SIGTERM or spawn many children.

Each goes through the real loop — `agent run` against the loopback fake server,
or a real Session where a front end has to answer an approval card — and ends
with a result the model can act on, the right exit code, and the conversation
stored and resumable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent_cli.backends.loop import BuiltinLoop, LoopParts, LoopSettings
from agent_cli.backends.prompt import system_prompt
from agent_cli.engine.approval import Decision
from agent_cli.engine.events import ApprovalRequested, Event
from agent_cli.engine.items import Conversation, NoticeItem, ToolItem
from agent_cli.engine.session import Session
from agent_cli.engine.store import Store
from agent_cli.providers.scripted import ScriptedProvider, Step, answer, calls
from agent_cli.tools.base import ToolContext
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.workspace import Workspace
from tests.support.cli import agent, agent_process, err, saved
from tests.support.fake_openai import FakeOpenAI, text, tool_calls
from tests.support.measured import agent_measured

PEAK_RSS_MIB = 120
"""Far below what keeping a 2 GB file or a flood of output would need; well above the
agent's own footprint (about 40 MiB)."""


def call(name: str, **args: object) -> tuple[str, str, str]:
    return (f"call_{name}", name, json.dumps(args))


def tool_result(fake: FakeOpenAI, request: int = 1) -> str:
    """What the model read back for the last call of round `request - 1`."""
    return fake.requests[request]["messages"][-1]["content"]


def assert_clean(stderr: str) -> None:
    assert "Traceback" not in stderr and "unexpected error" not in stderr, stderr


def assert_resumable(fake: FakeOpenAI, workspace: Path) -> None:
    """The stored conversation loads and `agent run --continue` goes on with it."""
    before = saved()
    assert len(before) == 1 and before[0]["state"] == "idle", before
    fake.add(text("Going on."))
    again = agent(workspace, "run", "--continue", "go on", fake=fake)
    assert again.returncode == 0, err(again)
    after = saved()
    assert len(after) == 1 and len(after[0]["items"]) == len(before[0]["items"]) + 2


def pids_alive(pids: list[int]) -> list[int]:
    """Those of `pids` still running (a zombie waiting for its reaper does not count)."""
    alive = []
    for pid in pids:
        state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True)
        if state.stdout.strip() not in (b"", b"Z"):
            alive.append(pid)
    return alive


# ------------------------------------------------------------------ a 2 GB file


def test_a_2_gb_sparse_file_is_refused_without_being_read(fake, workspace):
    with open(workspace / "huge.log", "wb") as handle:
        handle.truncate(2 * 1024**3)  # sparse: no disk used
    fake.add(
        tool_calls(
            call("read_file", path="huge.log", start_line=1, end_line=5),
            call("grep_search", path=".", pattern="needle"),
        ),
        text("It is too big to read."),
    )
    run = agent_measured(workspace, "run", "read huge.log", fake=fake)
    assert run.result.returncode == 0, err(run.result)
    assert_clean(err(run.result))
    messages = fake.requests[1]["messages"]
    told = [m["content"] for m in messages if m["role"] == "tool"]
    assert "too big (2147483648 bytes" in told[0] and "grep_search" in told[0]
    assert "skipped 1 files over 2 MiB" in told[1]  # the search left it alone too
    assert run.peak_rss_mib < PEAK_RSS_MIB, f"peak RSS {run.peak_rss_mib:.0f} MiB"
    assert run.seconds < 20
    items = saved()[0]["items"]
    assert [i["state"] for i in items if i["kind"] == "tool"] == ["error", "done"]
    assert_resumable(fake, workspace)


# ------------------------------------------------------------------ a file that vanishes


class Harness:
    """A real Session in `ask` mode with the built-in tools, a store, and a front end
    that runs `meanwhile` when a card appears, then answers yes."""

    def __init__(self, workspace: Path, store_dir: Path, turns: list[list[Step]]) -> None:
        self.workspace = workspace
        self.provider = ScriptedProvider(turns)
        self.store = Store(store_dir)
        self.cards: list[str] = []
        self.checkpoint_hook: Callable[[], object] = lambda: None

        async def checkpoint(_conversation: str, _label: str) -> list[str]:
            self.checkpoint_hook()  # runs after the yes, just before the write
            return []

        def backend(_conversation: Conversation) -> BuiltinLoop:
            return BuiltinLoop(
                provider=self.provider,
                tools=builtin_tools(),
                context=ToolContext(Workspace(workspace)),
                settings=LoopSettings("m", workspace, 10),
                system_prompt=lambda m: system_prompt(workspace, m),
                parts=LoopParts(checkpoint=checkpoint),
            )

        conversation = Conversation(workspace=str(workspace), mode="ask")
        self.session = Session(conversation, backend, self.store)

    def on_card(self, meanwhile: Callable[[], object]) -> None:
        def on(event: Event) -> None:
            if isinstance(event, ApprovalRequested):
                self.cards.append(event.request.diff)
                meanwhile()
                event.request.resolve(Decision("yes"))

        self.session.events.subscribe(on)

    def tool_items(self) -> list[ToolItem]:
        return [i for i in self.session.conversation.items if isinstance(i, ToolItem)]

    def notices(self) -> list[str]:
        return [i.text for i in self.session.conversation.items if isinstance(i, NoticeItem)]

    def reloaded(self) -> Conversation:
        return self.store.load(self.session.conversation.id)


def edit_call(path: str, old: str, new: str) -> list[Step]:
    args = {"path": path, "edits": [{"old_text": old, "new_text": new}]}
    return calls(("c1", "edit_file", json.dumps(args)))


async def test_an_edit_whose_file_vanished_at_the_card_writes_nothing(workspace, tmp_path):
    target = workspace / "a.txt"
    target.write_text("hello\n")
    h = Harness(workspace, tmp_path / "store", [edit_call("a.txt", "hello", "bye"), answer("ok")])
    h.on_card(lambda: target.unlink())
    await h.session.send("edit a.txt")
    assert h.cards and "+bye" in h.cards[0]
    assert not target.exists(), "the edit was written from a stale diff"
    said = " ".join([*h.notices(), h.tool_items()[0].result])
    assert "a.txt does not exist" in said
    assert h.reloaded().items == h.session.conversation.items
    h.provider.turns.append(answer("Going on."))
    again = await h.session.send("go on")
    assert again.reason.value == "answered", again.error
    assert h.reloaded().items == h.session.conversation.items


async def test_an_edit_whose_file_vanished_at_the_card_fails_and_the_run_goes_on(
    workspace, tmp_path
):
    target = workspace / "a.txt"
    target.write_text("hello\n")
    h = Harness(workspace, tmp_path / "store", [edit_call("a.txt", "hello", "bye"), answer("ok")])
    h.on_card(lambda: target.unlink())
    result = await h.session.send("edit a.txt")
    assert result.reason.value == "answered", result.error
    item = h.tool_items()[0]
    assert item.state == "error" and "a.txt does not exist" in item.result
    assert "does not exist" in h.provider.requests[1].messages[-1].content


async def test_a_write_whose_file_vanished_at_the_card_asks_again(workspace, tmp_path):
    target = workspace / "a.txt"
    target.write_text("old\n")
    turn = calls(("c1", "write_file", json.dumps({"path": "a.txt", "content": "new\n"})))
    h = Harness(workspace, tmp_path / "store", [turn, answer("ok")])
    h.on_card(lambda: target.unlink(missing_ok=True))
    result = await h.session.send("write a.txt")
    assert result.reason.value == "answered", result.error
    assert len(h.cards) == 2, "the person must see the new diff (now a creation)"
    assert "-old" in h.cards[0] and "/dev/null" in h.cards[1] and "-old" not in h.cards[1]
    assert any("a.txt changed while the card waited" in n for n in h.notices())
    assert target.read_text() == "new\n" and h.tool_items()[0].state == "done"


async def test_a_file_changed_after_the_yes_is_not_overwritten(workspace, tmp_path):
    """The checkpoint runs between the last re-plan and the write: the write re-checks."""
    target = workspace / "a.txt"
    target.write_text("hello\n")
    h = Harness(
        workspace,
        tmp_path / "store",
        [edit_call("a.txt", "hello", "bye"), answer("I will read it again.")],
    )
    h.on_card(lambda: None)
    h.checkpoint_hook = lambda: target.write_text("hello\nsomeone else's line\n")
    result = await h.session.send("edit a.txt")
    assert result.reason.value == "answered", result.error
    assert target.read_text() == "hello\nsomeone else's line\n"
    item = h.tool_items()[0]
    assert item.state == "error" and "changed after this change was planned" in item.result
    assert "nothing was written" in h.provider.requests[1].messages[-1].content


async def test_a_file_deleted_after_the_yes_is_not_recreated(workspace, tmp_path):
    target = workspace / "a.txt"
    target.write_text("hello\n")
    h = Harness(workspace, tmp_path / "store", [edit_call("a.txt", "hello", "bye"), answer("ok")])
    h.on_card(lambda: None)
    h.checkpoint_hook = target.unlink
    result = await h.session.send("edit a.txt")
    assert result.reason.value == "answered", result.error
    assert not target.exists(), "a deleted file was brought back from a stale plan"
    assert "deleted" in h.tool_items()[0].result
    assert h.reloaded().items == h.session.conversation.items


# ------------------------------------------------------------------ a read-only file


@pytest.fixture
def locked(workspace: Path) -> Iterator[Path]:
    """A file this process cannot change: mode 0444, or immutable when running as root
    (root writes through 0444)."""
    target = workspace / "locked.txt"
    target.write_text("keep me\n")
    if os.geteuid() != 0:
        target.chmod(0o444)
        yield target
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(target)]).returncode != 0:
        pytest.skip("running as root, and this file system cannot mark a file immutable")
    try:
        yield target
    finally:
        subprocess.run([chattr, "-i", str(target)], check=True)


def test_a_read_only_file_is_not_changed_and_the_model_is_told(fake, workspace, locked):
    fake.add(
        tool_calls(
            call("edit_file", path="locked.txt", edits=[{"old_text": "keep", "new_text": "x"}])
        ),
        tool_calls(call("write_file", path="locked.txt", content="replaced\n")),
        text("The file is read-only."),
    )
    result = agent(workspace, "run", "change locked.txt", "--yes", fake=fake)
    assert result.returncode == 0, err(result)
    assert_clean(err(result))
    assert locked.read_text() == "keep me\n"
    for request in (1, 2):
        told = tool_result(fake, request)
        assert told == "locked.txt could not be written (it is read-only); nothing was changed."
    assert not [p for p in workspace.iterdir() if p.name.endswith(".tmp")]  # no temp left
    assert "✗ Edit locked.txt" in err(result)
    assert_resumable(fake, workspace)


# ------------------------------------------------------------------ runaway commands


def test_a_command_that_prints_forever_is_capped_and_timed_out(fake, workspace):
    fake.add(
        tool_calls(call("exec_shell_command", command="yes", timeout=2)),
        text("It never stopped."),
    )
    run = agent_measured(workspace, "run", "run yes", "--yes", fake=fake)
    assert run.result.returncode == 0, err(run.result)
    assert_clean(err(run.result))
    told = tool_result(fake)
    assert told.startswith("y\ny\n") and "bytes of output cut here" in told
    assert told.endswith("[timed out after 2 s; the command's processes were killed]")
    assert len(told.encode()) < 13 * 1024  # the 12 KiB cap, plus its two notes
    assert run.peak_rss_mib < PEAK_RSS_MIB, f"peak RSS {run.peak_rss_mib:.0f} MiB"
    assert run.seconds < 20
    assert_resumable(fake, workspace)


def test_a_command_ignoring_sigterm_is_killed_with_its_group(fake, workspace):
    command = "trap '' TERM; sleep 60 & echo $! > child.pid; sleep 60"
    fake.add(
        tool_calls(call("exec_shell_command", command=command, timeout=1)),
        text("It had to be killed."),
    )
    started = time.monotonic()
    # Unsandboxed: the pids it writes are the host's (the sandboxed case: tests/sandbox).
    result = agent(workspace, "run", "stubborn", "--yes", "--sandbox", "off", fake=fake)
    assert time.monotonic() - started < 15, "the SIGKILL after the grace period did not come"
    assert result.returncode == 0, err(result)
    assert "timed out after 1 s" in tool_result(fake)
    assert pids_alive([int((workspace / "child.pid").read_text())]) == []
    assert_resumable(fake, workspace)


def test_a_bounded_fork_bomb_leaves_no_process_behind(fake, workspace):
    command = "for i in $(seq 50); do sleep 30 & echo $! >> pids.txt; done; wait"
    fake.add(
        tool_calls(call("exec_shell_command", command=command, timeout=1)),
        text("Stopped them all."),
    )
    started = time.monotonic()
    result = agent_process(workspace, "run", "spawn", "--yes", "--sandbox", "off", fake=fake)
    assert time.monotonic() - started < 15
    assert result.returncode == 0, err(result)
    assert "timed out after 1 s" in tool_result(fake)
    pids = [int(line) for line in (workspace / "pids.txt").read_text().split()]
    assert len(pids) == 50
    assert pids_alive(pids) == []
    assert_resumable(fake, workspace)
