"""The committed completions and man page: current with the CLI, and working in each shell."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ("completions/agent.bash", "completions/agent.zsh", "completions/agent.fish")
MAN_PAGE = "man/agent.1"
TIMEOUT = 60


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files as the generator makes them now, from the CLI as it is."""
    out = tmp_path_factory.mktemp("generated")
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=TIMEOUT,
    )
    return out


@pytest.mark.parametrize("name", [*GENERATED, MAN_PAGE])
def test_committed_file_is_current(fresh: Path, name: str) -> None:
    committed = ROOT / name
    assert committed.exists(), f"{name} is missing — run python scripts/gen_docs.py"
    assert committed.read_text() == (fresh / name).read_text(), (
        f"{name} is out of date with the CLI — run python scripts/gen_docs.py"
    )


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, input=stdin, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def needs(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        pytest.skip(f"{program} is not installed")
    return path


BASH_CASES = {
    "agent ses": "sessions",
    "agent sessions ": "list show export fork rm",
    "agent config sh": "show",
    "agent run --mode ": "ask auto read-only full plan",
    "agent run --output=": "text json stream-json",
    "agent run --output=st": "stream-json",
    "agent --resume abc sessions s": "show",
    "agent sessions show --j": "--json",
}


@pytest.mark.parametrize(("line", "expected"), BASH_CASES.items())
def test_bash_completes_commands_options_and_values(fresh: Path, line: str, expected: str) -> None:
    bash = needs("bash")
    # As bash splits a line: at spaces, and "=" is a word of its own.
    words = line.replace("=", " = ").split() + ([""] if line.endswith((" ", "=")) else [])
    script = (
        f"source {fresh / 'completions/agent.bash'}\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
        '_agent; echo "${COMPREPLY[*]}"\n'
    )
    result = run(bash, "--norc", "-c", script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == expected.split(), f"completing {line!r}"


def test_bash_completes_folders_for_cwd(fresh: Path, tmp_path: Path) -> None:
    bash = needs("bash")
    (tmp_path / "src").mkdir()
    (tmp_path / "setup.py").write_text("")
    script = (
        f"source {fresh / 'completions/agent.bash'}; cd {tmp_path}\n"
        'COMP_WORDS=(agent run --cwd s); COMP_CWORD=3; _agent; echo "${COMPREPLY[*]}"\n'
    )
    assert run(bash, "--norc", "-c", script).stdout.split() == ["src"]


FISH_CASES = {
    "agent ses": ["sessions"],
    "agent sessions ": ["list", "rm", "show"],
    "agent run --mode ": ["ask", "full", "read-only"],
    "agent run --output=": ["--output=json", "--output=stream-json", "--output=text"],
    "agent --model m config ": ["edit", "path", "show"],
    "agent mcp add docs -- ": [],
}


@pytest.mark.parametrize(("line", "expected"), FISH_CASES.items())
def test_fish_completes_commands_and_values(fresh: Path, line: str, expected: list[str]) -> None:
    fish = needs("fish")
    script = f"source {fresh / 'completions/agent.fish'}; complete -C '{line}'"
    result = run(fish, "--no-config", "-c", script)
    assert result.returncode == 0, result.stderr
    offered = sorted(entry.split("\t")[0] for entry in result.stdout.splitlines())
    assert offered == expected, f"completing {line!r}"


# zsh's completion widgets need a terminal; these stand-ins print what would be offered.
ZSH_STUBS = """
compdef() { :; }
_describe() { local entry; for entry in ${(P)4}; do print -r -- ${entry%%:*}; done; }
compadd() { shift; print -r -- "$@"; }
_files() { print -r -- "files $*"; }
_message() { :; }
compset() { :; }
"""


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["agent", "sessions", ""], "list show export fork rm"),
        (["agent", "run", "--mode", ""], "ask auto read-only full plan"),
        (["agent", "run", "--output=s"], "text json stream-json"),
        (["agent", "run", "--cwd", ""], "files -/"),
        (["agent", "--resume", "x", "config", ""], "show path edit"),
    ],
)
def test_zsh_completes_commands_and_values(fresh: Path, words: list[str], expected: str) -> None:
    zsh = needs("zsh")
    quoted = " ".join(f"'{w}'" for w in words)
    script = (
        f"{ZSH_STUBS}\nsource {fresh / 'completions/agent.zsh'}\n"
        f"words=({quoted}); CURRENT={len(words)}; _agent\n"
    )
    result = run(zsh, "-f", "-c", script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == expected.split(), f"completing {words}"


@pytest.mark.parametrize("name", GENERATED)
def test_completion_scripts_parse(name: str) -> None:
    shell = {"bash": "bash", "zsh": "zsh", "fish": "fish"}[name.rsplit(".", 1)[1]]
    program = needs(shell)
    check = "--no-execute" if shell == "fish" else "-n"
    result = run(program, check, str(ROOT / name))
    assert result.returncode == 0, result.stderr


def test_man_page_has_every_section_and_command() -> None:
    page = (ROOT / MAN_PAGE).read_text()
    sections = ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "FILES"]
    sections += ["ENVIRONMENT", "EXIT STATUS", "EXAMPLES"]
    for section in sections:
        assert f"\n.SH {section}\n" in page, f"the man page has no {section} section"
    for command in ("agent run", "agent sessions show", "agent config edit", "agent mcp add"):
        assert f'.SS "{command}"' in page
    for variable in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENT_MODEL", "NO_COLOR", "EDITOR"):
        assert variable in page
    assert page.isascii(), "the page must be plain ASCII roff (escapes for the rest)"


def test_man_page_renders_without_warnings() -> None:
    page = str(ROOT / MAN_PAGE)
    if shutil.which("mandoc"):
        result = run("mandoc", "-Tlint", "-Wwarning", page)
    else:
        groff = needs("groff")
        env = {**os.environ, "LC_ALL": "C.UTF-8"}
        result = subprocess.run(
            [groff, "-man", "-Tutf8", "-ww", "-z", page],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=env,
            check=False,
        )
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr + result.stdout
