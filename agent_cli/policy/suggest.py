"""The command patterns "always" offers (SPEC §8): one per simple command of a line.

Each is generalised only as far as it is safe to. By default: the program and its
first argument (`pytest tests *`). For an interpreter, runner or wrapper: from what
it runs (`python3 -m pytest *`, `python3 tool.py *`, `npx eslint *`, `uv run pytest *`,
`npm run build *`, `sudo apt-get *`, `env FOO=1 make *`). For inline code (`python3 -c`,
`node -e`, `bash -c`, `perl -e`, `eval`, `ssh HOST CMD`...) and for any option we do
not know the meaning of, the exact command: reading an option that takes a value as
one that does not would put its value where the program is, and `*` over the rest.
Words are written as `shell_line` shows them, so the pattern matches the same command
again however it was quoted, and only what it shows.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from agent_cli.policy import shell_line
from agent_cli.policy.shell_line import ShellWord

# (words kept as they are, whether ` *` follows even when no word does); None: exactly
Head = tuple[int, bool] | None
_MAX_DEPTH = 8  # sudo env nice ... levels followed


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class Options:
    """The options of an interpreter, runner or wrapper, as far as they are understood."""

    flags: str = ""  # short options without a value
    values: str = ""  # short options with a value (-Xv or -X v)
    inline: str = ""  # short options whose value is code: the command is offered exactly
    module: str = ""  # short options naming what runs (python -m): generalise from it
    long_flags: frozenset[str] = frozenset()  # --opt, or --opt=V, never the next word
    long_values: frozenset[str] = frozenset()  # --opt=V or --opt V
    long_inline: frozenset[str] = frozenset()
    long_module: frozenset[str] = frozenset()
    plus: bool = False  # +o / +x are options too (sh)


_PYTHON = re.compile(r"(?:python|pypy)[0-9.]*|py")
_PYTHON_OPTIONS = Options(
    flags="bBdEhiIOPqsSuvVx",
    values="WX",
    inline="c",
    module="m",
    long_flags=_words("--help --version"),
    long_values=_words("--check-hash-based-pycs"),
)
_NODE_OPTIONS = Options(
    values="rC",
    inline="ep",
    long_flags=_words(
        "--inspect --inspect-brk --trace-warnings --enable-source-maps --no-warnings "
        "--no-deprecation --throw-deprecation --expose-gc --test --watch "
        "--experimental-vm-modules --experimental-strip-types --max-old-space-size"
    ),
    long_values=_words("--require --import --loader --experimental-loader --conditions"),
    long_inline=_words("--eval --print"),
)
_SHELL_OPTIONS = Options(
    flags="abefhkmnptuvxBCHPlrE",  # not -s (commands from stdin) nor -i
    values="o",
    inline="c",
    long_flags=_words("--norc --noprofile --login --posix --restricted --noediting"),
    long_values=_words("--rcfile --init-file"),
    plus=True,
)
_NPX_OPTIONS = Options(
    flags="yq",
    values="p",
    inline="c",
    long_flags=_words("--yes --no --quiet --prefer-offline --ignore-existing"),
    long_values=_words("--package"),
    long_inline=_words("--call"),
)
_UVX_OPTIONS = Options(
    flags="qn",
    values="p",
    long_flags=_words("--quiet --isolated --offline --no-cache --refresh"),
    long_values=_words("--from --with --with-editable --python --index --default-index"),
)
_BUNX_OPTIONS = Options(values="p", long_flags=_words("--bun"), long_values=_words("--package"))
_NONE = Options()
_CONDA_OPTIONS = Options(
    values="np",
    long_flags=_words("--no-capture-output --live-stream"),
    long_values=_words("--name --prefix"),
)
_INTERPRETERS: dict[str, Options] = {
    **dict.fromkeys(("node", "nodejs", "bun", "ts-node", "tsx"), _NODE_OPTIONS),
    **dict.fromkeys(("sh", "bash", "dash", "ksh", "mksh", "zsh", "ash"), _SHELL_OPTIONS),
    "fish": Options(long_flags=_words("--no-config --login"), inline="cC"),
    # Interpreters taken without options: any option before the script asks for exactly.
    **dict.fromkeys(
        ("perl", "ruby", "lua", "luajit", "julia", "elixir", "racket"), Options(inline="eE")
    ),
    **dict.fromkeys(("php",), Options(inline="rR")),
    **dict.fromkeys(("Rscript", "R", "groovy"), Options(inline="e")),
    **dict.fromkeys(("guile",), Options(inline="ce")),
}
# Programs that run another command given by their remaining words.
_WRAPPERS: dict[str, tuple[Options, int]] = {  # options, operands before the command
    "sudo": (
        Options(
            flags="AbEHknPSBN",  # not -s/-i (a shell joins the words), -e, -l, -v
            values="ugCDhprtTRU",
            long_flags=_words("--preserve-env --non-interactive --set-home --background --stdin"),
            long_values=_words("--user --group --chdir --chroot --prompt --close-from --host"),
        ),
        0,
    ),
    "doas": (Options(flags="n", values="uC"), 0),
    "env": (
        Options(
            flags="i0v",
            values="uCaP",
            inline="S",  # -S splits a string into a command
            long_flags=_words("--ignore-environment --null --debug"),
            long_values=_words("--unset --chdir --argv0"),
            long_inline=_words("--split-string"),
        ),
        0,
    ),
    "nice": (Options(flags="0123456789", values="n", long_values=_words("--adjustment")), 0),
    "nohup": (_NONE, 0),
    "time": (
        Options(
            flags="pvqa",
            values="fo",
            long_flags=_words("--portability --verbose --quiet --append"),
            long_values=_words("--format --output"),
        ),
        0,
    ),
    "timeout": (
        Options(
            flags="v",
            values="sk",
            long_flags=_words("--preserve-status --foreground --verbose"),
            long_values=_words("--signal --kill-after"),
        ),
        1,  # the duration
    ),
    "stdbuf": (Options(values="ioe", long_values=_words("--input --output --error")), 0),
    "ionice": (Options(flags="t", values="cn", long_values=_words("--class --classdata")), 0),
    "xargs": (
        Options(
            flags="0rtpxo",
            values="IndPELsa",
            long_flags=_words("--null --no-run-if-empty --verbose --interactive --exit"),
            long_values=_words(
                "--arg-file --delimiter --max-args --max-procs --max-chars --max-lines"
            ),
        ),
        0,
    ),
    "command": (Options(flags="p"), 0),  # not -v/-V: they only say what a name is
    "exec": (Options(flags="cl", values="a"), 0),
    "builtin": (_NONE, 0),
    "setsid": (Options(flags="cfw", long_flags=_words("--ctty --fork --wait")), 0),
    "busybox": (_NONE, 0),  # busybox sh -c ...
}
# `npx eslint …`, `uv run pytest …`: what follows the options is a command.
_RUNNERS: dict[tuple[str, ...], Options] = {
    ("npx",): _NPX_OPTIONS,
    ("pnpx",): _NPX_OPTIONS,
    ("npm", "exec"): _NPX_OPTIONS,
    ("bunx",): _BUNX_OPTIONS,
    ("bun", "x"): _BUNX_OPTIONS,
    ("uvx",): _UVX_OPTIONS,
    ("uv", "tool", "run"): _UVX_OPTIONS,
    ("uv", "run"): Options(
        flags="qv",
        values="p",
        module="m",
        long_flags=_words(
            "--frozen --locked --no-sync --isolated --no-project --all-extras --all-packages "
            "--all-groups --no-dev --active --exact --quiet --verbose --offline --no-cache "
            "--no-editable --script"
        ),
        long_values=_words(
            "--with --with-editable --with-requirements --python --project --directory "
            "--package --extra --group --only-group --no-group --env-file --index"
        ),
        long_module=_words("--module"),
    ),
    ("pnpm", "exec"): _NONE,
    ("pnpm", "dlx"): Options(
        long_values=_words("--package"), inline="c", long_inline=_words("--shell-mode")
    ),
    ("yarn", "exec"): _NONE,
    ("yarn", "dlx"): Options(values="p", long_values=_words("--package")),
    ("pipx", "run"): Options(long_flags=_words("--no-cache"), long_values=_words("--spec")),
    **{(tool, "run"): _NONE for tool in ("poetry", "pdm", "hatch", "pipenv", "rye", "pixi")},
    ("bundle", "exec"): _NONE,
    **{(tool, "run"): _CONDA_OPTIONS for tool in ("conda", "mamba", "micromamba")},
}
# `npm run build …`: what follows is the name of a script (no options understood before it).
_SCRIPT_RUNNERS = frozenset(
    {("npm", "run"), ("npm", "run-script"), ("pnpm", "run"), ("yarn", "run"), ("bun", "run")}
    | {("deno", "task"), ("go", "run")}
)
_DENO_RUN_OPTION = re.compile(r"-A|--allow-[a-z-]+(?:=\S*)?|-q|--quiet|--no-prompt|--watch")
_GIT_OPTIONS = Options(
    flags="pP",
    values="Cc",  # kept exactly: `git -c core.pager=… log` is not `git log`
    long_flags=_words(
        "--no-pager --paginate --bare --no-replace-objects --literal-pathspecs --glob-pathspecs "
        "--noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice"
    ),
    long_values=_words("--git-dir --work-tree --namespace --config-env"),
)
# Commands always offered exactly: their arguments are code or a command line in one word.
# (GNU sed reads options after its script too: `sed s/a/b/ -e '1e rm x'` runs a command.)
_EXACT = _words(
    "eval ssh su watch parallel script expect pwsh powershell osascript nix-shell sed gsed "
    "sqlite3"  # its .shell and .system commands
)
# A first argument that usually brings code with it (psql -c, mysql -e, vim -c, gdb -ex,
# make --eval): whatever the program, the command is offered exactly.
_INLINE_OPTION = re.compile(r"-(?:c|e|ex)|--(?:eval|exec|execute|command|call)(?:=.*)?", re.DOTALL)
# Programs whose first operand is their code: generalised past it only when it comes first
# (`awk '{print}' *`), never behind an option or a wrapper.
_SCRIPTED = _words("awk gawk mawk nawk")


def command_patterns(command: str) -> list[str]:
    """One pattern per simple command of COMMAND; [] if no rule could allow the line."""
    commands = shell_line.parse(command)
    if commands is None:
        return []
    return list(dict.fromkeys(_pattern(words) for words in commands))  # in order, once each


def _pattern(words: list[ShellWord]) -> str:
    literal = [word.literal for word in words]
    head = _head(words, nested=False, depth=0)
    if head is None or (head[0] >= len(words) and not head[1]):
        return " ".join(literal)
    return " ".join([*literal[: head[0]], "*"])


def _head(words: list[ShellWord], nested: bool, depth: int) -> Head:
    """How much of WORDS a rule keeps: env assignments, then what the program says."""
    start = 0
    while start < len(words) and words[start].assigns:
        start += 1
    if start == len(words) or depth > _MAX_DEPTH:
        return None
    head = _program_head(words[start:], nested, depth)
    return None if head is None else (start + head[0], head[1])


def _program_head(words: list[ShellWord], nested: bool, depth: int) -> Head:
    program = words[0]
    name = os.path.basename(program.text)
    if program.shown != program.literal or not name or name[0] == "-" or "=" in name:
        return None  # a glob, an option or an assignment where the program should be
    for size in range(min(3, len(words)), 0, -1):
        key = (name, *(word.text for word in words[1:size]))
        if key in _RUNNERS:
            return _runner(words, size, _RUNNERS[key], depth)
        if key in _SCRIPT_RUNNERS:
            return _script(words, size, _NONE)
    if name in _EXACT:
        return None
    if _PYTHON.fullmatch(name):
        return _script(words, 1, _PYTHON_OPTIONS)
    if name in _INTERPRETERS:
        return _script(words, 1, _INTERPRETERS[name])
    if name in _WRAPPERS:
        return _wrapped(words, *_WRAPPERS[name], depth)
    if name == "deno":
        return _deno(words)
    if name == "git":
        found = _options(words, 1, _GIT_OPTIONS)
        if found is None or found[1] or found[0] >= len(words):
            return None
        return found[0] + 1, False  # through the subcommand: `git log *`
    first = words[1].text if len(words) > 1 else ""
    if _INLINE_OPTION.fullmatch(first) or (name in _SCRIPTED and (nested or first[:1] == "-")):
        return None
    # A wrapper's command: the program, whatever its arguments. Else the program and its first.
    return (1, True) if nested else (2, False)


def _script(words: list[ShellWord], start: int, options: Options) -> Head:
    """An interpreter: through its module or script; exactly for inline code or stdin."""
    found = _options(words, start, options)
    if found is None:
        return None
    end, module = found
    if module:
        return end, True
    if end >= len(words) or words[end].text.startswith("-"):
        return None  # no script: a REPL, code from stdin, or `--` then an option-like name
    return end + 1, True


def _runner(words: list[ShellWord], start: int, options: Options, depth: int) -> Head:
    found = _options(words, start, options)
    if found is None:
        return None
    end, module = found
    if module:
        return end, True
    return _inner(words, end, depth)


def _wrapped(words: list[ShellWord], options: Options, operands: int, depth: int) -> Head:
    found = _options(words, 1, options)
    if found is None or found[1]:
        return None
    end = found[0] + operands
    if os.path.basename(words[0].text) in ("sudo", "env"):  # NAME=VALUE, quoted or not
        while end < len(words) and "=" in words[end].text:
            end += 1
    return _inner(words, end, depth)


def _inner(words: list[ShellWord], start: int, depth: int) -> Head:
    if start >= len(words):
        return None
    inner = _head(words[start:], nested=True, depth=depth + 1)
    return None if inner is None else (start + inner[0], inner[1])


def _deno(words: list[ShellWord]) -> Head:
    if len(words) < 2 or words[1].text != "run":
        return None if len(words) > 1 and words[1].text == "eval" else (2, False)
    end = 2
    while end < len(words) and _DENO_RUN_OPTION.fullmatch(words[end].text):
        end += 1
    if end >= len(words) or words[end].text.startswith("-"):
        return None
    return end + 1, True


def _options(words: list[ShellWord], i: int, spec: Options) -> tuple[int, bool] | None:
    """Read the options from I: (the first operand's index, False), or (just past the
    module's name, True) for a module option; None for inline code or an unknown option."""
    while i < len(words):
        word = words[i].text
        if word == "--":
            return i + 1, False
        if word == "-" or word[:1] not in ("-", "+" if spec.plus else "-"):
            return i, False
        if word.startswith("--"):
            step = _long_option(word, spec, has_next=i + 1 < len(words))
            if step is None:
                return None
            if word.partition("=")[0] in spec.long_module:
                return i + step, True
            i += step
            continue
        step, module = _short_options(word, spec, has_next=i + 1 < len(words))
        if step is None:
            return None
        if module:
            return i + step, True
        i += step
    return i, False


def _long_option(word: str, spec: Options, has_next: bool) -> int | None:
    """How many words --OPTION takes (1 or 2); None if it is code or unknown."""
    name, eq, _ = word.partition("=")
    if name in spec.long_inline:
        return None
    if name in spec.long_flags:
        return 1
    if name in spec.long_values or name in spec.long_module:
        return 1 if eq else 2 if has_next else None
    return None


def _short_options(word: str, spec: Options, has_next: bool) -> tuple[int | None, bool]:
    """How many words a cluster such as -uBW takes, and whether it names a module."""
    for j, letter in enumerate(word[1:], start=2):
        if letter in spec.inline:
            return None, False
        if letter in spec.values or letter in spec.module:
            step = 1 if j < len(word) else 2 if has_next else None
            return step, letter in spec.module
        if letter not in spec.flags:
            return None, False
    return 1, False
