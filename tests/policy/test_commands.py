"""Adversarial tests for the read-only shell command rule.

A True answer lets the agent run the command without asking, so most cases here are
ways to make a harmless-looking line write, run a program, or read outside the workspace.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_cli.policy import commands
from agent_cli.policy.commands import MAX_COMMAND_LENGTH, is_read_only


def _populate(ws: Path) -> None:
    for name, text in {
        "README.md": "# readme\n",
        "a.py": "print('a')\n",
        "a.txt": "foo\nbar\nfoo\n",
        "b.txt": "foo\nbaz\n",
        "src/main.py": "def main():\n    pass\n",
        "src/util.py": "x = 1\n",
        "docs/guide.md": "guide\n",
    }.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    (ws / "link_in").symlink_to("a.txt")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text("TOPSECRET\n")
    return out


@pytest.fixture
def ws(tmp_path: Path, outside: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    _populate(root)
    return root.resolve()


@pytest.fixture
def escape_links(ws: Path, outside: Path) -> Path:
    """Symlinks inside the workspace that lead out of it."""
    (ws / "src" / "evil.py").symlink_to(outside / "secret.txt")
    (ws / "link_out").symlink_to(outside / "secret.txt")
    (ws / "dir_out").symlink_to(outside)
    (ws / "rel_out").symlink_to("../outside/secret.txt")
    return ws


READ_ONLY = [
    "ls",
    "ls -la",
    "ls -la src",
    "ls -1 src docs",
    "ls -lhS",
    "ls -R",
    "ls --color=auto src",
    "ls -- -ofile",
    "  ls  ",
    "pwd",
    "pwd -P",
    "cat README.md",
    "cat -n a.py",
    "cat src/main.py docs/guide.md",
    "cat ./a.txt",
    "cat 'a.txt'",
    'cat "a.txt"',
    "cat a'.'txt",
    "cat link_in",
    "cat -- -x",
    "cat -",
    "head -n 5 a.txt",
    "head -5 a.txt",
    "head -n5 a.txt",
    "head --lines=3 a.txt",
    "head -c 100 a.txt",
    "head -n -2 a.txt",
    "tail -n 20 a.txt",
    "tail -n +2 a.txt",
    "tail -3 a.txt",
    "wc -l a.py",
    "wc -l a.py | sort -n",
    "wc -lw src/main.py src/util.py",
    "grep foo a.txt",
    "grep -rn foo src",
    "grep -rn 'def main(' src",
    "grep -E 'foo|bar' a.txt",
    "grep -i -e foo -e bar a.txt",
    "grep -c foo a.txt",
    "grep -rn --include='*.py' main .",
    "grep -A3 -B 2 foo a.txt",
    "grep -3 foo a.txt",
    "grep -- -foo a.txt",
    "grep '#include' a.txt",
    "grep 'a\\.b' a.txt",
    "grep ':' a.txt",
    "rg foo",
    "rg -n foo src",
    "rg foo -g '*.py'",
    "rg -g '!*.min.js' foo",
    "rg -i --hidden foo",
    "rg --files",
    "rg -l foo src",
    "rg -t py main",
    "rg -uu foo",
    "find",
    "find .",
    "find . -name '*.py'",
    "find src -type f -name '*.py' -print",
    "find . -maxdepth 2 -type d",
    "find . -mtime -7 -size +1k",
    "find . '(' -name '*.py' -o -name '*.md' ')'",
    "find . '!' -name '*.py'",
    "find . -newer a.txt",
    "find . -name '.*'",
    "find . -not -path './.git/*' -print0",
    "find . -printf '%p\\n'",
    "sort a.txt",
    "sort -n -r a.txt",
    "sort -t, -k2 a.txt",
    "sort -u a.txt | uniq -c",
    "sort -- -ofile",
    "uniq a.txt",
    "uniq -c a.txt",
    "cut -d: -f1 a.txt",
    "cut -c1-10 a.txt",
    "tr a-z A-Z",
    "cat a.txt | tr -d x",
    "stat a.txt",
    "stat -c %s a.txt",
    "du -sh .",
    "du -d 1 src",
    "du -a src",
    "file a.py",
    "file -b src/main.py",
    "tree",
    "tree src",
    "tree -L 2",
    "tree -a -I node_modules",
    "diff a.txt b.txt",
    "diff -u a.txt b.txt",
    "echo hello",
    "echo 'hello world'",
    'echo "a b"',
    "echo",
    "nl a.txt",
    "basename src/main.py .py",
    "dirname src/main.py",
    "realpath a.txt",
    "ls *.py",
    "cat src/*.py",
    "wc -l *.txt",
    "echo *",
    "ls ./src/*",
    "cat a.???",
    "ls | wc -l",
    "ls -la|grep py",
    "cat a.txt | sort | uniq -c | sort -rn | head -n 3",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_plain_reading_commands_are_read_only(ws: Path, command: str) -> None:
    assert is_read_only(command, ws)


NOT_PROGRAMS = [
    "git status",
    "git log -1",
    "git diff",
    "rm a.txt",
    "touch x",
    "mkdir d",
    "cp a.txt c.txt",
    "mv a.txt c.txt",
    "tee out",
    "ls | tee out",
    "sh -c ls",
    "bash -c ls",
    "env ls",
    "xargs cat",
    "ls | xargs rm",
    "sed -n 1p a.txt",
    "sed -i s/a/b/ a.txt",
    "awk '{print}' a.txt",
    "less a.txt",
    "more a.txt",
    "vi a.txt",
    "python -c 1",
    "make",
    "printf x",
    "/bin/ls",
    "/usr/bin/cat a.txt",
    "./ls",
    "command ls",
    "exec ls",
    "time ls",
    "nohup ls",
    "sudo ls",
    "LS",
    "l*",
    "l?",
]

REDIRECTIONS = [
    "ls > out",
    "ls >out",
    "ls>>out",
    "ls 2>&1",
    "ls >/dev/null",
    "ls 2>/dev/null",
    "ls >| out",
    "ls &>out",
    "cat < a.txt",
    "cat <a.txt",
    "cat <<EOF",
    "cat a.txt 1>&2",
    "grep '>' a.txt",
]

SUBSTITUTIONS = [
    "ls $(pwd)",
    "ls `pwd`",
    "ls $HOME",
    "ls ${HOME}",
    "echo $((1+1))",
    "cat <(ls)",
    'echo "$HOME"',
    'echo "`id`"',
    "echo '$HOME'",
    "ls $",
    "diff <(ls) a.txt",
    "cat $(echo /etc/passwd)",
]

SEPARATORS = [
    "ls; rm a.txt",
    "ls;rm a.txt",
    "ls && rm a.txt",
    "ls || rm a.txt",
    "ls & rm a.txt",
    "ls &",
    "ls\nrm a.txt",
    "ls\n",
    "ls\rrm a.txt",
    "ls |& cat",
    "ls | ",
    "| ls",
    "ls || ",
    "ls | | wc",
    "ls ||wc",
]

SHELL_GRAMMAR = [
    "(ls)",
    "( ls )",
    "{ ls; }",
    "! ls",
    "if true; then ls; fi",
    "for f in a; do cat f; done",
    "ls # comment",
    "ls #",
    "#ls",
    "FOO=1 ls",
    "LD_PRELOAD=x.so ls",
    "PATH=. ls",
    "[ -f a.txt ]",
    "[[ -f a.txt ]]",
    "ls {a,b}.txt",
    "ls a.{py,txt}",
    "ls !",
    "ls ~",
    "ls a~",
]

QUOTING_TRICKS = [
    "'l's",
    '"ls"',
    "'ls'",
    "\\ls",
    "l\\s",
    "l''s",
    'l""s',
    "ls\\\n-la",
    "cat \\/etc/passwd",
    "ls 'unterminated",
    'ls "unterminated',
    'ls "a\\"b"',
    'echo "!!"',
]

ODD_CHARACTERS = [
    "",
    "   ",
    "ls\t-la",
    "ls\x00",
    "ls\x0b",
    "ls\x1b[2J",
    "ls\u00a0-la",
    "\u217cs",  # small roman numeral fifty, looks like l
    "\uff4c\uff53",  # fullwidth ls
    "ls \u2010la",  # unicode hyphen
    "cat a.t\u0445t",  # cyrillic x
    "grep 'h\u00e9llo' a.txt",
    "ls\x7f",
]

OUTSIDE_ARGUMENTS = [
    "cat /etc/passwd",
    'cat "/etc/passwd"',
    "cat '/etc/passwd'",
    "ls /",
    "ls //",
    "cat ../outside/secret.txt",
    "cat src/../../outside/secret.txt",
    "cat src/..",
    "ls ..",
    "ls -la ../",
    "cat ~/.ssh/id_rsa",
    "cat '~/x'",
    "cat '~'",
    "grep root /etc/passwd",
    "grep -r root ..",
    "find / -name x",
    "find .. -name x",
    "find . -newer /etc/passwd",
    "find . -samefile ../outside/secret.txt",
    "head -n 1 /etc/shadow",
    "tail /var/log/syslog",
    "diff a.txt /etc/passwd",
    "rg foo /",
    "rg foo -- /etc",
    "tree /",
    "du -sh ..",
    "stat /",
    "file /bin/sh",
    "wc -l /etc/passwd",
    "realpath ..",
    "ls | cat /etc/passwd",
    "echo /",
]

FIND_ACTIONS = [
    "find . -exec rm {} \\;",
    "find . -exec cat '{}' +",
    "find . -exec cat '{}' '+'",
    "find . -execdir ls '{}' +",
    "find . -ok rm '{}' +",
    "find . -okdir ls '{}' +",
    "find . -delete",
    "find . -name '*.pyc' -delete",
    "find . -fprint out",
    "find . -fprint0 out",
    "find . -fprintf out %p",
    "find . -fls out",
    "find -L .",
    "find -H .",
    "find . -follow",
    "find . -files0-from list",
    "find -D exec .",
    "find -O3 .",
    "find . -name",
    "find . -newer",
    "find . -name -delete",
    "find . -name x -o -delete",
    "find . -xtype l",
    "find . -used 1",
]

SORT_WRITES = [
    "sort -o out a.txt",
    "sort -oout a.txt",
    "sort -uo out a.txt",
    "sort -nro out a.txt",
    "sort --output=out a.txt",
    "sort --output out a.txt",
    "sort --outp=out a.txt",
    "sort --out=out a.txt",
    "sort --o=out a.txt",
    "sort --compress-program=sh a.txt",
    "sort --compress=sh a.txt",
    "sort --compress-prog sh a.txt",
    "sort -T /tmp a.txt",
    "sort -T. a.txt",
    "sort -uT. a.txt",
    "sort --temporary-directory=. a.txt",
    "sort --files0-from=list",
    "sort --random-source=a.txt a.txt",
    "sort --parallel=2 a.txt",
    "sort a.txt -o out",
    "sort a.txt --output=out",
]

SEARCH_TOOL_TRICKS = [
    "rg --pre sh foo",
    "rg --pre=sh foo",
    "rg foo --pre=sh",
    "rg --pre-glob '*' --pre sh foo",
    "rg -z foo",
    "rg -iz foo",
    "rg --search-zip foo",
    "rg -L foo",
    "rg --follow foo",
    "rg --ignore-file x foo",
    "rg -f pats",
    "rg --file=pats",
    "rg --hostname-bin=sh foo",
    "rg --type-add 'x:*.x' foo",
    "grep -R foo .",
    "grep -rR foo .",
    "grep --dereference-recursive foo .",
    "grep --derefer foo .",
    "grep -L foo a.txt",
    "grep -f pats a.txt",
    "grep -rf pats .",
    "grep --file=pats a.txt",
    "grep --fil=pats a.txt",
    "grep --exclude-from=x -r foo .",
    "grep -S -r foo .",
    "grep -O -r foo .",
    "grep -Z foo a.txt",
    "grep -d recurse foo .",
    "grep foo a.txt -r",
    "grep foo a.txt -e /etc/passwd",
    "grep -e -f a.txt",
]

ENDLESS_OR_WRITING_OPTIONS = [
    "tail -f a.txt",
    "tail -F a.txt",
    "tail --follow a.txt",
    "tail --follow=name a.txt",
    "tail --fol a.txt",
    "tail -n 5 -f a.txt",
    "tail -5f a.txt",
    "tail -cf a.txt",
    "tail -c f a.txt",
    "tail +5f a.txt",
    "tail +f a.txt",
    "tail --retry a.txt",
    "tail --pid=1 a.txt",
    "tail -s 1 a.txt",
    "uniq a.txt out",
    "uniq -c a.txt out",
    "uniq a.txt b.txt",
    "diff -l a.txt b.txt",
    "diff --paginate a.txt b.txt",
    "diff --pag a.txt b.txt",
    "diff -r src docs",
    "diff src docs",
    "diff a.txt src",
    "diff --from-file=a.txt b.txt",
    "diff --to-file=a.txt b.txt",
    "diff -X list a.txt b.txt",
    "tree -o out",
    "tree -oout",
    "tree -ao out",
    "tree -l",
    "tree -R -H x",
    "tree -H . -o x.html",
    "tree --fromfile list",
    "du -L",
    "du -H .",
    "du --dereference",
    "du --files0-from=list",
    "du -X list",
    "wc --files0-from=list",
    "ls -L",
    "ls -lL",
    "ls --dereference",
    "ls -H",
    "ls --dere",
    "stat -L a.txt",
    "stat --dereference a.txt",
    "file -z a.txt",
    "file -Z a.txt",
    "file -m magic a.txt",
    "file -f names",
    "file -C -m magic",
    "file -L a.txt",
    "cat -l a.txt",
    "cut --output-file=x a.txt",
    "nl --foo a.txt",
    "head -n f a.txt",
    "head --lines a.txt",
]


@pytest.mark.parametrize(
    "command",
    NOT_PROGRAMS
    + REDIRECTIONS
    + SUBSTITUTIONS
    + SEPARATORS
    + SHELL_GRAMMAR
    + QUOTING_TRICKS
    + ODD_CHARACTERS
    + OUTSIDE_ARGUMENTS
    + FIND_ACTIONS
    + SORT_WRITES
    + SEARCH_TOOL_TRICKS
    + ENDLESS_OR_WRITING_OPTIONS,
)
def test_commands_that_may_write_run_or_escape_are_not_read_only(ws: Path, command: str) -> None:
    assert not is_read_only(command, ws)


# (file planted in the workspace, command whose glob picks it up)
GLOB_TRAPS = [
    ("-ofile", "sort *"),
    ("--output=x", "sort *"),
    ("--compress-program=sh", "sort *"),
    ("-T.", "sort *"),
    ("--pre=sh", "rg foo *"),
    ("-z", "rg foo *"),
    ("-exec", "find *"),
    ("-delete", "find *"),
    ("-f", "tail *"),
    ("+5f", "tail *"),
    ("-R", "grep foo *"),
    ("--", "cat *"),
    ("-", "cat *"),
    ("-o", "tree *"),
    ("-l", "tree *"),
    ("-L", "ls *"),
    ("a b", "cat *"),
    ("(", "find *"),
    ("!", "find *"),
    ("x.txt", "uniq *.txt"),
    ("-otxt.txt", "sort *.txt"),
    ("-oa", "sort -n -- a* *"),
    ("\u00e9", "cat ?"),
    ("ab\u00e9", "cat ab??"),
    ("a\nb", "cat a*"),
    ("C:x", "cat *"),  # a drive-relative path to Cygwin or MSYS
    ("c:", "ls *"),
    ("a=D:", "cat *"),
]


@pytest.mark.parametrize(("trap", "command"), GLOB_TRAPS)
def test_glob_that_picks_up_an_option_like_name_is_not_read_only(
    ws: Path, trap: str, command: str
) -> None:
    (ws / trap).write_text("x")
    assert not is_read_only(command, ws)


# Under Cygwin, MSYS or Git Bash `sh` takes Windows paths: a drive, a UNC share, a
# backslash as a folder separator. Each of these leads out of the workspace there.
WINDOWS_ESCAPES = [
    "cat C:/Users/me/secret.txt",
    "ls C:/Users",
    "ls c:",
    "ls C:",
    "cat 'C:\\x'",
    "cat 'c:\\Windows\\win.ini'",
    "cat D:foo",
    "ls z:.",
    "cat -- C:x",
    "cat a.txt C:/x",
    "echo C:",
    "grep foo C:/x",
    "grep -r foo d:",
    "grep -rn --include=C:/x foo .",
    "grep --exclude-dir=D: -r foo .",
    "grep --exclude-dir=C:\\ -r foo .",
    "ls --sort=C:/x",
    "grep -eC:/x a.txt",
    "grep -e C:/x a.txt",
    "grep -ie 'C:\\x' a.txt",
    "sort -tC: a.txt",
    "ls 'a,C:/x'",
    "ls 'a:C:/x'",
    "grep foo 'x C:/y'",
    "grep foo @C:/list",
    "cat '\\\\server\\share\\x'",
    "cat '\\\\?\\C:\\x'",
    "cat '\\\\.\\pipe\\x'",
    "cat '\\Windows\\win.ini'",
    "cat //server/share/x",
    "cat 'src\\..\\..\\secret.txt'",
    "ls 'src\\..'",
    "ls '..\\outside'",
    "ls 'a/..\\..'",
    "ls '.. '",
    "ls '...'",
    "ls 'src/... /x'",
    "grep -r --include=../x foo .",
    "grep -r --exclude-dir=/etc foo .",
    "grep -r --exclude-dir=~ foo .",
    "grep -r '--exclude-dir=\\x' foo .",
]


@pytest.mark.parametrize("command", WINDOWS_ESCAPES)
def test_drives_shares_and_backslash_paths_are_not_read_only(ws: Path, command: str) -> None:
    assert not is_read_only(command, ws)


@pytest.mark.parametrize(
    "command",
    [
        "cut -d: -f1 a.txt",  # `-d:` is a delimiter, after `-`: no drive
        "sort -t: -k2 a.txt",
        "grep ':' a.txt",
        "grep 'TODO:' a.txt",
        "grep -n 'key: value' a.txt",
        "stat -c %n:%s a.txt",
        "grep 'a\\.b' a.txt",
        "find . -printf '%p\\n'",
        "cut -d/ -f1 a.txt",
        "grep -rn --include='*.py' main .",
    ],
)
def test_colons_and_backslashes_that_name_no_path_stay_read_only(ws: Path, command: str) -> None:
    assert is_read_only(command, ws)


@pytest.mark.parametrize(
    "command", ["sort *", "rg foo *", "find *", "tail *", "grep foo *", "cat *", "tree *", "cat ?"]
)
def test_the_same_globs_are_read_only_without_planted_names(ws: Path, command: str) -> None:
    assert is_read_only(command, ws)


@pytest.mark.parametrize(
    "command",
    [
        "ls .*",
        "ls .?",
        "cat .?*",
        "cat '.'*",
        "ls ''.*",
        "ls .''*",
        'cat "."*',
        "ls */x",
        "cat src/*/x",
        "cat ?/a.txt",
        "ls [ab].txt",
        "ls a.[pt]*",
        "cat missing/*",
        "ls ../*",
        "ls /*",
    ],
)
def test_globs_that_could_reach_dotfiles_or_directories_are_not_read_only(
    ws: Path, command: str
) -> None:
    assert not is_read_only(command, ws)


def test_quoted_glob_characters_are_plain_text(ws: Path) -> None:
    (ws / "-ofile").write_text("x")
    assert is_read_only("find . -name '*'", ws)
    assert is_read_only('grep -rn "x*" src', ws)
    assert not is_read_only("find . -name *", ws)


@pytest.mark.parametrize(
    "pattern",
    [
        "*",
        "*.py",
        "a?",
        "a.??",
        "src/*",
        "'a'*",
        '"*"',
        "*'.py'",
        "?",
        "nomatch*",
        "''*",
        "'src'/*",
        '"src"/*.py',
        "s''rc/*",
        "./src/''*",
    ],
)
@pytest.mark.parametrize("shell", ["dash", "bash"])
def test_glob_expansion_matches_the_shell(ws: Path, pattern: str, shell: str) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} not installed")
    (ws / ".hidden").write_text("x")
    (ws / "ab").write_text("x")
    out = subprocess.run(
        [shell, "-c", f'printf "%s\\n" {pattern}'], cwd=ws, capture_output=True, text=True
    ).stdout
    stages = commands._tokenize(f"echo {pattern}")
    assert stages is not None
    assert commands._expand(stages[0][1], str(ws)) == sorted(out.splitlines())


@pytest.mark.parametrize(
    "command",
    [
        "cat link_out",
        "cat rel_out",
        "head rel_out",
        "cat dir_out/secret.txt",
        "ls dir_out",
        "ls -la dir_out/",
        "grep -r SECRET dir_out",
        "find dir_out",
        "find dir_out/",
        "wc -l link_out",
        "diff link_out a.txt",
        "stat link_out",
        "file link_out",
        "tree dir_out",
        "du dir_out",
        "rg SECRET dir_out",
        "cat *",
        "ls *",
        "grep SECRET *",
        "cat dir_out/*",
        "find . -newer link_out",
        "cat a.txt | cat link_out",
        "cat src/*",
        "cat 'src'/*",
        "cat s''rc/*.py",
        "cat ./src/*",
    ],
)
def test_symlinks_leading_out_of_the_workspace_are_not_followed(
    escape_links: Path, command: str
) -> None:
    assert not is_read_only(command, escape_links)


@pytest.mark.parametrize(
    "command", ["ls -la", "ls -R", "grep -rn SECRET .", "find . -type f", "du -a", "cat link_in"]
)
def test_tools_that_do_not_follow_symlinks_stay_read_only_next_to_them(
    escape_links: Path, command: str
) -> None:
    assert is_read_only(command, escape_links)


def test_no_follow_claim_holds_for_real_grep_and_find(escape_links: Path) -> None:
    for command in ["grep -rn TOPSECRET .", "find . -type f", "ls -R"]:
        assert is_read_only(command, escape_links)
        out = subprocess.run(
            ["/bin/sh", "-c", command], cwd=escape_links, capture_output=True, text=True
        ).stdout
        assert "TOPSECRET" not in out and "secret.txt" not in out


def test_workspace_given_through_a_symlink_still_works(tmp_path: Path, ws: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(ws)
    assert is_read_only("cat a.txt", alias)
    assert not is_read_only("cat ../outside/secret.txt", alias)


@pytest.mark.parametrize("entry", ["", ".", "bin", "{ws}/bin", "{ws}"])
def test_search_path_the_repo_could_shadow_makes_nothing_read_only(
    ws: Path, monkeypatch: pytest.MonkeyPatch, entry: str
) -> None:
    monkeypatch.setenv("PATH", entry.format(ws=ws) + os.pathsep + os.environ["PATH"])
    assert not is_read_only("ls", ws)


@pytest.mark.parametrize("config", [".ripgreprc", "{ws}/.ripgreprc", "/etc/ripgreprc"])
def test_rg_with_a_config_file_is_read_only_only_with_no_config(
    ws: Path, monkeypatch: pytest.MonkeyPatch, config: str
) -> None:
    # A ripgreprc may say --pre=sh; a relative one is the repo's own file.
    (ws / ".ripgreprc").write_text("--pre=sh\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", config.format(ws=ws))
    assert not is_read_only("rg foo", ws)
    assert not is_read_only("rg foo -- --no-config", ws)
    assert is_read_only("rg --no-config foo", ws)
    assert is_read_only("rg foo --no-config", ws)
    assert is_read_only("grep -r foo .", ws)


def test_missing_workspace_is_not_read_only(tmp_path: Path) -> None:
    assert not is_read_only("ls", tmp_path / "nope")


@pytest.mark.parametrize("command", [None, b"ls", 3, ["ls"]])
def test_non_string_commands_are_not_read_only(ws: Path, command: object) -> None:
    assert not is_read_only(command, ws)  # type: ignore[arg-type]


def test_very_long_commands_are_not_read_only(ws: Path) -> None:
    assert is_read_only("ls " + "a" * (MAX_COMMAND_LENGTH - 3), ws)
    assert not is_read_only("ls " + "a" * (MAX_COMMAND_LENGTH - 2), ws)
    assert not is_read_only("ls" + " | cat" * 10_000, ws)


# --- end to end: whatever is judged read-only really changes nothing when run ------------


def _snapshot(root: Path) -> dict[str, tuple[object, ...]]:
    state: dict[str, tuple[object, ...]] = {}
    for path in [root, *root.rglob("*")]:
        st_ = path.lstat()
        content: object = None
        if path.is_symlink():
            content = os.readlink(path)
        elif path.is_file():
            content = path.read_bytes()
        state[str(path.relative_to(root))] = (st_.st_mode, st_.st_size, st_.st_mtime_ns, content)
    return state


def _run(command: str, cwd: Path, tmpdir: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    try:
        subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"read-only command never ended: {command!r}")


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands_change_nothing_when_run(
    tmp_path: Path, ws: Path, outside: Path, command: str
) -> None:
    (tmp_path / "tmp").mkdir()
    before = _snapshot(ws), _snapshot(outside)
    _run(command, ws, tmp_path / "tmp")
    assert (_snapshot(ws), _snapshot(outside)) == before


_PLANTED = ["-ofile", "--pre=sh", "-exec", "-f", "+5f", "-delete", "--output=o"]
_VOCAB = [
    *commands.PROGRAMS, "find", "rm", "touch", "tee", "sh",
    "-o", "-ofile", "out", "--output=out", "--out=out", "-T", ".", "-exec", "touch", "{}",
    "+", "-delete", "-fprint", "-f", "-n", "5", "-u", "-c", "-r", "-R", "-L", "-l", "-z",
    "--pre", "--pre=sh", "-", "--", "*", "*.txt", "a*", "?", "a.txt", "b.txt", "src",
    "../outside/secret.txt", "link_out", "dir_out", "|", "'*'", "-cf", "+5f", "-e", "-i",
]  # fmt: skip


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    program=st.sampled_from([*commands.PROGRAMS, "find"]),
    words=st.lists(st.sampled_from(_VOCAB), max_size=6),
)
def test_fuzzed_commands_judged_read_only_change_nothing(program: str, words: list[str]) -> None:
    command = " ".join([program, *words])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        ws, outside, tmpdir = root / "ws", root / "outside", root / "tmp"
        for d in (ws, outside, tmpdir):
            d.mkdir()
        _populate(ws)
        (outside / "secret.txt").write_text("TOPSECRET\n")
        (ws / "link_out").symlink_to(outside / "secret.txt")
        (ws / "dir_out").symlink_to(outside)
        for name in _PLANTED:
            (ws / name).write_text("x")
        if not is_read_only(command, ws):
            return
        before = _snapshot(ws), _snapshot(outside)
        _run(command, ws, tmpdir)
        assert (_snapshot(ws), _snapshot(outside)) == before, command
