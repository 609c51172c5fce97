"""Diagnostics end to end: `agent run` edits a file with ruff's server warm in the
sandbox, and the tool item carries what it said, in json, stream-json and text; and
`agent lsp` lists the servers."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from agent_cli.lsp.config import KNOWN
from tests.lsp.conftest import program
from tests.support.cli import agent, agent_process, err, out
from tests.support.fake_openai import text, tool_calls

BAD = "import os\n\nprint(undefined_name_xyz)\n"


def only_ruff(isolated_home: Path, *more: str) -> None:
    """A user config with ruff's server as the only language server."""
    lines = ["[lsp]", "settle_time = 60"]
    for config in KNOWN:
        if config.name != "ruff":
            lines += [f"[lsp.{config.name}]", "enabled = false"]
    lines += ["[lsp.ruff]", f"command = [{json.dumps(program('ruff'))}, 'server']", *more]
    config_file = isolated_home / "config" / "agent" / "config.toml"
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text("\n".join(lines) + "\n")


def edit_then_answer(fake) -> None:
    edit = {"old_text": "print(undefined_name_xyz)", "new_text": "print(other)"}
    fake.add(
        tool_calls(("c0", "read_file", json.dumps({"path": "bad.py"}))),
        tool_calls(("c1", "edit_file", json.dumps({"path": "bad.py", "edits": [edit]}))),
        text("Edited."),
    )


def test_run_json_has_the_diagnostics_on_the_tool_item(fake, workspace, isolated_home):
    only_ruff(isolated_home)
    (workspace / "bad.py").write_text(BAD)
    edit_then_answer(fake)
    result = agent(workspace, "run", "fix it", "--yes", "--output", "json", fake=fake)
    assert result.returncode == 0, err(result)
    items = json.loads(out(result))["items"]
    (edit,) = [i for i in items if i["kind"] == "tool" and i["tool"] == "edit_file"]
    found = {(d["code"], d["line"], d["existing"]) for d in edit["diagnostics"]}
    assert found == {("F821", 3, False), ("F401", 1, True)}
    assert edit["diagnostics"][0] == {
        "path": "bad.py",
        "line": 3,
        "column": 7,
        "severity": "error",
        "message": "Undefined name `other`",
        "code": "F821",
        "source": "ruff",
        "existing": False,
    }
    (read,) = [i for i in items if i["kind"] == "tool" and i["tool"] == "read_file"]
    assert read["diagnostics"] == []
    # The model read them too: the edit's result, as the next request sent it.
    sent = [m for m in fake.requests[-1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "bad.py:3: error F821 Undefined name `other` (ruff)" in sent
    assert (
        "[diagnostics of bad.py after this change, from ruff: "
        "1 new error, 1 existing warning; 1 fixed]" in sent
    )


def test_stream_json_and_text_show_them_too(fake, workspace, isolated_home):
    only_ruff(isolated_home)
    (workspace / "bad.py").write_text(BAD)
    edit_then_answer(fake)
    result = agent(workspace, "run", "fix it", "--yes", "--output", "stream-json", fake=fake)
    assert result.returncode == 0, err(result)
    events = [json.loads(line) for line in out(result).splitlines()]
    done = [
        e["item"]
        for e in events
        if e["type"] == "item_updated"
        and e["item"].get("tool") == "edit_file"
        and e["item"]["state"] == "done"
    ]
    assert done and {d["code"] for d in done[-1]["diagnostics"]} == {"F821", "F401"}

    (workspace / "bad.py").write_text(BAD)
    edit_then_answer(fake)
    shown = agent(workspace, "run", "fix it", "--yes", fake=fake)
    assert shown.returncode == 0, err(shown)
    assert "  bad.py:3: error F821 Undefined name `other` (ruff)\n" in err(shown)


def executable(folder: Path, name: str) -> None:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_agent_lsp_lists_what_is_configured_and_found(workspace, isolated_home, tmp_path):
    executable(tmp_path / "bin", "gopls")
    config = isolated_home / "config" / "agent" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        '[lsp.clangd]\nenabled = false\n[lsp.mine]\ncommand = ["mine-ls"]\nfiles = ["*.mine"]\n'
    )
    result = agent(workspace, "lsp", env={"PATH": str(tmp_path / "bin")})
    assert result.returncode == 0, err(result)
    rows = {
        line.split()[0]: line for line in out(result).splitlines() if line and not line[0].isspace()
    }
    assert rows["gopls"].split()[1] == "found"
    assert "not found" in rows["ruff"] and "mine-ls" in rows["mine"]
    assert rows["clangd"].split()[1] == "off"
    assert f"from {config}" in out(result)
    listed = agent(workspace, "lsp", "--json", env={"PATH": str(tmp_path / "bin")})
    states = {row["name"]: row["state"] for row in map(json.loads, out(listed).splitlines())}
    assert states["gopls"] == "found" and states["mine"] == "not found"


def test_agent_lsp_says_when_they_are_off(workspace, isolated_home):
    config = isolated_home / "config" / "agent" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("lsp = false\n")
    result = agent(workspace, "lsp")
    assert result.returncode == 0 and "Language servers are off" in out(result)


async def test_agent_lsp_lists_the_servers_an_agent_runs_here(workspace, isolated_home):
    from agent_cli.lsp.servers import LanguageServers
    from tests.lsp.conftest import fake as fake_server

    servers = LanguageServers([fake_server("mine")], workspace, settle_time=60)
    try:
        code = workspace / "a.py"
        code.write_text("x = 1\n")
        await servers.check(code, None, "x = 1\n")
        config = isolated_home / "config" / "agent" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text('[lsp.mine]\ncommand = ["fake"]\nfiles = ["*.py"]\n')
        import asyncio

        result = await asyncio.to_thread(agent_process, workspace, "lsp")  # another process
        row = next(line for line in out(result).splitlines() if line.startswith("mine "))
        assert row.split()[1] == "running"
        assert f"(agent process {os.getpid()})" in out(result)
    finally:
        await servers.aclose()


def user_config(isolated_home: Path, text: str) -> None:
    config = isolated_home / "config" / "agent" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)


def test_a_files_check_runs_once_after_the_round_and_joins_its_last_edit(
    fake, workspace, isolated_home
):
    user_config(
        isolated_home,
        'lsp = false\n[[checks]]\nfiles = "*.txt"\ncommand = "echo {files}; exit 1"\n',
    )
    fake.add(
        tool_calls(
            ("c1", "write_file", json.dumps({"path": "a.txt", "content": "a\n"})),
            ("c2", "write_file", json.dumps({"path": "b c.txt", "content": "b\n"})),
        ),
        text("Both written."),
    )
    result = agent(workspace, "run", "write them", "--yes", "--output", "json", fake=fake)
    assert result.returncode == 0, err(result)
    first, second = [i for i in json.loads(out(result))["items"] if i["kind"] == "tool"]
    assert first["result"] == "Created a.txt (1 lines, 2 bytes)." and first["diagnostics"] == []
    assert second["result"].endswith(
        "[check `echo a.txt 'b c.txt'; exit 1` failed with exit code 1:]\na.txt b c.txt"
    )
    (check,) = second["diagnostics"]
    assert check["source"] == "check: echo a.txt 'b c.txt'; exit 1" and check["code"] == "exit 1"
    sent = [m for m in fake.requests[-1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "failed with exit code 1" in sent, "the model read it before its next answer"


def test_a_projects_checks_do_not_run_until_its_file_is_trusted(fake, workspace, isolated_home):
    user_config(isolated_home, "lsp = false\n")
    project = workspace / ".agent" / "config.toml"
    project.parent.mkdir()
    project.write_text('[[checks]]\nfiles = "*.txt"\ncommand = "touch ran-it; exit 1"\n')
    fake.add(
        tool_calls(("c1", "write_file", json.dumps({"path": "a.txt", "content": "a\n"}))),
        text("Written."),
    )
    result = agent(workspace, "run", "write it", "--yes", "--output", "json", fake=fake)
    assert result.returncode == 0, err(result)
    (edit,) = [i for i in json.loads(out(result))["items"] if i["kind"] == "tool"]
    assert "(.agent/config.toml) were left out: that file is not trusted yet" in edit["result"]
    assert not (workspace / "ran-it").exists()
