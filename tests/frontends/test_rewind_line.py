"""`/rewind` and `/fork` in the line REPL (`agent --plain`), on a pseudo-terminal (issue #17)."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect
import pytest

from agent_cli import paths
from agent_cli.engine.items import Conversation, UserItem
from agent_cli.engine.store import Store
from agent_cli.git import checkpoints_available
from tests.frontends.test_line import PROMPT, enter, leave, pty_env, repl
from tests.support.fake_openai import FakeOpenAI, text, tool_calls

__all__ = ["pty_env"]  # the fixture, used by name


def call(name: str, **args: object) -> tuple[str, str, str]:
    return (f"call_{name}", name, json.dumps(args))


def only_conversation() -> Conversation:
    store = Store(paths.conversations_dir())
    (summary,) = store.list()
    return store.load(summary.id)


def two_messages_the_second_writing(
    fake: FakeOpenAI, workspace: Path, env: dict[str, str]
) -> pexpect.spawn:
    """A REPL in full mode after two messages: the first answered, the second wrote a file."""
    (workspace / "a.txt").write_text("alpha\n")
    fake.add(
        text("First answer."),
        tool_calls(call("write_file", path="a.txt", content="changed\n")),
        text("Wrote it."),
    )
    child = repl(workspace, env)
    enter(child, "/mode full")
    child.expect_exact("Mode switched")
    child.expect_exact(PROMPT)
    for message, answer in (("say hello", "First answer."), ("change a.txt", "Wrote it.")):
        enter(child, message)
        child.expect_exact(answer)
        child.expect_exact(PROMPT)
    assert (workspace / "a.txt").read_text() == "changed\n"
    return child


needs_git = pytest.mark.skipif(not checkpoints_available(), reason="git is not installed")


@needs_git
def test_rewind_lists_the_messages_takes_one_back_and_restores_the_files(fake, workspace, pty_env):
    child = two_messages_the_second_writing(fake, workspace, pty_env)
    enter(child, "/rewind")
    child.expect(r"1\.? say hello")  # a numbered list (Rich shows no dot)
    child.expect(r"2\.? change a\.txt")
    child.expect_exact("Rewind to message number")
    enter(child, "2")
    child.expect_exact("Rewound: 4 items")
    child.expect_exact("Restore the files to before 'Write a.txt', the first change since?")
    enter(child, "y")
    child.expect_exact("Restored 1 file to before 'Write a.txt'")
    child.expect_exact(PROMPT)
    assert (workspace / "a.txt").read_text() == "alpha\n"
    fake.add(text("Said better."))
    enter(child, " please")  # the message is back at the prompt: this goes after it
    child.expect_exact("Said better.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0

    sent = [m["content"] for m in fake.requests[-1]["messages"][1:]]
    assert sent == ["say hello", "First answer.", "change a.txt please"]
    conversation = only_conversation()
    assert [i.text for i in conversation.items if isinstance(i, UserItem)] == [
        "say hello",
        "change a.txt please",
    ]
    (rewound,) = conversation.rewound
    assert [i.text for i in rewound.items if isinstance(i, UserItem)] == ["change a.txt"]


@needs_git
def test_rewind_without_restoring_leaves_the_files_and_none_rewinds_nothing(
    fake, workspace, pty_env
):
    child = two_messages_the_second_writing(fake, workspace, pty_env)
    enter(child, "/rewind")
    child.expect_exact("Rewind to message number")
    enter(child, "")
    child.expect_exact("Nothing was rewound.")
    child.expect_exact(PROMPT)
    enter(child, "/rewind 1")
    child.expect_exact("Rewound: 6 items")
    child.expect_exact("[y/N]")
    enter(child, "n")
    child.expect_exact("The files are left as they are.")
    child.expect_exact(PROMPT)
    child.sendcontrol("u")  # the message is back at the prompt: clear it
    assert leave(child) == 0
    assert (workspace / "a.txt").read_text() == "changed\n"
    conversation = only_conversation()
    assert conversation.items == [] and len(conversation.rewound[0].items) == 6


def test_fork_goes_on_in_a_copy_and_keeps_the_original(fake, workspace, pty_env):
    fake.add(text("First answer."), text("In the copy."))
    child = repl(workspace, pty_env)
    enter(child, "say hello")
    child.expect_exact("First answer.")
    child.expect_exact(PROMPT)
    enter(child, "/fork")
    child.expect_exact("Forked: you are now in")
    child.expect(r"\d{8}-\d{6}-[0-9a-f]{6}")
    copy_id = child.match.group(0)
    child.expect_exact(PROMPT)
    enter(child, "go on")
    child.expect_exact("In the copy.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0
    store = Store(paths.conversations_dir())
    copy = store.load(copy_id)
    (original,) = [store.load(s.id) for s in store.list() if s.id != copy_id]
    assert [i.text for i in copy.items if isinstance(i, UserItem)] == ["say hello", "go on"]
    assert [i.text for i in original.items if isinstance(i, UserItem)] == ["say hello"]
