"""How our items look to an ACP client: tool kinds, statuses, locations, diffs, replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.engine.items import AssistantItem, NoticeItem, ToolItem, UserItem
from agent_cli.frontends.acp_updates import (
    diff_sides,
    notice_text,
    permission_call,
    replay,
    tool_progress,
    tool_start,
    tool_view,
)
from agent_cli.tools.diffs import unified_diff
from agent_cli.tools.workspace import Workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "ws" / "src").mkdir(parents=True)
    return Workspace(tmp_path / "ws")


def tool(name: str, state: str = "done", **args: object) -> ToolItem:
    return ToolItem(
        tool=name, call_id="c1", title=f"{name} title", args=json.dumps(args), state=state
    )  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("read_file", "read"),
        ("get_info", "read"),
        ("grep_search", "search"),
        ("file_glob_search", "search"),
        ("write_file", "edit"),
        ("edit_file", "edit"),
        ("exec_shell_command", "execute"),
        ("docs_search", "other"),
    ],
)
def test_each_tool_has_its_acp_kind(workspace: Workspace, name: str, kind: str) -> None:
    assert tool_view(tool(name), workspace).kind == kind


def test_an_mcp_tool_is_other_whatever_its_name(workspace: Workspace) -> None:
    item = tool("read_file")
    item.mcp = "docs"
    assert tool_view(item, workspace).kind == "other"


@pytest.mark.parametrize(
    ("state", "status"),
    [
        ("composing", "pending"),
        ("waiting", "pending"),
        ("running", "in_progress"),
        ("done", "completed"),
        ("denied", "failed"),
        ("error", "failed"),
    ],
)
def test_states_map_to_acp_statuses(workspace: Workspace, state: str, status: str) -> None:
    assert tool_view(tool("get_info", state), workspace).status == status


def test_locations_are_real_paths_inside_the_workspace_only(workspace: Workspace) -> None:
    view = tool_view(tool("read_file", path="src/a.py", start_line=5), workspace)
    assert view.locations == ((str(workspace.root / "src" / "a.py"), 4),)  # 0-based
    assert tool_view(tool("read_file", path="../secret"), workspace).locations == ()
    assert tool_view(tool("read_file", "composing", path="src/a.py"), workspace).locations == ()


def test_an_update_carries_only_what_changed(workspace: Workspace) -> None:
    item = tool("get_info", "running")
    before = tool_view(item, workspace)
    start = tool_start(item, before, workspace.root)
    assert (start.kind, start.status, start.title) == ("read", "in_progress", "get_info title")
    assert tool_progress(item, before, tool_view(item, workspace), workspace.root) is None
    item.state, item.result = "done", '{"os": "Linux"}'
    update = tool_progress(item, before, tool_view(item, workspace), workspace.root)
    assert update is not None
    assert (update.status, update.title, update.locations) == ("completed", None, None)
    assert update.content[0].content.text == '{"os": "Linux"}'


def test_an_edit_carries_its_diff_as_the_two_sides_of_its_hunks(workspace: Workspace) -> None:
    before = "".join(f"line {i}\n" for i in range(1, 21))
    after = before.replace("line 3\n", "line three\n").replace("line 18\n", "")
    item = tool("edit_file", path="src/a.py")
    item.diff, item.file = unified_diff("src/a.py", before, after), "src/a.py"
    item.result = "Edited src/a.py (19 lines, 170 bytes)."
    (diff, result) = tool_start(item, tool_view(item, workspace), workspace.root).content
    assert diff.path == str(workspace.root / "src" / "a.py")
    assert diff.old_text == "".join(f"line {i}\n" for i in (*range(1, 7), *range(15, 21)))
    assert diff.new_text == diff.old_text.replace("line 3\n", "line three\n").replace(
        "line 18\n", ""
    )
    assert result.content.text == item.result


def test_diff_sides_keep_odd_lines_and_missing_newlines() -> None:
    before = "-- a comment\n+++ not a header\nend"
    after = "-- a comment\n+++ still here\nend!"
    old, new = diff_sides(unified_diff("q.sql", before, after))
    assert (old, new) == (before, after)


def test_diff_sides_of_a_new_file_have_no_old_text() -> None:
    assert diff_sides(unified_diff("n.txt", None, "a\nb\n")) == (None, "a\nb\n")


def test_replay_shows_every_kind_of_item_in_its_final_state(workspace: Workspace) -> None:
    answer = AssistantItem(text="Done.", reasoning="Easy.", streaming=False)
    items = [UserItem("do it"), answer, tool("get_info", "denied"), NoticeItem("Stopped.", "warn")]
    updates = [u for item in items for u in replay(item, workspace)]
    assert [u.session_update for u in updates] == [
        "user_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "agent_message_chunk",
    ]
    assert updates[3].status == "failed"
    assert (
        updates[4].content.text == notice_text("Stopped.", "warn") == "\n\n> Warning: Stopped.\n\n"
    )


def test_a_sub_agents_items_replay_as_thoughts(workspace: Workspace) -> None:
    prompt, answer = UserItem("Count the files."), AssistantItem(text="Five.", streaming=False)
    prompt.parent = answer.parent = "task-item"  # a sub-agent's, nested under a task call
    assert replay(prompt, workspace) == []
    (thought,) = replay(answer, workspace)
    assert (thought.session_update, thought.content.text) == ("agent_thought_chunk", "Five.")


def test_a_permission_to_leave_the_sandbox_says_so_in_its_title(workspace: Workspace) -> None:
    item = ToolItem("exec_shell_command", "c1", title="Run npm install")
    view = tool_view(item, workspace)
    root = workspace.root
    plain = permission_call(item, view, root, "npm install", str(root))
    assert plain.title == "Run npm install"
    outside = permission_call(item, view, root, "npm install", str(root), "the network")
    assert outside.title == "Run outside the sandbox (it stopped the network): Run npm install"


def test_an_edits_diagnostics_go_to_the_client_as_raw_output(workspace: Workspace) -> None:
    from agent_cli.lsp.diagnostics import Diagnostic

    item = tool("edit_file", state="running", path="src/a.py")
    before = tool_view(item, workspace)
    assert before.raw_output is None
    found = Diagnostic("src/a.py", 2, 5, "error", "Undefined name `x`", "F821", "ruff")
    item.state, item.result, item.diagnostics = "done", "Edited src/a.py.", (found,)
    now = tool_view(item, workspace)
    update = tool_progress(item, before, now, workspace.root)
    assert update is not None
    expected = {
        "diagnostics": [
            {
                "path": "src/a.py",
                "line": 2,
                "column": 5,
                "severity": "error",
                "message": "Undefined name `x`",
                "code": "F821",
                "source": "ruff",
                "existing": False,
            }
        ]
    }
    assert update.raw_output == expected
    assert tool_start(item, now, workspace.root).raw_output == expected  # a replay shows them
    assert tool_progress(item, now, tool_view(item, workspace), workspace.root) is None
