"""The line REPL (`agent --plain`): the real CLI on a pseudo-terminal, and its `@path` completer."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pexpect
import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from tests.support.cli import agent, err, saved
from tests.support.fake_openai import FakeOpenAI, http_error, text, tool_calls

TIMEOUT = 30
PROMPT = "›"  # the end of the prompt, after the mode


def call(name: str, **args: object) -> tuple[str, str, str]:
    return (f"call_{name}", name, json.dumps(args))


@pytest.fixture
def pty_env(fake: FakeOpenAI) -> dict[str, str]:
    return dict(
        os.environ,
        OPENAI_BASE_URL=fake.base_url,
        TERM="xterm",
        NO_COLOR="1",
        PROMPT_TOOLKIT_NO_CPR="1",  # pexpect answers no cursor-position request
    )


def spawn(
    workspace: Path,
    env: dict[str, str],
    *args: str,
    ready: bool = True,
    size: tuple[int, int] = (40, 120),
) -> pexpect.spawn:
    """The CLI on a terminal of `size` (rows, columns), past its banner (and, if `ready`,
    at its first prompt)."""
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agent_cli", *args],
        cwd=str(workspace),
        env=env,
        timeout=TIMEOUT,
        encoding="utf-8",
        dimensions=size,
    )
    child.expect_exact("/help for commands")
    if ready:
        child.expect_exact(PROMPT)
    return child


def repl(workspace: Path, env: dict[str, str]) -> pexpect.spawn:
    return spawn(workspace, env, "--plain")


def enter(child: pexpect.spawn, line: str) -> None:
    """Type a line and press Enter (a terminal sends CR; LF is Ctrl+J, a new line)."""
    child.send(line + "\r")


def leave(child: pexpect.spawn) -> int:
    enter(child, "/quit")
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def test_a_streamed_answer_appears(fake, workspace, pty_env):
    fake.add(text("Hello there, friend.", reasoning="Pondering the greeting."))
    child = repl(workspace, pty_env)
    enter(child, "say hi")
    child.expect_exact("Pondering")  # reasoning: dim, styled delta by delta
    child.expect_exact("greeting.")
    child.expect_exact("Hello there, friend.")
    child.expect_exact(PROMPT)
    assert fake.requests[0]["messages"][-1]["content"] == "say hi"
    assert leave(child) == 0


def test_help_lists_the_commands(fake, workspace, pty_env):
    child = repl(workspace, pty_env)
    enter(child, "/help")
    child.expect_exact("what it does")
    child.expect_exact("Keys:")
    for name in ("/sessions", "/undo", "/quit"):
        assert name in child.before
    child.expect_exact(PROMPT)
    assert leave(child) == 0


def test_read_only_mode_refuses_a_write(fake, workspace, pty_env):
    fake.add(tool_calls(call("write_file", path="a.txt", content="x")), text("Could not."))
    child = repl(workspace, pty_env)
    enter(child, "/mode read-only")
    child.expect_exact("Mode switched")
    child.expect_exact("read-only")  # the prompt shows the mode
    enter(child, "write a file")
    child.expect_exact("Write a.txt")  # the call's line: `✗`, then the title in bold
    assert "✗" in child.before
    child.expect_exact("Could not.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0
    assert not (workspace / "a.txt").exists()
    assert "read-only" in fake.requests[1]["messages"][-1]["content"]


def test_an_approval_card_answered_yes_applies_the_edit(fake, workspace, pty_env):
    (workspace / "a.txt").write_text("hello\n")
    edits = [{"old_text": "hello", "new_text": "goodbye"}]
    fake.add(tool_calls(call("edit_file", path="a.txt", edits=edits)), text("Edited it."))
    child = repl(workspace, pty_env)
    enter(child, "change the greeting")
    child.expect_exact("Allow?")
    assert "+goodbye" in child.before and "-hello" in child.before
    assert (workspace / "a.txt").read_text() == "hello\n"  # nothing before the yes
    enter(child, "y")
    child.expect_exact("✓")
    child.expect_exact("Edit a.txt")
    child.expect_exact("Edited it.")
    child.expect_exact(PROMPT)
    assert (workspace / "a.txt").read_text() == "goodbye\n"
    assert leave(child) == 0


def test_the_card_comes_after_the_answer_printed_just_before_it(fake, workspace, pty_env):
    """What the run printed above the live prompt is written by prompt-toolkit's own thread,
    up to 0.2 s later; the card and its question must still come after it, in order."""
    (workspace / "a.txt").write_text("hello\n")
    edits = [{"old_text": "hello", "new_text": "goodbye"}]
    lines = "".join(f"line {n} of the plan\n" for n in range(1, 31))
    fake.add(tool_calls(call("edit_file", path="a.txt", edits=edits), text=lines), text("Done."))
    child = repl(workspace, pty_env)
    enter(child, "change the greeting")
    child.expect_exact("Allow?")
    shown = child.before
    assert "line 30 of the plan" in shown and "+goodbye" in shown
    assert shown.index("line 30 of the plan") < shown.index("-hello") < shown.index("+goodbye")
    enter(child, "y")
    child.expect_exact("Done.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0


def test_new_starts_another_conversation(fake, workspace, pty_env):
    fake.add(text("First answer."), text("Second answer."))
    child = repl(workspace, pty_env)
    enter(child, "one")
    child.expect_exact("First answer.")
    child.expect_exact(PROMPT)
    enter(child, "/new")
    child.expect_exact("A new conversation.")
    child.expect_exact(PROMPT)
    enter(child, "two")
    child.expect_exact("Second answer.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0
    contents = [m["content"] for m in fake.requests[1]["messages"]]
    assert "two" in contents and "one" not in contents
    assert sorted(c["title"] for c in saved()) == ["one", "two"]


def test_quit_exits_0_and_ctrl_d_too(fake, workspace, pty_env):
    assert leave(repl(workspace, pty_env)) == 0
    child = repl(workspace, pty_env)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_ctrl_j_adds_a_line_and_enter_sends_both(fake, workspace, pty_env):
    fake.add(text("Two lines read."))
    child = repl(workspace, pty_env)
    child.send("line one\n")  # LF is Ctrl+J on a terminal
    child.send("line two\r")
    child.expect_exact("Two lines read.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0
    assert fake.requests[0]["messages"][-1]["content"] == "line one\nline two"


def test_a_failed_run_says_why_and_the_repl_goes_on(fake, workspace, pty_env):
    fake.add(http_error(400, "the model is confused"), text("Better now."))
    child = repl(workspace, pty_env)
    enter(child, "first try")
    child.expect_exact("the model is confused")
    child.expect_exact(PROMPT)
    enter(child, "second try")
    child.expect_exact("Better now.")
    child.expect_exact(PROMPT)
    assert "Traceback" not in child.before
    assert leave(child) == 0


def test_ctrl_c_twice_at_an_empty_prompt_quits_as_the_tui_does(fake, workspace, pty_env):
    child = repl(workspace, pty_env)
    child.send("a draft")
    child.sendcontrol("c")  # clears the draft; does not count towards leaving
    child.sendcontrol("c")
    child.expect_exact("Press Ctrl-C again to quit")
    child.expect_exact(PROMPT)
    child.sendcontrol("c")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_ctrl_c_during_a_run_stops_it(fake, workspace, pty_env):
    slow = text("tick " * 400, chunks=400).replace(split=120, delay=0.05)
    fake.add(slow, text("Still here."))
    child = repl(workspace, pty_env)
    enter(child, "count")
    child.expect_exact("tick")  # the live prompt shows the line as it grows
    child.sendintr()
    child.expect_exact("Stopped.")
    child.expect_exact(PROMPT)
    enter(child, "again")
    child.expect_exact("Still here.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0


def test_ctrl_c_still_stops_a_run_after_an_approval_card(fake, workspace, pty_env):
    """The card's prompt-toolkit removes the SIGINT handler when it ends; the REPL takes it back."""
    slow = text("tick " * 400, chunks=400).replace(split=120, delay=0.05)
    fake.add(tool_calls(call("exec_shell_command", command="touch made.txt")), slow)
    child = repl(workspace, pty_env)
    enter(child, "make it")
    child.expect_exact("Allow?")
    enter(child, "y")
    child.expect_exact("tick")
    child.sendintr()
    child.expect_exact("Stopped.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0
    assert (workspace / "made.txt").exists()


def test_the_history_is_kept_per_workspace_and_shared_with_the_tui(fake, workspace, pty_env):
    from agent_cli.frontends.tui.history import History, history_file

    History(history_file(workspace.resolve())).add("sent from the TUI")
    child = repl(workspace, pty_env)
    enter(child, "/mode")
    child.expect_exact("The mode is")
    child.expect_exact(PROMPT)
    assert leave(child) == 0
    kept = History(history_file(workspace.resolve())).entries
    assert kept == ["sent from the TUI", "/mode", "/quit"], "one file, one format"
    child = repl(workspace, pty_env)
    child.send("\x1b[A\x1b[A\x1b[A")  # Up three times: past /quit and /mode
    child.expect_exact("sent from the TUI")
    child.sendcontrol("c")  # clear the recalled line
    assert leave(child) == 0


def test_a_resumed_conversation_shows_its_last_items(fake, workspace, pty_env):
    fake.add(text("The earlier answer."))
    result = agent(workspace, "run", "an earlier question", fake=fake)
    assert result.returncode == 0, err(result)
    child = spawn(workspace, pty_env, "--plain", "--continue", ready=False)
    child.expect_exact("an earlier question")
    child.expect_exact("The earlier answer.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0


def test_a_dumb_terminal_gets_the_repl_without_plain(fake, workspace, pty_env):
    fake.add(text("Plain and simple."))
    child = spawn(workspace, dict(pty_env, TERM="dumb"))
    enter(child, "hello")
    child.expect_exact("Plain and simple.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0


# -- the completer, directly -------------------------------------------------------


def completions(completer, text: str) -> list[str]:
    document = Document(text, len(text))
    return [c.text for c in completer.get_completions(document, CompleteEvent())]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name in (
        "README.md",
        "src/app/main.py",
        "src/app/models.py",
        "src/mapping.py",
        "docs/manual.md",
        "node_modules/left-pad/index.js",
        ".git/HEAD",
        "build/out.py",
    ):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    return tmp_path


def test_path_completion_is_fuzzy_and_ranks_compact_matches_first(tree):
    from agent_cli.frontends.line import PromptCompleter

    completer = PromptCompleter(tree)
    # m-a-i-n in order: tight in main.py, spread out in mapping.py
    assert completions(completer, "look at @main") == ["src/app/main.py", "src/mapping.py"]
    assert completions(completer, "@sapm")[0] == "src/app/main.py"
    assert completions(completer, "@README")[0] == "README.md"
    assert completions(completer, "@readme") == ["README.md"]  # any case


def test_path_completion_skips_tool_folders_and_needs_an_at(tree):
    from agent_cli.frontends.line import PromptCompleter

    completer = PromptCompleter(tree)
    everything = completions(completer, "@")
    assert everything[0] == "README.md"  # shallow files first
    assert not any(p.startswith(("node_modules/", ".git/", "build/")) for p in everything)
    assert completions(completer, "main") == []
    assert completions(completer, "mail@main") == []  # an address, not a mention


def test_the_completion_replaces_only_the_query():
    from agent_cli.frontends.line import PromptCompleter

    completer = PromptCompleter(Path("/nonexistent"))
    completer._files = ["src/app.py"]
    (completion,) = PromptCompleter.get_completions(
        completer, Document("see @sap", 8), CompleteEvent()
    )
    assert completion.text == "src/app.py" and completion.start_position == -3


def test_slash_commands_complete_at_the_start(tree):
    from agent_cli.frontends.line import PromptCompleter

    completer = PromptCompleter(tree)
    assert completions(completer, "/he") == ["/help"]
    assert {"/mode", "/model", "/mcp"} <= set(completions(completer, "/m"))
    assert completions(completer, "/mode r") == ["read-only"]
    assert completions(completer, "say /he") == []


def test_the_walk_is_capped(tmp_path: Path):
    from agent_cli.frontends.line import workspace_files

    for index in range(30):
        (tmp_path / f"f{index:02}.txt").write_text("")
    assert len(workspace_files(tmp_path, limit=10)) == 10


def test_match_span_finds_the_tightest_stretch():
    from agent_cli.frontends.line import match_span

    assert match_span("abc", "a_b_c_abc") == 3
    assert match_span("abc", "axxbxc") == 6
    assert match_span("abc", "acb") is None
