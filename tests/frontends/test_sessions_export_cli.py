"""`agent sessions export` and `agent sessions fork` as a person runs them (issue #17, item 7)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from agent_cli import paths
from agent_cli.engine.items import AssistantItem, Conversation, NoticeItem, Rewound, UserItem
from agent_cli.engine.store import Store
from tests.support.cli import agent, agent_process, err, out
from tests.support.fake_openai import FakeOpenAI, text, tool_calls


def store() -> Store:
    return Store(paths.conversations_dir())


def call(name: str, **args: object) -> tuple[str, str, str]:
    return (f"call_{name}", name, json.dumps(args))


def a_real_run(fake: FakeOpenAI, workspace: Path) -> str:
    """A run that edits a file and runs a failing command; its conversation's id."""
    (workspace / "app.py").write_text("print('hi')\n")
    edit = call("edit_file", path="app.py", edits=[{"old_text": "hi", "new_text": "bye"}])
    fake.add(
        tool_calls(edit),
        tool_calls(call("exec_shell_command", command="echo checked; exit 3")),
        text("Changed it; the **check** failed."),
    )
    run = agent_process(workspace, "run", "say bye instead", "--yes", fake=fake)
    assert run.returncode == 0, err(run)
    return store().list(str(workspace))[0].id


def test_export_markdown_is_a_readable_transcript_of_a_real_run(fake, workspace):
    conversation_id = a_real_run(fake, workspace)

    result = agent(workspace, "sessions", "export", conversation_id[:17])

    assert result.returncode == 0, err(result)
    document = out(result)
    assert document.startswith("# say bye instead\n")
    assert f"- id: `{conversation_id}`" in document
    assert "## You\n\n```text\nsay bye instead\n```" in document
    edit = re.search(
        r"### Tool: (.*)\n\n- tool: `edit_file` · done\n\n```diff\n(.*?)```", document, re.S
    )
    assert edit, document
    assert "-print('hi')" in edit[2] and "+print('bye')" in edit[2]
    shell = document[document.index("- tool: `exec_shell_command`") :]
    assert shell.startswith("- tool: `exec_shell_command` · done\n- exit code: 3\n"), shell
    assert "```text\nchecked\n```" in shell  # the output, without the exit-code line
    assert "## Agent\n\nChanged it; the **check** failed." in document


def test_export_markdown_keeps_notices_and_what_rewinds_took_out(workspace):
    conversation = Conversation(workspace=str(workspace), id="20250101-100000-abcdef", title="t")
    conversation.items = [UserItem("first ``` fence"), NoticeItem("The disk is full.", "error")]
    conversation.rewound = [Rewound(2, [UserItem("a second try"), AssistantItem("no", False)])]
    store().save(conversation)

    document = out(agent(workspace, "sessions", "export", "20250101"))

    assert "````text\nfirst ``` fence\n````" in document  # a fence the text cannot close
    assert "> **Error:** The disk is full." in document
    rewound = document[document.index("## Rewound at") :]
    assert "### You\n\n```text\na second try\n```" in rewound and "### Agent\n\nno" in rewound


def test_export_json_is_the_stored_conversation_and_round_trips(fake, workspace):
    conversation_id = a_real_run(fake, workspace)

    result = agent(workspace, "sessions", "export", conversation_id, "--format", "json")

    assert result.returncode == 0, err(result)
    data = json.loads(out(result))
    loaded = store().load(conversation_id)
    assert data == loaded.to_json()
    assert Conversation.from_json(data).to_json() == data


def test_an_unknown_id_says_how_to_find_the_ids(workspace):
    for command in ("export", "fork"):
        result = agent(workspace, "sessions", command, "20990101")
        assert result.returncode == 2, err(result)
        assert "No conversation '20990101'" in err(result)
        assert "`agent sessions`" in err(result) and "Traceback" not in err(result)


def test_fork_prints_a_new_id_whose_conversation_is_independent(fake, workspace):
    conversation_id = a_real_run(fake, workspace)
    media = paths.conversations_dir() / f"{conversation_id}.media"
    media.mkdir()
    (media / "shot.png").write_bytes(b"\x89PNG")

    result = agent(workspace, "sessions", "fork", conversation_id[:17])

    assert result.returncode == 0, err(result)
    new_id = re.search(r"as (\S+) —", out(result))[1]  # type: ignore[index]
    assert new_id != conversation_id and f"agent run --resume {new_id}" in out(result)
    original, copy = store().load(conversation_id), store().load(new_id)
    assert copy.to_json()["items"] == original.to_json()["items"]
    assert (paths.conversations_dir() / f"{new_id}.media" / "shot.png").read_bytes() == b"\x89PNG"
    quiet = agent(workspace, "sessions", "fork", new_id, "--quiet")
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}\n", out(quiet)), out(quiet)

    fake.add(text("Going on in the copy."))
    resumed = agent(workspace, "run", "--resume", new_id, "and now?", fake=fake)
    assert resumed.returncode == 0, err(resumed)
    assert len(store().load(new_id).items) == len(original.items) + 2
    assert store().load(conversation_id).to_json() == original.to_json()  # untouched
    sent = fake.requests[-1]["messages"]
    assert sent[1]["content"] == "say bye instead", "the copy goes on with the whole story"


def test_a_fork_has_the_checkpoints_so_undo_works_in_it(fake, workspace):
    conversation_id = a_real_run(fake, workspace)
    forked = agent(workspace, "sessions", "fork", conversation_id, "--quiet")
    assert forked.returncode == 0 and err(forked) == "", err(forked)

    undone = agent(workspace, "undo", "--conversation", out(forked).strip())

    assert undone.returncode == 0, err(undone)
    assert (workspace / "app.py").read_text() == "print('hi')\n"


def test_show_lists_what_rewinds_took_out_after_the_conversation(workspace):
    conversation = Conversation(workspace=str(workspace), id="20250101-100000-abcdef", title="t")
    conversation.items = [UserItem("kept message")]
    conversation.rewound = [Rewound(1, [UserItem("rewound message"), AssistantItem("x", False)])]
    store().save(conversation)

    shown = out(agent(workspace, "sessions", "show", "20250101", env={"NO_COLOR": "1"}))

    assert shown.index("kept message") < shown.index("rewound") < shown.index("rewound message")
    assert "taken out of the conversation" in shown


def test_export_never_sends_a_models_escape_sequences_to_the_terminal(workspace):
    sneaky = "Done.\x1b]52;c;cm0gLXJmIH4=\x07\x1b[8mhidden\x1b[0m\r\x9b2J"
    conversation = Conversation(workspace=str(workspace), id="20250101-100000-abcdef", title="t")
    conversation.items = [UserItem("hi"), AssistantItem(sneaky, streaming=False)]
    store().save(conversation)

    document = agent(workspace, "sessions", "export", "20250101").stdout
    as_json = agent(workspace, "sessions", "export", "20250101", "--format", "json").stdout

    for shown in (document, as_json):
        assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", shown), shown
    assert b"Done.]52;c;cm0gLXJmIH4=[8mhidden[0m2J" in document
    assert json.loads(as_json)["items"][1]["text"] == sneaky  # escaped, not lost
