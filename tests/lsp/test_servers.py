"""Language servers for real: ruff and basedpyright through an edit, and fakes that
crash or never answer. No test waits longer than it must: a wait for diagnostics
ends when the server has published them (the settle time is only a bound)."""

from __future__ import annotations

import os
from pathlib import Path

from agent_cli.lsp.servers import LanguageServers, running_elsewhere
from tests.lsp.conftest import MakeServers, basedpyright, fake, ruff, silent
from tests.support.waiting import eventually, within

BEFORE = "import os\n\nprint(undefined_name_xyz)\n"
# Fixes the undefined name, keeps the unused import, adds another undefined name.
AFTER = "import os\n\nundefined_name_xyz = 1\nprint(undefined_name_xyz)\nprint(other)\n"


def texts(found: list) -> list[str]:
    return sorted(d.text() for d in found)


async def edit(servers: LanguageServers, path: Path, text: str):
    """Write `text` to `path` (it may not exist yet) and ask what the servers say now."""
    before = path.read_text() if path.exists() else None
    path.write_text(text)
    return await within(servers.check(path, before, text))


async def test_ruff_reports_the_new_error_marks_the_existing_one_and_drops_the_fixed_one(
    workspace: Path, make_servers: MakeServers
) -> None:
    bad = workspace / "bad.py"
    bad.write_text(BEFORE)
    servers = make_servers(ruff())
    servers.touch(bad)  # as read_file does: the server learns the file before the edit
    found = await edit(servers, bad, AFTER)
    assert found.servers == ["ruff"]
    shown = texts(found.diagnostics)
    assert "bad.py:5: error F821 Undefined name `other` (ruff)" in shown
    existing = "bad.py:1: warning F401 `os` imported but unused (ruff; there before this change)"
    assert existing in shown
    assert not any("undefined_name_xyz" in line for line in shown), "the fixed one is gone"
    assert found.fixed == 1
    assert found.notes == []


async def test_ruff_without_a_read_first_still_tells_what_was_there_before(
    workspace: Path, make_servers: MakeServers
) -> None:
    bad = workspace / "bad.py"
    bad.write_text(BEFORE)
    servers = make_servers(ruff())
    found = await edit(servers, bad, AFTER)  # opened with the text before, then changed
    assert any(d.existing and d.code == "F401" for d in found.diagnostics)
    assert any(not d.existing and d.code == "F821" for d in found.diagnostics)


async def test_a_new_file_has_only_new_diagnostics(
    workspace: Path, make_servers: MakeServers
) -> None:
    servers = make_servers(ruff())
    found = await edit(servers, workspace / "new.py", "print(nowhere)\n")
    assert texts(found.diagnostics) == ["new.py:1: error F821 Undefined name `nowhere` (ruff)"]


async def test_basedpyright_reports_the_new_error_marks_the_existing_one_and_drops_the_fixed_one(
    workspace: Path, make_servers: MakeServers
) -> None:
    bad = workspace / "bad.py"
    bad.write_text(BEFORE)
    servers = make_servers(basedpyright())
    servers.touch(bad)
    found = await edit(servers, bad, AFTER)
    assert found.servers == ["basedpyright"]
    errors = [d for d in found.diagnostics if d.severity == "error"]
    assert [(d.line, d.code, d.existing) for d in errors] == [(5, "reportUndefinedVariable", False)]
    assert '"other" is not defined' in errors[0].message
    unused = [d for d in found.diagnostics if d.code == "reportUnusedImport"]
    assert unused and all(d.existing for d in unused)
    assert not any("undefined_name_xyz" in d.message for d in found.diagnostics)
    assert found.fixed >= 1


async def test_two_servers_of_one_file_answer_together(
    workspace: Path, make_servers: MakeServers
) -> None:
    servers = make_servers(ruff(), fake())
    found = await edit(servers, workspace / "two.py", "x = 1  # ERROR: fake says so\n")
    assert sorted(found.servers) == ["fake", "ruff"]
    assert texts(found.diagnostics) == ["two.py:1: error E1 fake says so (fake)"]


async def test_a_server_that_crashes_is_started_again_once_then_left_off(
    workspace: Path, make_servers: MakeServers
) -> None:
    servers = make_servers(fake())
    code = workspace / "code.py"
    code.write_text("x = 1\n")
    first = await edit(servers, code, "x = 2  # CRASH\n")
    assert first.servers == []
    assert first.notes == [
        "fake ended (exit code 3: fake-lsp: asked to crash) while checking this change; "
        "it is started again for the next one"
    ]
    code.write_text("x = 2\n")  # (the text before the next change must not crash it too)
    again = await edit(servers, code, "x = 3  # ERROR: still wrong\n")
    assert again.servers == ["fake"]
    assert texts(again.diagnostics) == ["code.py:1: error E1 still wrong (fake)"]
    assert again.notes == [
        "fake was started again (it had ended (exit code 3: fake-lsp: asked to crash))"
    ]
    second = await edit(servers, code, "x = 4  # CRASH\n")
    assert second.notes == [
        "fake ended (exit code 3: fake-lsp: asked to crash) while checking this change, again; "
        "it stays off for this session"
    ]
    code.write_text("x = 4\n")
    after = await edit(servers, code, "x = 5  # ERROR: unseen\n")
    assert after == ([], 0, [], [], True), "an ended server is not started a third time"
    assert servers.status()[0]["state"] == "off"


async def test_a_server_that_never_answers_leaves_the_edit_a_note_after_the_settle_time(
    workspace: Path, make_servers: MakeServers
) -> None:
    servers = make_servers(silent(), settle_time=0.2, start_timeout=1.0)
    code = workspace / "code.py"
    found = await edit(servers, code, "x = 1\n")
    assert found.diagnostics == [] and found.servers == []
    assert found.notes == ["silent is still starting; its diagnostics are not in this result"]
    (server,) = servers.servers_for(code)
    await eventually(lambda: server.state == "failed", "the start to time out")
    later = await edit(servers, code, "x = 2\n")
    assert later.notes == [
        "silent could not be started: it did not answer within 1 s of starting; it is left out"
    ]
    last = await edit(servers, code, "x = 3\n")
    assert last.notes == [], "a failed start is said once"


async def test_a_program_that_is_missing_is_a_note_not_an_error(
    workspace: Path, make_servers: MakeServers
) -> None:
    from tests.lsp.conftest import found as entry

    servers = make_servers(entry("ghost", [str(workspace / "no-such-server")]))
    result = await edit(servers, workspace / "a.py", "x = 1\n")
    (note,) = result.notes
    assert note.startswith("ghost could not be started: ")
    assert "no-such-server could not be started (No such file or directory)" in note


async def test_servers_end_with_the_session_and_say_where_they_run(
    workspace: Path, make_servers: MakeServers
) -> None:
    servers = make_servers(fake())
    await edit(servers, workspace / "a.py", "x = 1\n")
    (status,) = servers.status()
    assert status["state"] == "running" and status["root"] == str(workspace.resolve())
    pid = status["pid"]
    listed = running_elsewhere(workspace)
    assert [(e["name"], e["agent"]) for e in listed] == [("fake", os.getpid())]
    await servers.aclose()
    assert running_elsewhere(workspace) == []
    await eventually(lambda: not _alive(pid), "the server's process to end")


async def test_each_project_root_has_its_own_server(
    workspace: Path, make_servers: MakeServers
) -> None:
    from dataclasses import replace

    entry = fake()
    entry = entry._replace(config=replace(entry.config, root_markers=("pyproject.toml",)))
    (workspace / "one").mkdir()
    (workspace / "one" / "pyproject.toml").write_text("")
    servers = make_servers(entry)
    await edit(servers, workspace / "one" / "a.py", "x = 1\n")
    await edit(servers, workspace / "b.py", "x = 1\n")
    roots = sorted(Path(s["root"]).name for s in servers.status())
    assert roots == sorted(["one", workspace.resolve().name])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
