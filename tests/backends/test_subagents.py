"""Sub-agents: the task tool runs a child loop inside the parent's run, through a real Session."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_cli import paths
from agent_cli.backends.subagent_definitions import Definitions, discover
from agent_cli.backends.subagents import SUBAGENT_PROMPT, Subagents
from agent_cli.engine.approval import Decision
from agent_cli.engine.backend import RunResult, StopReason
from agent_cli.engine.events import ApprovalRequested, Event, ItemAdded
from agent_cli.engine.items import AssistantItem, Conversation, ToolItem, UserItem
from agent_cli.engine.session import Session
from agent_cli.providers.base import Request, StreamEvent
from agent_cli.providers.scripted import ScriptedProvider, Step, answer, calls
from agent_cli.settings import Settings
from tests.support.sessions import make_session
from tests.support.waiting import eventually

SUBAGENT_MARK = SUBAGENT_PROMPT.strip().splitlines()[0]
TIMEOUT = 10  # a run that waits for nobody fails instead of hanging


async def send(session: Session, text: str) -> RunResult:
    return await asyncio.wait_for(session.send(text), TIMEOUT)


def task(call_id: str, prompt: str, agent: str | None = None) -> tuple[str, str, str]:
    args = {"description": f"work {call_id}", "prompt": prompt}
    if agent:
        args["agent"] = agent
    return (call_id, "task", json.dumps(args))


NONE = Definitions(())


def subagents(definitions: Definitions = NONE, depth: int = 3, rounds: int = 50) -> Subagents:
    return Subagents(definitions, depth, rounds)


def is_child(request: Request) -> bool:
    return SUBAGENT_MARK in request.system


def offered(request: Request) -> list[str]:
    return [spec.name for spec in request.tools]


def items_under(conversation: Conversation, item: ToolItem) -> list:
    return [i for i in conversation.items if i.parent == item.id]


def task_items(conversation: Conversation) -> list[ToolItem]:
    return [i for i in conversation.items if isinstance(i, ToolItem) and i.tool == "task"]


class ChildrenProvider(ScriptedProvider):
    """The parent's turns are scripted; each child waits for `gate` (if any), then
    answers with its own prompt, so concurrent children need no shared script. The
    wait has no limit of its own: a gate that never opens holds the run until it is
    stopped, or until `send` gives up at TIMEOUT."""

    def __init__(self, turns: list[list[Step]], gate: asyncio.Barrier | None = None) -> None:
        super().__init__(turns)
        self.gate = gate
        self.children_started = 0
        self.children_cancelled = 0

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        if not is_child(request):
            async for event in super().stream(request):
                yield event
            return
        self.requests.append(request)
        self.children_started += 1
        try:
            if self.gate is not None:
                await self.gate.wait()
            prompt = request.messages[0].content
            for step in answer(f"done: {prompt}"):
                yield step  # type: ignore[misc]
        except asyncio.CancelledError:
            self.children_cancelled += 1
            raise


# ------------------------------------------------------------------ the basics


async def test_a_child_answers_and_its_answer_is_the_result(tmp_path: Path) -> None:
    turns = [
        calls(task("t1", "find the config loader")),
        answer("child says"),
        answer("parent done"),
    ]
    session, provider, _ = make_session(tmp_path, turns, subagents=subagents())
    result = await send(session, "look around")

    assert result.reason is StopReason.ANSWERED
    conversation = session.conversation
    (card,) = task_items(conversation)
    assert card.state == "done" and card.result == "child says"
    assert card.title == "Task: work t1"
    nested = items_under(conversation, card)
    assert [i.kind for i in nested] == ["user", "assistant"]
    assert nested[0].text == "find the config loader"
    child_request = provider.requests[1]
    assert is_child(child_request)
    assert [(m.role, m.content) for m in child_request.messages] == [
        ("user", "find the config loader")
    ]
    # By default a child only reads: no write tools are offered to it.
    assert "write_file" not in offered(child_request) and "read_file" in offered(child_request)
    # The parent's model never reads the child's items, only the task's result.
    parent_next = provider.requests[2].messages
    assert [m.role for m in parent_next] == ["user", "assistant", "tool"]
    assert parent_next[2].content == "child says"
    # The child's usage counts in the conversation's.
    assert conversation.usage.input_tokens == 30


async def test_child_items_are_stored_and_stay_apart_after_a_reload(tmp_path: Path) -> None:
    turns = [calls(task("t1", "count files")), answer("twelve"), answer("There are twelve.")]
    session, _, _ = make_session(tmp_path, turns, subagents=subagents())
    await send(session, "how many files?")
    again = Conversation.from_json(json.loads(json.dumps(session.conversation.to_json())))
    (card,) = task_items(again)
    assert [i.text for i in items_under(again, card) if isinstance(i, AssistantItem)] == ["twelve"]

    from agent_cli.backends.context import to_messages

    roots = [i for i in again.items if not i.parent]
    assert len(to_messages(roots)) == 4  # user, call, result, answer: nothing of the child's


async def test_stream_events_carry_the_parent_link(tmp_path: Path) -> None:
    turns = [calls(task("t1", "look")), answer("seen"), answer("ok")]
    session, _, recorder = make_session(tmp_path, turns, subagents=subagents())
    await send(session, "go")
    (card,) = task_items(session.conversation)
    added = [e.to_json()["item"] for e in recorder.of(ItemAdded)]
    assert [(i["kind"], i["parent"]) for i in added if i["parent"]] == [
        ("user", card.id),
        ("assistant", card.id),
    ]


async def test_the_task_card_says_the_childs_step_and_its_count_of_calls(tmp_path: Path):
    (tmp_path / "a.txt").write_text("a\n")
    read = ("r1", "read_file", json.dumps({"path": "a.txt"}))
    again = ("r2", "read_file", json.dumps({"path": "a.txt"}))
    turns = [calls(task("t1", "read a")), calls(read), calls(again), answer("a"), answer("ok")]
    session, _, _ = make_session(tmp_path, turns, subagents=subagents())
    said: list[str] = []  # the task item's progress as each update published it

    def note(event: Event) -> None:
        item = getattr(event, "item", None)
        task_said = isinstance(item, ToolItem) and item.tool == "task" and item.progress
        if task_said and (not said or said[-1] != item.progress):
            said.append(item.progress)

    session.events.subscribe(note)
    await send(session, "go")
    assert said[0] == "0 tool calls · thinking"
    assert "1 tool call · Read a.txt" in said and "2 tool calls · Read a.txt" in said
    assert said[-1] == "2 tool calls · thinking"
    (card,) = task_items(session.conversation)
    assert card.state == "done" and card.progress == ""  # said only while it ran


# ---------------------------------------------------------------------- guards


async def test_the_depth_limit_takes_the_tool_away_at_the_last_level(tmp_path: Path) -> None:
    turns = [
        calls(task("t1", "level one")),
        calls(task("t2", "level two")),
        answer("from level two"),
        answer("from level one"),
        answer("top"),
    ]
    session, provider, _ = make_session(tmp_path, turns, subagents=subagents(depth=2))
    await send(session, "go deep")
    top, one, two = provider.requests[0], provider.requests[1], provider.requests[2]
    assert "task" in offered(top) and "task" in offered(one)
    assert "task" not in offered(two)  # depth 2 is the limit
    outer, inner = task_items(session.conversation)
    assert inner.parent == outer.id  # a grandchild's card sits under its parent's
    assert inner.result == "from level two" and outer.result == "from level one"


async def test_depth_zero_offers_no_task_tool(tmp_path: Path) -> None:
    from agent_cli.providers.base import ModelInfo
    from agent_cli.wiring import builtin_backend

    provider = ScriptedProvider([])
    conversation = Conversation(workspace=str(tmp_path))
    for depth, expected in ((0, False), (1, True)):
        settings = Settings(workspace=tmp_path, provider=None, subagent_depth=depth)
        loop = builtin_backend(settings, conversation, provider, ModelInfo("m"))
        assert ("task" in loop.tools.names()) is expected  # type: ignore[attr-defined]


async def test_one_round_budget_is_shared_by_every_child_of_a_message(tmp_path: Path) -> None:
    looping = calls(("c", "get_info", "{}"))
    turns = [
        calls(task("t1", "first")),
        looping,
        looping,
        looping,  # the budget of 3 rounds is spent here
        calls(task("t2", "second")),  # starts with nothing left: no request at all
        answer("gave up"),
        # The next message has a fresh budget.
        calls(task("t3", "third")),
        answer("third done"),
        answer("fine"),
    ]
    session, provider, _ = make_session(tmp_path, turns, subagents=subagents(rounds=3))
    await send(session, "work")
    first, second = task_items(session.conversation)
    for card in (first, second):
        assert card.state == "error"
        assert "the 3 rounds all sub-agents of this message share are spent" in card.result
    assert len(provider.requests) == 6
    assert [i.kind for i in items_under(session.conversation, second)] == ["user", "notice"]

    await send(session, "again")
    third = task_items(session.conversation)[-1]
    assert third.state == "done" and third.result == "third done"


async def test_task_calls_of_one_round_run_concurrently(tmp_path: Path) -> None:
    # Each child waits at a barrier for the other: run one after the other, the first
    # would wait for ever (and `send` fail at TIMEOUT).
    provider = ChildrenProvider(
        [calls(task("t1", "alpha"), task("t2", "beta")), answer("both done")],
        gate=asyncio.Barrier(2),
    )
    session, _, _ = make_session(
        tmp_path, [], provider=provider, mode="full", subagents=subagents()
    )
    result = await send(session, "split the work")
    assert result.reason is StopReason.ANSWERED
    assert [c.result for c in task_items(session.conversation)] == ["done: alpha", "done: beta"]


async def test_a_stop_cancels_every_live_child(tmp_path: Path) -> None:
    provider = ChildrenProvider(
        [calls(task("t1", "alpha"), task("t2", "beta"))], gate=asyncio.Barrier(3)
    )  # a third party that never comes: both children hang until stopped
    session, _, _ = make_session(tmp_path, [], provider=provider, subagents=subagents())
    running = asyncio.ensure_future(send(session, "split the work"))
    await eventually(lambda: provider.children_started == 2, "both children")
    session.stop()
    result = await running  # within TIMEOUT: only the stop ends the children's wait
    assert result.reason is StopReason.STOPPED
    assert provider.children_cancelled == 2
    for card in task_items(session.conversation):
        assert card.state == "error"
    assert not [
        i
        for i in session.conversation.items
        if (isinstance(i, ToolItem) and i.state in ("composing", "running", "waiting"))
        or (isinstance(i, AssistantItem) and i.streaming)
    ]


# ------------------------------------------------------------ modes and approvals


def write_definitions(root: Path, name: str, front: str, body: str = "Write carefully.") -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{name}.md").write_text(f"---\nname: {name}\n{front}\n---\n{body}\n")


def writer(tmp_path: Path) -> Definitions:
    folder = tmp_path / ".agent" / "agents"
    write_definitions(
        folder, "writer", "description: Writes files.\nmode: full\ntools: [write_file]"
    )
    return discover(tmp_path)


WRITE = calls(("w1", "write_file", json.dumps({"path": "out.txt", "content": "hi\n"})))


async def test_a_childs_approval_is_asked_on_the_parents_front_end(tmp_path: Path) -> None:
    turns = [calls(task("t1", "write it", "writer")), WRITE, answer("written"), answer("ok")]
    session, provider, _ = make_session(
        tmp_path, turns, mode="ask", subagents=subagents(writer(tmp_path))
    )
    asked: list[ToolItem] = []

    def approve(event: Event) -> None:
        if isinstance(event, ApprovalRequested):
            asked.append(event.request.item)
            assert event.request in session.pending_approvals
            event.request.resolve(Decision("yes"))

    session.events.subscribe(approve)
    await send(session, "write out.txt")
    (card,) = task_items(session.conversation)
    # A definition of mode full under a parent in ask mode: the change still asks.
    assert [i.tool for i in asked] == ["write_file"] and asked[0].parent == card.id
    assert (tmp_path / "out.txt").read_text() == "hi\n"
    assert card.result == "written"
    assert offered(provider.requests[1]) == ["write_file"]  # the definition's tools only


async def test_a_child_never_exceeds_the_parents_mode(tmp_path: Path) -> None:
    turns = [calls(task("t1", "write it", "writer")), WRITE, answer("could not"), answer("ok")]
    session, provider, recorder = make_session(
        tmp_path, turns, mode="read-only", subagents=subagents(writer(tmp_path))
    )
    await send(session, "write out.txt")
    assert "write_file" not in offered(provider.requests[1])  # not offered in read-only
    write = next(
        i for i in session.conversation.items if isinstance(i, ToolItem) and i.call_id == "w1"
    )
    assert write.state == "denied" and "read-only" in write.result
    assert not (tmp_path / "out.txt").exists()
    assert not recorder.of(ApprovalRequested)


async def test_the_parents_mode_is_read_at_each_call(tmp_path: Path) -> None:
    turns = [calls(task("t1", "write it", "writer")), WRITE, answer("done"), answer("ok")]
    session, _, _ = make_session(
        tmp_path, turns, mode="full", subagents=subagents(writer(tmp_path))
    )

    def switch(event: Event) -> None:  # the person switches to read-only while the child works
        if isinstance(event, ItemAdded) and isinstance(event.item, UserItem) and event.item.parent:
            session.set_mode("read-only")

    session.events.subscribe(switch)
    await send(session, "write out.txt")
    assert not (tmp_path / "out.txt").exists()


async def test_a_refusal_names_the_sub_agents_own_limit(tmp_path: Path) -> None:
    touch = calls(("x1", "exec_shell_command", '{"command": "touch made.txt"}'))
    turns = [calls(task("t1", "make a file")), touch, answer("could not"), answer("ok")]
    session, _, _ = make_session(tmp_path, turns, mode="ask", subagents=subagents())
    await send(session, "go")
    refused = next(
        i for i in session.conversation.items if isinstance(i, ToolItem) and i.call_id == "x1"
    )
    assert refused.state == "denied"
    assert "this sub-agent (its definition allows read-only" in refused.result
    assert "the conversation is in ask mode" in refused.result
    assert "Not done: the conversation is in read-only mode" not in refused.result
    assert not (tmp_path / "made.txt").exists()


async def test_full_parent_and_default_child_only_reads(tmp_path: Path) -> None:
    turns = [calls(task("t1", "look")), answer("looked"), answer("ok")]
    session, provider, _ = make_session(tmp_path, turns, mode="full", subagents=subagents())
    await send(session, "go")
    assert "write_file" not in offered(provider.requests[1])
    assert "read-only" in provider.requests[1].system


# ------------------------------------------------------------------- definitions


def test_definitions_come_from_the_user_and_the_workspace(tmp_path: Path) -> None:
    user = paths.config_dir() / "agents"
    write_definitions(user, "reviewer", "description: Reviews (user).", "User prompt.")
    write_definitions(user, "tester", "description: Writes tests.\nmodel: small-model")
    local = tmp_path / ".agent" / "agents"
    write_definitions(local, "reviewer", "description: Reviews (project).\ntools:\n  - read_file")
    (local / "broken.md").write_text("no front matter\n")
    found = discover(tmp_path)
    assert [d.name for d in found.all] == ["reviewer", "tester"]
    reviewer = found.get("reviewer")
    assert reviewer is not None and reviewer.source == "workspace"
    assert reviewer.description == "Reviews (project)." and reviewer.tools == ("read_file",)
    tester = found.get("tester")
    assert tester is not None and tester.source == "user" and tester.model == "small-model"
    assert tester.mode == "read-only" and tester.tools is None
    assert len(found.warnings) == 1 and "broken.md" in found.warnings[0]


@pytest.mark.parametrize(
    ("front", "reason"),
    [
        ("description: x\nmode: root", "mode 'root'"),
        ("name: other\ndescription: x", "not its file's name"),
        ("mode: ask", "no 'description'"),
        ("description: x\ntools: [read_file", "not closed"),
    ],
)
def test_a_bad_definition_is_skipped_with_the_reason(tmp_path: Path, front: str, reason: str):
    folder = tmp_path / ".agent" / "agents"
    folder.mkdir(parents=True)
    (folder / "bad.md").write_text(f"---\n{front}\n---\nbody\n")
    found = discover(tmp_path)
    assert not found.all and reason in found.warnings[0]


async def test_a_named_definition_shapes_the_child(tmp_path: Path) -> None:
    write_definitions(
        paths.config_dir() / "agents",
        "tester",
        "description: Writes tests.\nmodel: small-model",
        "Always name the test file.",
    )
    definitions = discover(tmp_path)
    turns = [calls(task("t1", "test it", "tester")), answer("tests written"), answer("ok")]
    session, provider, _ = make_session(tmp_path, turns, subagents=subagents(definitions))
    await send(session, "go")
    task_spec = next(s for s in provider.requests[0].tools if s.name == "task")
    assert "- tester: Writes tests." in task_spec.description
    child = provider.requests[1]
    assert child.model == "small-model" and "Always name the test file." in child.system
    assert provider.requests[2].model == "scripted-model"


async def test_an_unknown_definition_is_an_error_the_model_reads(tmp_path: Path) -> None:
    turns = [calls(task("t1", "x", "nobody")), answer("ok")]
    session, provider, _ = make_session(tmp_path, turns, subagents=subagents())
    await send(session, "go")
    (card,) = task_items(session.conversation)
    assert card.state == "error" and "no sub-agent named 'nobody'" in card.result
    assert len(provider.requests) == 2


async def test_compaction_counts_only_the_conversations_own_turns(tmp_path: Path) -> None:
    turns = [calls(task("t1", "look")), answer("looked"), answer("one"), answer("two")]
    session, provider, _ = make_session(tmp_path, turns, subagents=subagents())
    await send(session, "first")
    await send(session, "second")
    # Two turns of its own (the sub-agent's prompt is not one): nothing to compact yet.
    await asyncio.wait_for(session.compact(), TIMEOUT)
    assert len(provider.requests) == 4
    assert "Nothing to compact yet" in session.conversation.items[-1].text


async def test_a_summary_stands_before_its_turn_in_the_whole_list(tmp_path: Path) -> None:
    turns = [
        calls(task("t1", "look")),
        answer("looked"),
        answer("one"),
        answer("two"),
        answer("three"),
        answer("the summary"),
    ]
    session, provider, _ = make_session(tmp_path, turns, subagents=subagents())
    for text in ("first", "second", "third"):
        await send(session, text)
    await asyncio.wait_for(session.compact(), TIMEOUT)
    sent = provider.requests[-1].messages
    assert [m.role for m in sent] == ["user", "assistant", "tool", "assistant", "user"]
    items = session.conversation.items
    at = next(i for i, item in enumerate(items) if item.kind == "summary")
    assert isinstance(items[at + 1], UserItem) and items[at + 1].text == "second"
    assert items[at - 1].text == "one"  # the sub-agent's items stay before it, kept
