"""The README stays true: every `agent …` command in its shell blocks exists as written.

Each command line is split like a shell would, then resolved against the whole
CLI (every command registered for real): the command path must exist, and
every option it uses must be one that command takes, with a value when it
needs one. What the commands then do is tested where each is built; this
catches a README that drifts from the CLI.
"""

from __future__ import annotations

import importlib.util
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # build-time code under scripts/, loaded with gen_docs.py below
    from docs_gen import Command

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SHELLS = ("sh", "bash", "console", "")
REDIRECT = "\0redirect"


def shell_blocks(text: str) -> list[str]:
    blocks, current, language = [], None, ""
    for line in text.splitlines():
        if line.startswith("```"):
            if current is None:
                current, language = [], line[3:].strip()
            else:
                if language in SHELLS:
                    blocks.append("\n".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def full_tree() -> Command:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.full_tree()


def readme_commands() -> list[list[str]]:
    """Every `agent` invocation in a shell block, as words (after pipes and `&&` too)."""
    found = []
    for block in shell_blocks(README.read_text()):
        for line in block.splitlines():
            line = line.split(" # ", 1)[0].strip()
            if not line or line.startswith("#"):
                continue
            lexer = shlex.shlex(line, posix=True, punctuation_chars="|&;")
            lexer.whitespace_split = True
            words: list[str] = []
            for token in [*lexer, ";"]:
                if token and set(token) <= set("|&;"):  # the end of one command
                    while words and "=" in words[0] and not words[0].startswith("-"):
                        words = words[1:]  # VAR=value before the command
                    if words and words[0] == "agent":
                        found.append([word for word in words[1:] if word])
                    words = []
                elif token in (">", ">>", "<", "2>", "2>>"):
                    words.append(REDIRECT)  # it and the file after it are the shell's
                elif words and words[-1] == REDIRECT:
                    words[-1] = ""
                else:
                    words.append(token)
    return found


COMMANDS = readme_commands()


@pytest.fixture(scope="module")
def tree() -> Command:
    return full_tree()


def test_the_readme_shows_every_command(tree: Command):
    shown = {tuple(words[:1]) for words in COMMANDS if words and not words[0].startswith("-")}
    missing = [c.path[0] for c in tree.subcommands if (c.path[0],) not in shown]
    assert not missing, f"README.md has no example of: {missing}"


@pytest.mark.parametrize("words", COMMANDS, ids=[" ".join(w) or "agent" for w in COMMANDS])
def test_each_readme_command_exists_as_written(tree: Command, words: list[str]):
    command = tree
    rest = list(words)
    # The command path: words that name a subcommand, before any option or argument.
    while rest and not rest[0].startswith("-"):
        sub = next((c for c in command.subcommands if c.path[-1] == rest[0]), None)
        if sub is None:
            break
        command, rest = sub, rest[1:]
    if command.subcommands and not command.runs_alone:
        raise AssertionError(f"`agent {' '.join(words)}`: {command.name} needs a subcommand")
    options = {name: option for option in command.options for name in option.names}
    arguments = 0
    index = 0
    while index < len(rest):
        word = rest[index]
        index += 1
        if word == "--":
            break
        if word.startswith("-") and word != "-":
            name = word.split("=", 1)[0]
            assert name in options, f"`agent {' '.join(words)}`: {command.name} has no {name}"
            option = options[name]
            if option.takes_value and "=" not in word:
                assert index < len(rest), f"`agent {' '.join(words)}`: {name} needs a value"
                value = rest[index]
                index += 1
                if option.choices:
                    assert value in option.choices, f"{name} {value}: not one of {option.choices}"
        else:
            arguments += 1
    takes = len(command.arguments) or 0
    many = any(argument.many for argument in command.arguments)
    assert many or arguments <= takes, (
        f"`agent {' '.join(words)}`: {command.name} takes {takes} argument(s), got {arguments}"
    )
