"""`agent mcp tools|call|login|logout` end to end, against real servers: the test server on
stdio and Streamable HTTP, and an OAuth-protected one (with the browser stand-in as
`$BROWSER`). Each command is its own process, as a person runs them."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from agent_cli import mcp_config, paths
from tests.support.cli import agent_process, err, out
from tests.support.mcp_servers import SERVER
from tests.support.oauth import Guarded, browser_env, guarded_server, visits


def one_sentence(result) -> bool:
    text = err(result).strip()
    return "Traceback" not in text and len(text.splitlines()) == 1


def test_tools_and_call_on_a_configured_server(workspace: Path):
    mcp_config.add_server("docs", {"command": sys.executable, "args": [str(SERVER)]})
    listed = agent_process(workspace, "mcp", "tools", "docs")
    assert listed.returncode == 0, err(listed)
    lines = out(listed).splitlines()
    assert any(line.startswith("echo ") and "Say the text back." in line for line in lines)
    as_json = agent_process(workspace, "mcp", "tools", "docs", "--json")
    tools = {t["name"]: t for t in json.loads(out(as_json))}
    assert tools["add"]["inputSchema"]["required"] == ["a", "b"]
    assert tools["echo"]["readOnlyHint"] is True

    added = agent_process(workspace, "mcp", "call", "docs", "add", '{"a": 2, "b": 3}')
    assert (added.returncode, out(added).strip()) == (0, "5"), err(added)
    failed = agent_process(workspace, "mcp", "call", "docs", "fail", '{"message": "no good"}')
    assert failed.returncode == 1 and "Error executing tool fail" in out(failed)  # isError

    for words, needle in (
        (["call", "docs", "add", "{not json"], "ARGS_JSON is not valid JSON"),
        (["call", "docs", "add", "[1, 2]"], "must be a JSON object"),
        (["call", "docs", "nothing"], "has no tool 'nothing'"),
        (["tools", "nowhere"], "There is no MCP server 'nowhere' (docs)"),
    ):
        result = agent_process(workspace, "mcp", *words)
        assert result.returncode == 2 and one_sentence(result), (words, err(result))
        assert needle in err(result)


def test_accept_defaults_declines_a_form_whose_required_field_has_no_default(workspace: Path):
    mcp_config.add_server("c", {"command": sys.executable, "args": [str(SERVER), "--client"]})
    asked = agent_process(workspace, "mcp", "call", "c", "ask", "--accept-defaults")
    # Declined, not accepted without `name` (which the server refuses: "Error executing tool").
    assert (asked.returncode, out(asked).strip()) == (0, "decline"), err(asked)
    assert one_sentence(asked) and "defaults sent" not in err(asked)
    assert "declined — its required field 'name' has no default" in err(asked)
    assert "call the tool from a session (`agent`)" in err(asked)
    # A form whose required fields all have defaults is answered with them.
    pizza = agent_process(workspace, "mcp", "call", "c", "ask_many", "--accept-defaults")
    assert pizza.returncode == 0 and "its defaults sent" in err(pizza), err(pizza)
    sent = json.loads(out(pizza).strip().removeprefix("accept "))
    assert sent == {"size": "l", "toppings": ["cheese"]}


def test_a_url_needs_no_entry(workspace: Path, tmp_path: Path):
    from tests.tools.test_mcp import _served

    served = _served(tmp_path, "--http", "/mcp")
    url = next(served)
    try:
        listed = agent_process(workspace, "mcp", "tools", url)
        assert listed.returncode == 0 and "echo" in out(listed), err(listed)
        echoed = agent_process(workspace, "mcp", "call", url, "echo", '{"text": "ad hoc"}')
        assert out(echoed).strip() == "ad hoc"
    finally:
        served.close()
    assert not mcp_config.user_file().exists()  # nothing was configured


# ------------------------------------------------------------------ OAuth


@pytest.fixture
def guarded(tmp_path: Path):
    with guarded_server(tmp_path) as server:
        yield server


def token_file() -> Path:
    [found] = (paths.data_dir() / "mcp-auth").glob("*.json")
    return found


def test_a_401_starts_the_login_and_the_tokens_are_kept_0600_never_shown(
    workspace: Path, tmp_path: Path, guarded: Guarded
):
    env = browser_env(tmp_path)
    first = agent_process(
        workspace, "mcp", "call", guarded.url, "hello", '{"name": "ada"}', "--debug", env=env
    )
    assert first.returncode == 0, err(first)
    assert out(first).strip() == "hello, ada"
    [authorize, callback] = visits(tmp_path)
    assert "code_challenge_method=S256" in authorize and "resource=" in authorize
    assert callback.startswith("http://127.0.0.1:") and "/callback?code=" in callback
    assert f"opening your browser at:\n  {authorize}" in err(first)  # the address, printed too
    [grant] = guarded.grants()
    assert grant["grant"] == "authorization_code" and grant["resource"] == guarded.url

    kept = token_file()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    tokens = json.loads(kept.read_text())["tokens"]
    secrets = [tokens["access_token"], tokens["refresh_token"]]
    logs = [p.read_text() for p in paths.log_dir().glob("*.log")]
    assert logs, "--debug wrote no log"
    for secret in secrets:
        assert secret not in out(first) + err(first)
        assert not any(secret in text for text in logs), "a token reached the debug log"

    again = agent_process(workspace, "mcp", "tools", guarded.url, env=env)
    assert again.returncode == 0 and "hello" in out(again), err(again)
    assert len(visits(tmp_path)) == 2 and len(guarded.grants()) == 1  # no second login
    assert set(guarded.bearers()) == {tokens["access_token"]}


def test_a_401_during_the_call_logs_in_again_and_the_call_is_answered(
    workspace: Path, tmp_path: Path
):
    env = browser_env(tmp_path)
    with guarded_server(tmp_path, revoke_at_call=True) as server:
        called = agent_process(
            workspace, "mcp", "call", server.url, "hello", '{"name": "b"}', env=env
        )
    assert called.returncode == 0 and out(called).strip() == "hello, b", err(called)
    # The listing's login, then the call's: its token was revoked between them.
    assert [g["grant"] for g in server.grants()] == ["authorization_code"] * 2
    assert any(e.get("revoked") for e in server.entries())
    assert len(visits(tmp_path)) == 4  # two pages and their callbacks
    assert err(called).count("needs you to log in; opening your browser") == 2


def test_an_expired_token_is_refreshed_without_the_browser(
    workspace: Path, tmp_path: Path, guarded: Guarded
):
    env = browser_env(tmp_path)
    assert agent_process(workspace, "mcp", "tools", guarded.url, env=env).returncode == 0
    kept = token_file()
    data = json.loads(kept.read_text())
    data["expires_at"] = 1.0  # its time has passed (as if the run were an hour later)
    kept.write_text(json.dumps(data))
    called = agent_process(workspace, "mcp", "call", guarded.url, "hello", '{"name": "b"}', env=env)
    assert called.returncode == 0 and out(called).strip() == "hello, b", err(called)
    assert [g["grant"] for g in guarded.grants()] == ["authorization_code", "refresh_token"]
    assert len(visits(tmp_path)) == 2  # one login only
    refreshed = json.loads(kept.read_text())["tokens"]["access_token"]
    assert refreshed != data["tokens"]["access_token"] and guarded.bearers()[-1] == refreshed


def test_a_403_for_more_scope_steps_up_once(workspace: Path, tmp_path: Path, guarded: Guarded):
    env = browser_env(tmp_path)
    done = agent_process(workspace, "mcp", "call", guarded.url, "admin", env=env)
    assert done.returncode == 0 and out(done).strip() == "admin done", err(done)
    scopes = [g["scopes"] for g in guarded.grants()]
    assert scopes == [["read"], ["read", "admin"]]  # the challenge's scope, asked for again


def test_login_and_logout(workspace: Path, tmp_path: Path, guarded: Guarded):
    env = browser_env(tmp_path)
    mcp_config.add_server("guarded", {"url": guarded.url})
    logged = agent_process(workspace, "mcp", "login", "guarded", env=env)
    assert logged.returncode == 0 and "Logged in to the MCP server 'guarded'" in out(logged)
    assert token_file().exists()
    again = agent_process(workspace, "mcp", "login", "guarded", env=env)  # a login anew
    assert again.returncode == 0 and len(guarded.grants()) == 2
    out_ = agent_process(workspace, "mcp", "logout", "guarded")
    assert out_.returncode == 0 and "Logged out" in out(out_)
    assert not list((paths.data_dir() / "mcp-auth").glob("*.json"))
    nothing = agent_process(workspace, "mcp", "logout", "guarded")
    assert "no login kept" in out(nothing)
    mcp_config.add_server("local", {"command": sys.executable, "args": [str(SERVER)]})
    stdio = agent_process(workspace, "mcp", "login", "local")
    assert stdio.returncode == 2 and one_sentence(stdio) and "needs no login" in err(stdio)


def test_agent_run_without_a_terminal_says_to_log_in(
    workspace: Path, tmp_path: Path, guarded: Guarded
):
    from tests.support.fake_openai import FakeOpenAI, text

    env = browser_env(tmp_path)
    mcp_config.add_server("guarded", {"url": guarded.url})
    with FakeOpenAI() as fake:
        fake.add(text("Done."))
        result = agent_process(workspace, "run", "hi", "--yes", fake=fake, env=env)
    assert result.returncode == 0, err(result)
    said = "The MCP server 'guarded' was left out: it needs you to log in: run `agent mcp login"
    assert said in err(result)
    assert visits(tmp_path) == []  # no browser without someone to use it
    offered = [t["function"]["name"] for t in fake.requests[0]["tools"]]
    assert not any(name.startswith("guarded_") for name in offered)


def test_list_uses_a_kept_login_and_says_when_one_is_needed(
    workspace: Path, tmp_path: Path, guarded: Guarded
):
    mcp_config.add_server("guarded", {"url": guarded.url})
    before = agent_process(workspace, "mcp", "list", env=browser_env(tmp_path))
    line = next(x for x in out(before).splitlines() if x.startswith("guarded"))
    assert "failed: it needs you to log in: run `agent mcp login guarded`" in line
    assert visits(tmp_path) == []
    assert (
        agent_process(workspace, "mcp", "login", "guarded", env=browser_env(tmp_path)).returncode
        == 0
    )
    after = agent_process(workspace, "mcp", "list")
    assert "guarded  [user " in out(after) and "ok, 2 tools" in out(after), err(after)


# A client registered by hand, with a secret: the token endpoint is sent it as the
# authorization server takes it (the test server refuses a secret sent any other way than
# the client was registered for).
@pytest.mark.parametrize(
    ("registered", "advertised", "option"),
    [
        ("client_secret_post", "client_secret_post", None),  # basic not supported: post
        ("client_secret_post", "", "client_secret_post"),  # both supported, the entry says post
        ("client_secret_basic", "", None),  # both supported: basic, RFC 6749's default
    ],
)
def test_a_pre_registered_client_sends_its_secret_as_the_server_takes_it(
    workspace: Path, tmp_path: Path, registered: str, advertised: str, option: str | None
):
    from agent_cli.tools.mcp_auth import free_port

    port = free_port()
    env = browser_env(tmp_path) | {"APP_SECRET": "s3cret-value"}
    client = f"app:s3cret-value:{registered}:{port}"
    with guarded_server(tmp_path, client=client, auth_methods=advertised) as server:
        oauth = {"client_id": "app", "client_secret_env": "APP_SECRET", "callback_port": port}
        if option:
            oauth["token_endpoint_auth_method"] = option
        mcp_config.add_server("hand", {"url": server.url, "oauth": oauth})
        called = agent_process(workspace, "mcp", "call", "hand", "hello", '{"name": "a"}', env=env)
        assert called.returncode == 0 and out(called).strip() == "hello, a", err(called)
        # A refresh in a process of its own (no metadata read yet) sends it the same way.
        kept = token_file()
        data = json.loads(kept.read_text())
        data["expires_at"] = 1.0
        kept.write_text(json.dumps(data))
        again = agent_process(workspace, "mcp", "call", "hand", "hello", '{"name": "b"}', env=env)
        assert again.returncode == 0 and out(again).strip() == "hello, b", err(again)
        grants = server.grants()
    assert [(g["grant"], g.get("client")) for g in grants] == [
        ("authorization_code", "app"), ("refresh_token", None),
    ]  # fmt: skip
    assert "s3cret-value" not in kept.read_text()


def test_tokens_are_kept_with_their_client_id_and_another_one_is_not_logged_in(
    workspace: Path, tmp_path: Path
):
    from agent_cli.tools.mcp_auth import free_port

    port = free_port()
    env = browser_env(tmp_path) | {"APP_SECRET": "s3cret-value"}
    clients = ",".join(f"{c}:s3cret-value:client_secret_basic:{port}" for c in ("app", "other"))

    def entry(client_id: str) -> dict:
        oauth = {"client_id": client_id, "client_secret_env": "APP_SECRET", "callback_port": port}
        return {"url": server.url, "oauth": oauth}

    with guarded_server(tmp_path, client=clients) as server:
        mcp_config.add_server("hand", entry("app"))
        assert agent_process(workspace, "mcp", "login", "hand", env=env).returncode == 0
        kept, sent = token_file(), len(server.bearers())
        assert json.loads(kept.read_text())["client_id"] == "app"
        mcp_config.add_server("hand", entry("other"))  # the entry edited: another client
        listed = agent_process(workspace, "mcp", "list", env=env)
        line = next(x for x in out(listed).splitlines() if x.startswith("hand"))
        assert "failed: it needs you to log in: run `agent mcp login hand`" in line, out(listed)
        assert len(visits(tmp_path)) == 2 and len(server.bearers()) == sent  # app's token unsent
        called = agent_process(workspace, "mcp", "call", "hand", "hello", '{"name": "o"}', env=env)
        assert called.returncode == 0 and out(called).strip() == "hello, o", err(called)
        grants = server.grants()
    assert [g["client"] for g in grants] == ["app", "other"]  # logged in anew, as `other`
    assert json.loads(kept.read_text())["client_id"] == "other"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
