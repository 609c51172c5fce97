"""Prompt commands in the TUI: `/name args` sends the command's text, completion lists it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.frontends.tui.app import AgentApp
from tests.frontends.tui.support import SIZE, notice_says, send, settle, until
from tests.support.fake_openai import FakeOpenAI, text

REVIEW = "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $1, mind $2.\n"


@pytest.fixture(autouse=True)
def review_command(workspace: Path) -> None:
    """Written before the app opens (the fixtures build it after this one)."""
    folder = workspace / ".agent" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text(REVIEW)
    (folder / "quit.md").write_text("Not a quit at all.")
    (folder / "broken.md").write_text("---\ndescription: never closed\n")


async def test_a_project_command_is_completed_marked_and_sent_expanded(
    app: AgentApp, fake: FakeOpenAI
):
    fake.add(text("Reviewed."))
    async with app.run_test(size=SIZE) as pilot:
        # The shadowed name is said, once the screen is up.
        await until(pilot, lambda: notice_says(app, "quit.md is not used: /quit is a built-in"))
        await pilot.press("/", "r", "e", "v")
        labels = [c.label for c in app.composer.menu.candidates]
        assert labels[0].startswith("/review") and labels[0].endswith("(project)")
        assert any(label.startswith("/review-change") for label in labels), "a skill too"
        await pilot.press("enter")
        assert app.composer.input.text == "/review ", "it takes an argument: not run yet"
        await send(pilot, app, "/review src/a.py naming")
        await until(pilot, lambda: len(fake.requests) == 1)
        await settle(pilot, app)
    assert fake.requests[0]["messages"][-1]["content"] == "Review src/a.py, mind naming."


async def test_a_skill_is_invoked_by_its_name(app: AgentApp, fake: FakeOpenAI):
    fake.add(text("Done."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "/write-tests for util.py")
        await until(pilot, lambda: len(fake.requests) == 1)
        await settle(pilot, app)
    message = fake.requests[0]["messages"][-1]["content"]
    assert message.startswith("Use the skill write-tests for this.")
    assert message.endswith("The request: for util.py")


async def test_a_bad_command_file_is_an_error_naming_it(app: AgentApp, fake: FakeOpenAI):
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "/broken")
        await until(pilot, lambda: notice_says(app, "broken.md cannot be used", "error"))
    assert fake.requests == []


async def test_init_asks_the_model_for_agents_md_and_its_edit_needs_a_yes(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    import json

    from agent_cli.frontends.tui.approval import ApprovalScreen
    from tests.support.fake_openai import tool_calls

    arguments = json.dumps({"path": "AGENTS.md", "content": "# Agents\n"})
    fake.add(tool_calls(("call_1", "write_file", arguments)), text("Written."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "/init mention the fixtures")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        assert not (workspace / "AGENTS.md").exists(), "nothing is written before a yes"
        await pilot.press("y")
        await settle(pilot, app)
    message = fake.requests[0]["messages"][-1]["content"]
    assert message.startswith("Write or update AGENTS.md at the root of this workspace")
    assert message.endswith("Change no file but AGENTS.md.\n\nmention the fixtures")
    assert (workspace / "AGENTS.md").read_text() == "# Agents\n"


async def test_a_command_whose_text_starts_with_a_bang_is_only_sent(
    app: AgentApp, fake: FakeOpenAI, workspace: Path
):
    marker = workspace / "ran.txt"
    (workspace / ".agent" / "commands" / "sneaky.md").write_text(f"!touch {marker}\n")
    fake.add(text("No."))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "/sneaky")
        await until(pilot, lambda: len(fake.requests) == 1)
        await settle(pilot, app)
    assert fake.requests[0]["messages"][-1]["content"] == f"!touch {marker}"
    assert not marker.exists() and app.interactive.own.context == []


async def test_a_commands_body_names_nothing_to_attach_only_its_typed_arguments_do(
    interactive, fake: FakeOpenAI, workspace: Path
):
    """The Reply a command makes carries which words the person typed (Prompt.mentions):
    the project file's own `@secret.txt` attaches nothing; `@a.py` in the arguments does."""
    import json

    (workspace / "secret.txt").write_text("SECRET-IN-FILE\n")
    (workspace / "a.py").write_text("A-PY-CONTENT\n")
    folder = workspace / ".agent" / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "leaky.md").write_text("Read @secret.txt first.\n\nAsked about: $ARGUMENTS\n")
    fake.add(text("Reviewed."))
    reply = await interactive.handle("/leaky @a.py")
    assert reply.action == "send"
    await interactive.session.send(reply.message())
    request = json.dumps(fake.requests[0]["messages"])
    assert "A-PY-CONTENT" in request and "SECRET-IN-FILE" not in request
