"""The store under `kill -9` and a full disk (issue #8, "Reliability under faults").

tests/engine/test_store.py covers one kill during big writes, a writer's ENOSPC
keeping the previous version, and a Session saying so once. Here: 200 kills of
real runs (fixed seed), at random moments or, two in five, inside a write by
construction, after which every conversation loads, goes on, and no temporary
file is left; and a disk that fills during a run
(the person told once, the run finishing, the next save after space is freed
succeeding), in-process and through the real `agent run` with a file-size limit.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import resource
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent_cli import paths
from agent_cli.backends.loop import BuiltinLoop, LoopSettings
from agent_cli.backends.prompt import system_prompt
from agent_cli.engine.backend import StopReason
from agent_cli.engine.events import Event, ItemAdded, NoticeEvent
from agent_cli.engine.items import AssistantItem, Conversation, NoticeItem, ToolItem
from agent_cli.engine.session import Session
from agent_cli.engine.store import RECOVERED_NOTICE, Store, read_stored
from agent_cli.providers.scripted import ScriptedProvider, Step, answer, calls
from agent_cli.tools.base import ToolContext, ToolRegistry
from agent_cli.tools.builtin import builtin_tools
from agent_cli.tools.workspace import Workspace
from tests.support.cli import TIMEOUT, agent, err, out, saved
from tests.support.fake_openai import FakeOpenAI, text
from tests.support.sessions import make_session

ROOT = Path(__file__).resolve().parents[2]
KILLS = 200
SEED = 8

# One process: imports once, then forks a child per run and kills it with SIGKILL. Each
# child goes on with the newest conversation (loading what the last kill left) or starts one,
# and runs rounds of read_file calls (a save after each) until killed. Most kills come after a
# random delay; two in five land inside a write whatever the machine's speed: the child stops
# half-way through its k-th append, or before renaming its first rewrite over the log, and
# says so through a pipe.
KILLER = textwrap.dedent(
    """
    import asyncio, json, os, random, select, signal, sys, time, traceback, types
    from pathlib import Path

    from agent_cli import durable
    from agent_cli.engine import conversation_log
    from agent_cli.backends.loop import BuiltinLoop, LoopSettings
    from agent_cli.backends.prompt import system_prompt
    from agent_cli.engine.items import Conversation
    from agent_cli.engine.session import Session
    from agent_cli.engine.store import Store
    from agent_cli.providers.scripted import ScriptedProvider, answer, calls
    from agent_cli.tools.base import ToolContext, ToolRegistry
    from agent_cli.tools.builtin import builtin_tools
    from agent_cli.tools.workspace import Workspace

    folder, workspace = Path(sys.argv[1]), Path(sys.argv[2])
    kills, seed, longest = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    ROUNDS = 200
    HEADER = b'{"header":'

    def session(conversation, store):
        read = json.dumps({"path": "notes.txt"})
        turns = [calls(*((f"{os.getpid()}-{r}-{k}", "read_file", read) for k in range(3)))
                 for r in range(ROUNDS)]
        provider = ScriptedProvider([*turns, answer("done")])
        registry = ToolRegistry(builtin_tools())
        settings = LoopSettings("scripted-model", workspace, ROUNDS + 1)
        return Session(conversation, lambda _c: BuiltinLoop(
            provider=provider, tools=registry, context=ToolContext(Workspace(workspace)),
            settings=settings, system_prompt=lambda m: system_prompt(workspace, m),
        ), store)

    async def work(rng):
        store = Store(folder)
        while True:
            newest = store.list()
            if newest and newest[0].items < 300 and rng.random() < 0.7:
                conversation = store.load(newest[0].id)  # what the last kill left
            else:
                conversation = Conversation(workspace=str(workspace), mode="read-only")
            await session(conversation, store).send("read the notes again")

    # The module's os.NAME becomes one whose k-th call says so on `ready` and waits to be
    # killed (after writing half of what it was given, when `cut_short`).
    def stop_at(module, name, k, ready, cut_short):
        calls, real = [0], getattr(os, name)
        def stopping(*args):
            calls[0] += 1
            if calls[0] < k:
                return real(*args)
            if cut_short:
                real(args[0], args[1][: len(args[1]) // 2])
            os.write(ready, b"!")
            while True:
                time.sleep(60)
        module.os = types.SimpleNamespace(**{**vars(os), name: stopping})

    def torn(log):  # a save cut short ends in no header (a header is short)
        with log.open("rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - 1024))
            end = f.read()
        return not (end.endswith(b"\\n") and end[:-1].rpartition(b"\\n")[2].startswith(HEADER))

    rng = random.Random(seed)
    outcomes = {"stops in a rewrite": 0, "stopped mid-rewrite": 0,
                "stops in an append": 0, "stopped mid-append": 0}
    left, cut = set(), set()
    for n in range(kills):
        child_seed, stop = rng.random(), rng.choice([None, None, None, "rewrite", "append"])
        k = rng.randint(1, 20) if stop == "append" else 1
        if stop is not None:
            outcomes["stops in a rewrite" if stop == "rewrite" else "stops in an append"] += 1
        ready, told = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(ready)
            if stop == "rewrite":
                stop_at(durable, "replace", k, told, cut_short=False)
            elif stop == "append":
                stop_at(conversation_log, "write", k, told, cut_short=True)
            try:
                asyncio.run(work(random.Random(child_seed)))
            except BaseException:
                traceback.print_exc()
                os._exit(3)
            os._exit(0)
        os.close(told)
        if stop is None:
            time.sleep(rng.uniform(0, longest))
        elif not select.select([ready], [], [], 60)[0]:
            print(f"kill {n}: the child never reached its {stop} number {k}", file=sys.stderr)
        os.close(ready)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else (
            f"exit {os.WEXITSTATUS(status)}")
        outcomes[how] = outcomes.get(how, 0) + 1
        logs = list(folder.glob("*.jsonl")) if folder.exists() else []
        temporaries = {p.name for p in folder.glob(".*.tmp")} if folder.exists() else set()
        cut_now = {(log.name, log.stat().st_size) for log in logs if torn(log)}
        if stop == "rewrite" and temporaries - left:
            outcomes["stopped mid-rewrite"] += 1  # and its temporary file is left behind
        if stop == "append" and cut_now - cut:
            outcomes["stopped mid-append"] += 1  # and its log ends in a torn save
        left, cut = left | temporaries, cut | cut_now
    outcomes["killed mid-rewrite"] = len(left)  # each left its temporary file behind
    outcomes["killed mid-append"] = len(cut)
    print(json.dumps(outcomes))
    """
)


def resumed(
    conversation: Conversation, workspace: Path, store: Store, turns: list[list[Step]]
) -> Session:
    """A Session going on with a stored conversation, over a scripted model."""
    provider = ScriptedProvider(turns)

    def backend(_conversation: Conversation) -> BuiltinLoop:
        return BuiltinLoop(
            provider=provider,
            tools=ToolRegistry(builtin_tools()),
            context=ToolContext(Workspace(workspace)),
            settings=LoopSettings("scripted-model", workspace),
            system_prompt=lambda mode: system_prompt(workspace, mode),
        )

    return Session(conversation, backend, store)


async def send_and_close(session: Session, message: str) -> StopReason:
    try:
        return (await session.send(message)).reason
    finally:
        await session.aclose()


def killed_runs(folder: Path, workspace: Path, longest: float) -> dict[str, int]:
    result = subprocess.run(
        [sys.executable, "-c", KILLER, str(folder), str(workspace), str(KILLS), str(SEED),
         str(longest)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr == "", result.stderr[-3000:]  # no child failed on its own
    return json.loads(result.stdout)


def test_200_kills_at_random_moments_leave_every_conversation_loadable(tmp_path: Path):
    folder, workspace = tmp_path / "conversations", tmp_path / "project"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("a line of notes, long enough to matter\n" * 800)

    outcomes = killed_runs(folder, workspace, longest=0.15)

    assert outcomes.get("signal 9") == KILLS, outcomes  # each ended by its kill, none otherwise
    # The kills did land in writes: every child stopped inside a rewrite left its temporary
    # file, every one stopped half-way through an append left a torn save.
    assert 0 < outcomes["stops in a rewrite"] == outcomes["stopped mid-rewrite"], outcomes
    assert 0 < outcomes["stops in an append"] == outcomes["stopped mid-append"], outcomes
    assert outcomes["killed mid-rewrite"] >= outcomes["stopped mid-rewrite"], outcomes
    assert outcomes["killed mid-append"] >= outcomes["stopped mid-append"], outcomes
    store = Store(folder)
    files = sorted(folder.glob("*.jsonl"))
    assert len(files) > 1, outcomes  # conversations were started, and others continued
    listed = store.list()
    assert sorted(s.id for s in listed) == [p.stem for p in files]  # none unreadable
    recovered = 0
    for path in files:
        raw = read_stored(path)
        conversation = store.load(path.stem)
        assert conversation.id == raw["id"] == path.stem
        assert conversation.state == "idle"
        if raw["state"] == "running":  # killed mid-run: it says the run ended there
            recovered += 1
            last = conversation.items[-1]
            assert isinstance(last, NoticeItem) and last.text == RECOVERED_NOTICE
        made = [i.call_id for i in conversation.items if isinstance(i, ToolItem)]
        assert len(made) == len(set(made))  # no item written twice
    assert recovered > 0, outcomes

    # The newest goes on in a new Store (as the next `agent` would), whose first save also
    # removes the temporary files that kills mid-write left behind.
    newest = store.load(listed[0].id)
    session = resumed(newest, workspace, Store(folder), [answer("Still here.")])
    assert asyncio.run(send_and_close(session, "are you there?")) is StopReason.ANSWERED
    again = Store(folder).load(newest.id)
    last = again.items[-1]
    assert isinstance(last, AssistantItem) and last.text == "Still here."
    assert sorted(p.name for p in folder.iterdir()) == [p.name for p in files]


# ---------------------------------------------------------------- full disk


@pytest.fixture
def disk() -> Iterator[dict[str, bool]]:
    """`disk["full"] = True` makes every write's flush to disk fail with ENOSPC, as a full
    disk does; the store sees a real OSError from the system call it makes."""
    state = {"full": False}
    real = os.fsync

    def fsync(fd: int) -> None:
        if state["full"]:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fsync", fsync)
        yield state


async def test_a_disk_filling_mid_run_is_told_once_the_run_finishes_and_freeing_space_saves(
    tmp_path: Path, disk: dict[str, bool]
):
    (tmp_path / "notes.txt").write_text("notes\n")
    store = Store(tmp_path / "store")
    read = '{"path": "notes.txt"}'
    session, _, recorder = make_session(
        tmp_path,
        [calls(("c1", "read_file", read)), calls(("c2", "read_file", read)),
         calls(("c3", "read_file", read)), answer("Read it three times.")],
        store=store,
    )  # fmt: skip
    file = store.path(session.conversation.id)
    kept: list[bytes] = []

    def fill_once_the_first_call_is_saved(event: Event) -> None:
        if isinstance(event, ItemAdded) and getattr(event.item, "call_id", "") == "c2":
            kept.append(file.read_bytes())  # saved with c1's result
            disk["full"] = True

    session.events.subscribe(fill_once_the_first_call_is_saved)
    result = await session.send("read the notes three times")

    assert result.reason is StopReason.ANSWERED  # the run went on to its answer
    told = [e for e in recorder.of(NoticeEvent) if e.level == "error"]
    assert len(told) == 1, told  # once, though c2, c3 and the run's end all failed to save
    assert told[0].text == (
        f"Could not save conversation {session.conversation.id} in {store.directory}: "
        "No space left on device — free some space or fix the folder's permissions; "
        "the last saved version is intact."
    )
    assert file.read_bytes() == kept[0]  # the previous version, whole
    on_disk = Store(store.directory).load(session.conversation.id)
    assert [(i.call_id, i.state) for i in on_disk.items if isinstance(i, ToolItem)] == [
        ("c1", "done")
    ]
    assert list(store.directory.iterdir()) == [file]  # no temporary file left

    disk["full"] = False  # space freed: the next save has everything
    session.save()
    assert Store(store.directory).load(session.conversation.id).to_json() == (
        session.conversation.to_json()
    )
    assert len([e for e in recorder.of(NoticeEvent) if e.level == "error"]) == 1

    disk["full"] = True  # full again later: told again, once
    session.conversation.title = "renamed"
    session.save()
    session.save()
    assert len([e for e in recorder.of(NoticeEvent) if e.level == "error"]) == 2


def limited(size: int) -> Callable[[], None]:
    """A file-size limit for a child process: writing past it fails (EFBIG), as a full disk
    fails a write. Python ignores SIGXFSZ, so the write returns the error instead."""

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return apply


def test_agent_run_on_a_full_disk_keeps_the_previous_version_and_says_so_once(tmp_path: Path):
    workspace = tmp_path / "project"
    workspace.mkdir()
    with FakeOpenAI(models=["m1"]) as fake:
        fake.add(text("Hello."))
        first = agent(workspace, "run", "hi", fake=fake)
        assert first.returncode == 0, err(first)
        [before] = saved()
        file = paths.conversations_dir() / f"{before['id']}.jsonl"

        fake.add(text("word " * 40_000))  # 200 KB: its save no longer fits
        environment = {**os.environ, "OPENAI_BASE_URL": fake.base_url}
        full = subprocess.run(
            [sys.executable, "-m", "agent_cli", "run", "--continue", "write a lot"],
            cwd=workspace,
            env=environment,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT,
            preexec_fn=limited(64 * 1024),
        )
        stderr = full.stderr.decode()
        assert full.returncode == 0, stderr  # the run finished: the answer is there
        assert full.stdout.decode().startswith("word word ")
        assert "Traceback" not in stderr
        told = [line for line in stderr.splitlines() if "Could not save conversation" in line]
        assert len(told) == 1, stderr
        assert "File too large — free some space" in told[0]
        assert "the last saved version is intact" in told[0]
        kept = read_stored(file)  # the version saved as the run began
        assert kept["items"][: len(before["items"])] == before["items"]
        assert [i.get("text") for i in kept["items"][len(before["items"]) :]] == ["write a lot"]
        assert [p.name for p in file.parent.iterdir()] == [file.name]  # no temporary file

        fake.add(text("Space again."))  # space freed: the next run saves
        after = agent(workspace, "run", "--continue", "and now?", fake=fake)
        assert after.returncode == 0, err(after)
        assert out(after) == "Space again.\n"
        [stored] = saved()
        texts = [i.get("text") for i in stored["items"]]
        assert texts[: len(before["items"])] == [i.get("text") for i in before["items"]]
        assert texts[-2:] == ["and now?", "Space again."]
        assert "write a lot" in texts
        assert stored["state"] == "idle"
