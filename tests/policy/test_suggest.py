"""What "always" offers for a command, checked through the real rule set both ways: the
rule allows the same command again, and nothing broader than it shows (SPEC §8)."""

from __future__ import annotations

import pytest

from agent_cli.policy.rules import RuleSet, suggest_rule
from agent_cli.tools.workspace import Workspace

SHELL = "exec_shell_command"


@pytest.fixture
def ws(tmp_path) -> Workspace:
    return Workspace(tmp_path)


def suggested(command: str, ws: Workspace) -> list[str]:
    text = suggest_rule(SHELL, {"command": command}, ws)
    return [line.removeprefix(f"{SHELL}(").removesuffix(")") for line in text.splitlines()]


def allowed_after_always(ws: Workspace, approved: str, command: str) -> bool:
    rules = RuleSet(ws)
    rules.add(suggest_rule(SHELL, {"command": approved}, ws), "conversation")
    return rules.match(SHELL, {"command": command}) is not None


@pytest.mark.parametrize(
    ("command", "patterns"),
    [
        # Interpreters, runners and wrappers: from what they run.
        ("python3 -m pytest -q src", ["python3 -m pytest *"]),
        ("python3 -m pytest", ["python3 -m pytest *"]),
        ("python -X dev -m pytest -x", ["python -X dev -m pytest *"]),
        ("python3.12 tools/gen.py --all", ["python3.12 tools/gen.py *"]),
        (".venv/bin/python -u run.py", [".venv/bin/python -u run.py *"]),
        ("npx eslint --fix src", ["npx eslint *"]),
        ("npx -y prettier --check .", ["npx -y prettier *"]),
        ("uv run pytest -q", ["uv run pytest *"]),
        ("uv run python -m pytest -x", ["uv run python -m pytest *"]),
        ("uv run --with rich pytest", ["uv run --with rich pytest *"]),
        ("npm run build -- --watch", ["npm run build *"]),
        ("env FOO=1 make all -j4", ["env FOO=1 make *"]),
        ("sudo apt-get install -y foo", ["sudo apt-get *"]),
        ("sudo -u www-data ls /srv", ["sudo -u www-data ls *"]),
        ("timeout 60 pytest -q", ["timeout 60 pytest *"]),
        ("xargs -0 rm -f", ["xargs -0 rm *"]),
        ("nice -n 5 make", ["nice -n 5 make *"]),
        ("bash scripts/check.sh --fast", ["bash scripts/check.sh *"]),
        ("node scripts/build.js --prod", ["node scripts/build.js *"]),
        ("git log --oneline -5", ["git log *"]),
        ("git -c core.pager=less log -5", ["git -c core.pager=less log *"]),
        # Inline code, and what we cannot read, exactly.
        ("python3 -c 'print(1)'", ["python3 -c 'print(1)'"]),
        ("python3 -uc 'print(1)'", ["python3 -uc 'print(1)'"]),
        ("python3 -", ["python3 -"]),
        ("bash -c 'echo hi'", ["bash -c 'echo hi'"]),
        ("bash -o pipefail -c 'make | tee log'", ["bash -o pipefail -c 'make | tee log'"]),
        ("bash +x -c 'echo hi' a b", ["bash +x -c 'echo hi' a b"]),
        ("sh -ec ls", ["sh -ec ls"]),
        ("node -e 'console.log(1)'", ["node -e 'console.log(1)'"]),
        ("node --eval=1 x", ["node --eval=1 x"]),
        ("node -r ./hook.js app.js", ["node -r ./hook.js app.js *"]),
        ("node --unknown-flag app.js x", ["node --unknown-flag app.js x"]),
        ("perl -e 'print 1' x", ["perl -e 'print 1' x"]),
        ("perl -w tool.pl x", ["perl -w tool.pl x"]),
        ("ruby -e 'p 1'", ["ruby -e 'p 1'"]),
        ("eval 'ls -la'", ["eval 'ls -la'"]),
        ("npx -c 'rm -rf x'", ["npx -c 'rm -rf x'"]),
        ("env -S 'rm -rf x'", ["env -S 'rm -rf x'"]),
        ("env 'A=1' -i rm x", ["env A=1 -i rm x"]),  # `-i` would be the program
        ("sudo -s ls x", ["sudo -s ls x"]),
        ("ssh host ls -la", ["ssh host ls -la"]),
        ("psql -c 'select 1' db", ["psql -c 'select 1' db"]),
        ("mysql -e 'select 1' db", ["mysql -e 'select 1' db"]),
        ("make --eval='x:=1' all", ["make --eval=x:=1 all"]),
        ("sudo psql -c 'select 1'", ["sudo psql -c 'select 1'"]),
        ("sqlite3 app.db 'select 1'", ["sqlite3 app.db 'select 1'"]),
        ("py -3 -c 'print(1)'", ["py -3 -c 'print(1)'"]),
        ("sed -n '1,5p' a.txt", ["sed -n 1,5p a.txt"]),
        ("sed 's/a/b/' a.txt", ["sed s/a/b/ a.txt"]),  # GNU sed reads options after it too
        ("bash -- -c x", ["bash -- -c x"]),
        ("xargs sed -i s/a/b/ x", ["xargs sed -i s/a/b/ x"]),
        ("uv run python -c 'import x' y", ["uv run python -c 'import x' y"]),
        ("sudo env FOO=1 bash -c 'rm x' y", ["sudo env FOO=1 bash -c 'rm x' y"]),
        # Anything else: the program and its first argument.
        ("pytest tests/x.py -q", ["pytest tests/x.py *"]),
        ("npm test", ["npm test"]),
        ("mkdir -p d1", ["mkdir -p *"]),
        ("awk '{print $1}' a.txt b.txt", ["awk '{print $1}' *"]),
        ("FOO=1 make test -j", ["FOO=1 make test *"]),
        ("rm *.pyc x", [r"rm \*.pyc *"]),
        # A compound line: one per simple command.
        ("python3 -c 'print(1)' && echo done", ["python3 -c 'print(1)'", "echo done"]),
        ("pytest -q 2>&1 | tail -20", ["pytest -q", "tail -20"]),
        ("cd sub && pytest -q tests", ["cd sub", "pytest -q *"]),
        ("make; make", ["make"]),
        # No rule can allow these lines, so none is offered.
        ("echo hi > out.txt", []),
        ("pytest $(cat args)", []),
        ("", []),
    ],
)
def test_suggested_patterns(ws: Workspace, command: str, patterns: list[str]) -> None:
    assert suggested(command, ws) == patterns


APPROVED_AND_ALLOWED = [
    (
        "python3 -m pytest -q src",
        ["python3 -m pytest -q src", "python3 -m pytest", "python3 -m pytest -x 'a b'"],
    ),
    ("python3 -c 'print(1)'", ["python3 -c 'print(1)'", 'python3 -c "print(1)"']),
    ("python3 -c 'print(2*3)'", ["python3 -c 'print(2*3)'"]),
    ("python3 -c 'import os\nprint(1)'", ["python3 -c 'import os\nprint(1)'"]),
    ("bash -c 'echo hi'", ["bash -c 'echo hi'", 'bash -c "echo hi"']),
    ("npx eslint --fix src", ["npx eslint --fix src", "npx eslint .", "npx eslint"]),
    ("uv run pytest -q", ["uv run pytest -q", "uv run pytest tests -x"]),
    ("env FOO=1 make all -j4", ["env FOO=1 make all -j4", "env FOO=1 make test"]),
    ("sudo apt-get install -y foo", ["sudo apt-get install -y foo", "sudo apt-get update"]),
    ("eval 'ls -la'", ["eval 'ls -la'"]),
    ("rm *.pyc x", ["rm *.pyc x", "rm *.pyc"]),
    ("python3 -c 'print(1)' && echo done", ["python3 -c 'print(1)' && echo done"]),
    ("pytest -q 2>&1 | tail -20", ["pytest -q 2>&1 | tail -20", "pytest -q | tail -20"]),
    ("cd sub && pytest -q tests", ["cd sub && pytest -q tests", "cd sub; pytest -q"]),
]


@pytest.mark.parametrize(
    ("approved", "command"), [(a, c) for a, commands in APPROVED_AND_ALLOWED for c in commands]
)
def test_an_always_rule_allows_the_same_command_again(
    ws: Workspace, approved: str, command: str
) -> None:
    assert allowed_after_always(ws, approved, command)


APPROVED_AND_NOT_BROADER = [
    (
        "python3 -m pytest -q src",
        [
            "python3 -m pip install evil",
            "python3 -c 'import os'",
            "python3 -m pytest_evil",
            "python3 evil.py",
            "python3 -m pytest; rm -rf x",
            "python3 -m pytest && rm -rf x",
            "python3 -m pytest $(rm x)",
            "python3 -m pytest > out.txt",
            "FOO=1 python3 -m pytest",
        ],
    ),
    (
        "python3 -c 'print(1)'",
        [
            "python3 -c 'print(2)'",
            "python3 -c 'print(1)' extra",
            "python3 -c 'print(1)'; rm x",
            "python3 -c print 1",
            "python3 -c 'print(1)' 'import os'",
        ],
    ),
    # The star in the code is literal, not a wildcard.
    ("python3 -c 'print(2*3)'", ["python3 -c 'print(2); import os; os.remove(\"x\"); (3)'"]),
    ("bash -c 'echo hi'", ["bash -c 'echo hi; rm -rf x'", "bash -c 'rm x'", "bash -c 'echo hi' x"]),
    ("sh -c ls", ["sh -c 'ls; rm x'", "sh -c rm"]),
    ("node -e 'console.log(1)'", ['node -e \'require("fs").rmSync("x")\'', "node evil.js"]),
    (
        "npx eslint --fix src",
        ["npx -y evil", "npx eslint-evil", "npx -c 'rm -rf x'", "npx prettier --write ."],
    ),
    ("uv run pytest -q", ["uv run python -c 'x'", "uv run --with evil pytest", "uv run rm x"]),
    (
        "env FOO=1 make all -j4",
        ["env FOO=2 make", "env FOO=1 rm x", "env -S 'rm x'", "env FOO=1 make; rm x", "make"],
    ),
    ("sudo apt-get install -y foo", ["sudo rm -rf /", "sudo -s apt-get", "sudo bash -c x"]),
    ("eval 'ls -la'", ["eval 'rm x'", "eval 'ls -la' x"]),
    ("sed 's/a/b/' a.txt", ["sed s/a/b/ -e '1e rm x' a.txt"]),
    ("awk '{print}' a.txt b.txt", ["awk 'BEGIN{system(\"x\")}'", "awk -f evil.awk a.txt"]),
    ("rm *.pyc x", ["rm '*.pyc'", "rm -rf x"]),
    ("git -c core.pager=less log -5", ["git -c core.pager='sh -c x' log", "git log -p"]),
    (
        "python3 -c 'print(1)' && echo done",
        [
            "python3 -c 'print(1)' && rm -rf x",
            "python3 -c 'print(1)'; rm -rf x",
            "echo done && python3 -c 'print(2)'",
            "python3 -c 'print(1)' && echo done > out.txt",
            "python3 -c 'print(1)' && echo done &",
        ],
    ),
    ("pytest -q 2>&1 | tail -20", ["pytest -q | sh", "pytest -q 2>&1 | tail -20 > log"]),
]


@pytest.mark.parametrize(
    ("approved", "command"), [(a, c) for a, commands in APPROVED_AND_NOT_BROADER for c in commands]
)
def test_an_always_rule_allows_nothing_broader(ws: Workspace, approved: str, command: str) -> None:
    assert not allowed_after_always(ws, approved, command)


def test_a_compound_line_is_allowed_again_after_always_stored_for_the_project(
    ws: Workspace, tmp_path_factory
) -> None:
    folder = tmp_path_factory.mktemp("rules")
    line = "python3 -c 'import sys; print(sys.version)' && echo done"
    RuleSet(ws, folder=folder).add(suggest_rule(SHELL, {"command": line}, ws), "project")
    again = RuleSet(ws, folder=folder)  # read back from the file
    assert again.match(SHELL, {"command": line}) == (
        "allow",
        "exec_shell_command(python3 -c 'import sys; print(sys.version)') + "
        "exec_shell_command(echo done) (project)",
    )
    assert again.match(SHELL, {"command": "echo done && rm -rf x"}) is None
