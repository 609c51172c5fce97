"""Shell completions and the man page, generated from the CLI's command tree.

`scripts/gen_docs.py` builds the whole Typer app (every command registered
for real), turns it into the plain `Command` tree here with `describe`, and
writes what `completions` and `manpage` make of it. The scripts are static:
the app is built lazily, one command at a time, so Typer's own runtime
completion could not see the whole tree. A test regenerates them and fails
when the committed files differ.

Only duck typing of the click objects: Typer vendors its own click.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_cli.policy.modes import MODES

__all__ = ["Argument", "Command", "Option", "describe", "render_all"]

# Choices for options that take a plain string but accept only these words.
KNOWN_CHOICES: Mapping[str, tuple[str, ...]] = {"--mode": MODES}
# Options whose value is a folder, when their type does not say so.
FOLDER_OPTIONS = ("--cwd",)


@dataclass(frozen=True)
class Option:
    names: tuple[str, ...]  # long names first: ("--output", "-o")
    help: str
    takes_value: bool
    metavar: str = ""  # "MODE", "ID", "PATH": how the man page names the value
    choices: tuple[str, ...] = ()
    completes: str = ""  # "", "file" or "folder": what a shell offers for the value

    @property
    def long(self) -> str:
        return next((n for n in self.names if n.startswith("--")), self.names[0])


@dataclass(frozen=True)
class Argument:
    name: str  # as shown: PROMPT, ID, NAME
    help: str
    required: bool
    many: bool  # takes several words


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]  # () for `agent`, ("sessions", "show") for `agent sessions show`
    summary: str  # the first line of its help
    help: str
    epilog: str
    options: tuple[Option, ...]
    arguments: tuple[Argument, ...]
    subcommands: tuple[Command, ...] = ()
    runs_alone: bool = False  # a group that does something without a subcommand

    @property
    def name(self) -> str:
        return " ".join(("agent", *self.path))

    def walk(self) -> list[Command]:
        """This command and every command below it, depth first."""
        return [self, *(c for sub in self.subcommands for c in sub.walk())]


HELP_OPTION = Option(("--help", "-h"), "Show the help and exit.", takes_value=False)


def describe(command: Any, path: tuple[str, ...] = ()) -> Command:
    """The `Command` tree of a click command (or group), hidden parts left out."""
    options, arguments = [], []
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        if param.param_type_name == "argument":
            arguments.append(_argument(param))
        else:
            options.append(_option(param))
    subcommands = [
        describe(sub, (*path, name))
        for name, sub in getattr(command, "commands", {}).items()
        if not getattr(sub, "hidden", False)
    ]
    help_text = (command.help or "").strip()
    return Command(
        path=path,
        summary=help_text.split("\n\n")[0].replace("\n", " "),
        help=help_text,
        epilog=(command.epilog or "").strip(),
        options=(*options, HELP_OPTION),
        arguments=tuple(arguments),
        subcommands=tuple(subcommands),
        runs_alone=bool(getattr(command, "invoke_without_command", False)),
    )


def _option(param: Any) -> Option:
    names = tuple(
        sorted([*param.opts, *param.secondary_opts], key=lambda n: not n.startswith("--"))
    )
    takes_value = not (param.is_flag or getattr(param, "count", False))
    long = next((n for n in names if n.startswith("--")), names[0])
    choices = tuple(getattr(param.type, "choices", ()) or KNOWN_CHOICES.get(long, ()))
    type_name = type(param.type).__name__.lower()
    completes = ""
    if takes_value and (long in FOLDER_OPTIONS or "path" in type_name):
        completes = "folder" if long in FOLDER_OPTIONS else "file"
    return Option(
        names,
        (param.help or "").strip(),
        takes_value,
        _metavar(param, long, completes) if takes_value else "",
        choices,
        completes,
    )


def _metavar(param: Any, long: str, completes: str) -> str:
    """How the man page names an option's value: its own metavar, else by its type."""
    if param.metavar:
        return param.metavar
    if completes:
        return completes.upper()
    if "int" in type(param.type).__name__.lower():
        return "N"
    return long.lstrip("-").upper().replace("-", "_")


def _argument(param: Any) -> Argument:
    name = (param.metavar or param.name or "ARG").upper()
    return Argument(
        name, (getattr(param, "help", "") or "").strip(), param.required, param.nargs != 1
    )


def render_all(tree: Command, version: str) -> dict[str, str]:
    """Every generated file by its path in the repository."""
    from docs_gen import completions, manpage

    return {
        "completions/agent.bash": completions.bash(tree),
        "completions/agent.zsh": completions.zsh(tree),
        "completions/agent.fish": completions.fish(tree),
        "man/agent.1": manpage.render(tree, version),
    }
