"""mcp.json: reading both files, validation, workspace trust by content, add/rm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli import mcp_config, paths
from agent_cli.errors import ConfigError
from agent_cli.mcp_config import (
    add_server,
    is_trusted,
    load_servers,
    pending_trust,
    read_file,
    remove_server,
    trust,
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".agent").mkdir(parents=True)
    return folder.resolve()


def write(file: Path, data: object) -> Path:
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return file


def user(data: object) -> Path:
    return write(paths.config_dir() / "mcp.json", data)


def local(workspace: Path, data: object) -> Path:
    return write(workspace / ".agent" / "mcp.json", data)


def never(_file: Path) -> bool:
    raise AssertionError("trust was asked about without a reason")


def test_no_files_no_servers(workspace: Path):
    assert load_servers(workspace, trusted=never) == ([], [])


def test_entries_are_read_with_their_fields(workspace: Path):
    file = user(
        {
            "mcpServers": {
                "docs": {
                    "command": "npx",
                    "args": ["-y", "docs-mcp"],
                    "env": {"A": "1"},
                    "cwd": "sub",
                    "timeout_ms": 5000,
                    "allow": ["search*"],
                    "deny": ["delete"],
                },
                "web": {"type": "http", "url": "https://x.test/mcp", "headers": {"K": "v"}},
                "off": {"command": "x", "disabled": True},
            }
        }
    )
    servers, warnings = load_servers(workspace, trusted=never)
    assert warnings == []
    docs, web, off = servers
    assert (docs.name, docs.command, docs.args, dict(docs.env), docs.cwd) == (
        "docs",
        "npx",
        ("-y", "docs-mcp"),
        {"A": "1"},
        "sub",
    )
    assert (docs.timeout_ms, docs.allow, docs.deny, docs.source, docs.file) == (
        5000,
        ("search*",),
        ("delete",),
        "user",
        file,
    )
    assert docs.permits("search_docs") and not docs.permits("delete") and not docs.permits("x")
    assert (web.kind, web.url, dict(web.headers), web.timeout_ms) == (
        "http",
        "https://x.test/mcp",
        {"K": "v"},
        30_000,
    )
    assert off.disabled and not docs.disabled


def test_a_trusted_workspace_file_wins_over_the_user_file(workspace: Path):
    user({"mcpServers": {"docs": {"command": "user-docs"}, "git": {"command": "git-mcp"}}})
    file = local(workspace, {"mcpServers": {"docs": {"command": "project-docs"}}})
    asked: list[Path] = []

    def yes(found: Path) -> bool:
        asked.append(found)
        return True

    servers, _ = load_servers(workspace, trusted=yes)
    assert asked == [file]
    assert {s.name: (s.command, s.source) for s in servers} == {
        "docs": ("project-docs", "workspace"),
        "git": ("git-mcp", "user"),
    }


def test_an_untrusted_workspace_file_is_ignored_with_a_warning(workspace: Path):
    user({"mcpServers": {"docs": {"command": "user-docs"}}})
    file = local(workspace, {"mcpServers": {"docs": {"command": "evil"}, "x": {"command": "y"}}})
    servers, warnings = load_servers(workspace, trusted=lambda _f: False)
    assert [(s.name, s.command) for s in servers] == [("docs", "user-docs")]
    assert len(warnings) == 1 and str(file) in warnings[0] and "docs, x" in warnings[0]
    assert "not trusted" in warnings[0]


def test_trust_is_per_workspace_and_per_content(workspace: Path, tmp_path: Path):
    file = local(workspace, {"mcpServers": {"x": {"command": "y"}}})
    assert not is_trusted(workspace, file)
    assert pending_trust(workspace) == (file, read_file(file, "workspace")[0])
    trust(workspace, file)
    assert is_trusted(workspace, file) and pending_trust(workspace) is None
    servers, warnings = load_servers(workspace, trusted=lambda f: is_trusted(workspace, f))
    assert [s.name for s in servers] == ["x"] and warnings == []

    other = tmp_path / "clone"
    copy = local(other, file.read_text())
    assert not is_trusted(other, copy)  # the same file in another workspace: asked again

    local(workspace, {"mcpServers": {"x": {"command": "something-else"}}})
    assert not is_trusted(workspace, file)  # a changed file: asked again
    assert pending_trust(workspace) is not None
    record = json.loads((paths.data_dir() / "mcp-trust.json").read_text())
    assert str(workspace) in record  # kept in the user's data dir, never in the repository
    assert not (workspace / ".agent" / "mcp-trust.json").exists()


def test_a_broken_trust_record_trusts_nothing(workspace: Path):
    file = local(workspace, {"mcpServers": {"x": {"command": "y"}}})
    write(paths.data_dir() / "mcp-trust.json", "{not json")
    assert not is_trusted(workspace, file)
    trust(workspace, file)
    assert is_trusted(workspace, file)


def test_bad_json_names_the_file_and_line(workspace: Path):
    file = user('{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}\n')
    with pytest.raises(ConfigError) as caught:
        load_servers(workspace, trusted=never)
    message = str(caught.value)
    assert str(file) in message and "line 3" in message and "not valid JSON" in message


@pytest.mark.parametrize(
    ("text", "where", "key"),
    [
        ('{"mcpServers": {\n "a": {"command": "x"},\n "a": {"command": "y"}\n}}', "line 3", "a"),
        ('{"mcpServers": {"a": {"command": "x", "command": "y"}}}', "line 1", "command"),
        (  # the key is also in another object: every line it is on
            '{"mcpServers": {\n "a": {"command": "x", "env": {"K": "1", "K": "2"}},\n'
            ' "b": {"command": "y", "env": {"K": "3"}}}}',
            "lines 2, 3",
            "K",
        ),
    ],
)
def test_a_key_given_twice_is_an_error_naming_the_file_and_line(
    workspace: Path, text: str, where: str, key: str
):
    file = user(text)
    with pytest.raises(ConfigError) as caught:
        load_servers(workspace, trusted=never)
    assert str(caught.value) == (
        f"{file}, {where}: {key!r} is given twice in one object (only one would be used) — "
        "keep one."
    )


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"args": ["x"]}, 'either "command"'),
        ({"command": "x", "url": "http://y"}, 'either "command"'),
        ({"command": "x", "args": "--flag"}, "'args' must be a list of strings"),
        ({"command": "x", "args": [1]}, "'args' must be a list of strings"),
        ({"command": "x", "env": {"A": 1}}, "'env' must be an object of strings"),
        ({"command": "x", "timeout_ms": 0}, "'timeout_ms' must be a positive"),
        ({"command": "x", "timeout_ms": "5s"}, "'timeout_ms' must be a positive"),
        ({"command": ""}, "'command' must be a program"),
        ({"url": "ftp://x"}, "'url' must be an http"),
        ({"type": "sse", "command": "x"}, "'type' must be consistent"),
        ({"type": "websocket", "url": "http://x"}, '\'type\' must be "stdio", "http" or'),
        ({"url": "http://x", "oauth": "yes"}, "'oauth' must be an object"),
        ({"url": "http://x", "oauth": {"client_id": 7}}, "'oauth.client_id' must be a string"),
        ({"url": "http://x", "oauth": {"client_secret_env": "$X"}}, "an environment variable"),
        ({"url": "http://x", "oauth": {"client_metadata_url": "http://c"}}, "an https://"),
        ({"url": "http://x", "oauth": {"callback_port": 70000}}, "'oauth.callback_port'"),
        (
            {"url": "http://x", "oauth": {"token_endpoint_auth_method": "jwt"}},
            '"client_secret_post"',
        ),
        (
            {"url": "http://x", "oauth": {"token_endpoint_auth_method": "client_secret_post"}},
            "'oauth.client_secret_env' must be set",
        ),
        ({"command": "x", "oauth": {}}, "OAuth is for"),
        ({"type": "stdio", "url": "http://x"}, "'type' must be consistent"),
        ({"command": "x", "disabled": "yes"}, "'disabled' must be true or false"),
        ("npx", "must be an object"),
    ],
)
def test_bad_entries_name_the_file_the_server_and_the_key(workspace: Path, entry, words):
    file = user({"mcpServers": {"broken": entry}})
    with pytest.raises(ConfigError) as caught:
        load_servers(workspace, trusted=never)
    message = str(caught.value)
    assert str(file) in message and "'broken'" in message and words in message


def test_a_bad_workspace_file_is_an_error_even_before_trust(workspace: Path):
    file = local(workspace, {"mcpServers": []})
    with pytest.raises(ConfigError, match="mcpServers") as caught:
        load_servers(workspace, trusted=never)
    assert str(file) in str(caught.value)
    with pytest.raises(ConfigError, match="mcpServers"):
        pending_trust(workspace)


def test_sse_entries_and_oauth_settings_are_read(workspace: Path):
    oauth = {
        "client_id": "agent-cli",
        "client_secret_env": "LINEAR_SECRET",
        "callback_port": 8765,
        "token_endpoint_auth_method": "client_secret_post",
        "shade": "blue",
    }
    user(
        {
            "mcpServers": {
                "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
                "linear": {"url": "https://mcp.linear.app/mcp", "oauth": oauth},
            }
        }
    )
    servers, warnings = load_servers(workspace, trusted=never)
    old, linear = servers
    assert (old.kind, old.sse, old.oauth) == ("sse", True, None)
    assert linear.kind == "http" and linear.oauth is not None
    settings = linear.oauth
    assert (settings.client_id, settings.client_secret_env) == ("agent-cli", "LINEAR_SECRET")
    assert settings.callback_port == 8765
    assert settings.token_endpoint_auth_method == "client_secret_post"
    assert any("'oauth.shade'" in w and "'linear'" in w for w in warnings)


def test_unknown_keys_warn(workspace: Path):
    file = user({"mcpServers": {"a": {"command": "x", "colour": "red"}}, "extra": 1})
    servers, warnings = load_servers(workspace, trusted=never)
    assert [s.name for s in servers] == ["a"]
    assert any("'extra'" in w and str(file) in w for w in warnings)
    assert any("'colour'" in w and "'a'" in w for w in warnings)


def test_add_and_remove_keep_every_other_entry():
    file = user(
        {
            "mcpServers": {"keep": {"command": "k", "args": ["1"], "custom": True}},
            "other": {"x": 1},
        }
    )
    assert add_server("docs", {"command": "npx", "args": ["docs"]}) == file
    assert add_server("web", {"url": "https://x.test/mcp", "headers": {"A": "b"}}) == file
    data = json.loads(file.read_text())
    assert data["other"] == {"x": 1}
    assert data["mcpServers"] == {
        "keep": {"command": "k", "args": ["1"], "custom": True},
        "docs": {"command": "npx", "args": ["docs"]},
        "web": {"url": "https://x.test/mcp", "headers": {"A": "b"}},
    }
    add_server("docs", {"command": "other"})  # replaces in place
    assert json.loads(file.read_text())["mcpServers"]["docs"] == {"command": "other"}

    assert remove_server("docs") is True
    assert remove_server("docs") is False
    data = json.loads(file.read_text())
    assert list(data["mcpServers"]) == ["keep", "web"] and data["other"] == {"x": 1}
    assert sorted(p.name for p in file.parent.iterdir()) == ["mcp.json"]  # no temporary left


def test_add_creates_the_file_and_refuses_what_would_not_read_back():
    assert not mcp_config.user_file().exists()
    add_server("a", {"command": "x"})
    assert json.loads(mcp_config.user_file().read_text()) == {"mcpServers": {"a": {"command": "x"}}}
    with pytest.raises(ConfigError, match="'timeout_ms'"):
        add_server("b", {"command": "x", "timeout_ms": -1})
    assert list(json.loads(mcp_config.user_file().read_text())["mcpServers"]) == ["a"]


def test_a_broken_user_file_is_never_overwritten():
    file = user("{broken")
    with pytest.raises(ConfigError, match="not valid JSON"):
        add_server("a", {"command": "x"})
    with pytest.raises(ConfigError, match="not valid JSON"):
        remove_server("a")
    assert file.read_text() == "{broken"
