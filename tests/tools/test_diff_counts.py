"""What a diff added and removed, counted by its hunks' headers (tools.diffs.line_changes)."""

from __future__ import annotations

from agent_cli.engine.handoff import transcript
from agent_cli.engine.items import ToolItem, UserItem
from agent_cli.tools.diffs import line_changes, unified_diff

SQL_BEFORE = "-- the old comment\nselect 1;\n++ not a header\n"
SQL_AFTER = "-- the new comment\nselect 1;\n+++ still not a header\n"


def test_lines_that_read_as_file_headers_inside_a_hunk_are_counted():
    diff = unified_diff("q.sql", SQL_BEFORE, SQL_AFTER)
    assert "\n--- the old comment\n" in diff and "\n++++ still not a header\n" in diff
    assert line_changes(diff) == (2, 2)


def test_two_files_without_git_lines_between_them_and_counts_left_out():
    diff = (
        "--- a/one.sql\n+++ b/one.sql\n@@ -1,2 +1,2 @@\n--- gone\n+-- here\n keep\n"
        "--- a/two.txt\n+++ b/two.txt\n@@ -3 +3 @@\n-old\n+new\n\\ No newline at end of file\n"
    )
    assert line_changes(diff) == (2, 2)


def test_a_handoff_counts_an_sql_comments_edit_right():
    diff = unified_diff("q.sql", SQL_BEFORE, SQL_AFTER)
    edit = ToolItem("edit_file", "c1", "Edit q.sql", "{}", state="done", diff=diff, file="q.sql")
    said = transcript([UserItem("fix the query"), edit])
    assert "Files changed: q.sql (changed once, +2 −2 lines)" in said
