"""Decide whether a shell command provably only reads inside the workspace.

``is_read_only`` is a security boundary: a True answer lets the agent run the command
(``/bin/sh -c COMMAND`` with cwd = workspace, sh being dash or bash) without asking the
person.  So everything here is an *allowlist* -- of characters, programs and each program's
options.  Denylists fail open: a new option (``rg --hostname-bin``), a GNU long-option
abbreviation (``sort --outp=x``), a file named ``-ofile`` picked up by a glob, or a
BSD-vs-GNU difference in argument parsing each slips past a list of known-bad things.  An
allowlist fails closed: whatever was not reasoned about is "not read-only" and the person
is asked.  Saying False too often is a nuisance; saying True once too often is a bug.

Layers, each able to reject on its own:

1. Characters: printable ASCII only; ``$ ` ; & < >`` nowhere, not even quoted; unquoted
   text uses a small safe alphabet (so no ``\\ # ~ ! { } ( ) [ ]``, tabs or newlines).
2. A tiny tokenizer for that subset of sh (quote-aware, so we know which ``*`` are globs),
   cross-checked against ``shlex``.  ``|`` is the only operator; the command word of each
   stage must be an unquoted program name from ``PROGRAMS``.  ``git`` never is: a repo's
   config can run programs even for ``git status``.
3. Unquoted ``*`` and ``?`` (last path component only) are expanded here the way sh does.
   A match that is not a plain name (``-ofile``, ``--pre=sh``, spaces, non-ASCII) rejects.
4. Every argument, whatever role we think it plays, must stay inside the workspace: no
   leading ``/``, ``\\`` or ``~``, no ``..`` component (``\\`` counts as a separator: Cygwin,
   MSYS and Git Bash take Windows paths), no drive (``C:``, ``c:x``, ``--opt=D:/y``,
   ``a,E:\\z``), realpath inside the workspace.  The value after ``=`` in ``--opt=VALUE``
   is checked the same way, and an attached short-option value (``-eC:/x``) for a drive.
5. Per-program option tables.  Options must come before operands: BSD getopt stops at the
   first operand while GNU permutes, and POSIX order makes both read the line alike.
   Combined short flags are checked letter by letter; long options must match exactly
   (never a GNU abbreviation); a separate option value may not look like an option.
6. ``PATH`` must hold only absolute directories outside the workspace, or the repo could
   ship its own ``cat``.  ``rg`` reads options from ``RIPGREP_CONFIG_PATH`` (``--pre``
   among them; a relative path is the repo's own file), so with it set ``rg`` needs
   ``--no-config``.
"""

from __future__ import annotations

import os
import re
import shlex
import string
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

MAX_COMMAND_LENGTH = 2000

_FORBIDDEN_ANYWHERE = frozenset("$`;&<>")
_UNQUOTED_SAFE = frozenset(string.ascii_letters + string.digits + "_./=,:+@%-*?")
_UNSAFE_IN_DOUBLE_QUOTES = frozenset('\\!"')
_GLOB_CHARS = frozenset("*?")
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.,+@%=:-]*")
# A Windows drive where a path may start: the argument itself, after `=` (--opt=C:/x), in a
# list (a,C:/x), after `@` (response files). Not after `-`: `cut -d:` names no drive.
_DRIVE = re.compile(r"(?:^|[=,:@\s])[A-Za-z]:")
_SEPARATOR = re.compile(r"[/\\]")
# `..`, and what Windows trims to it: trailing dots and spaces (`... `, `.. `).
_PARENT = re.compile(r"[. ]*\.\.[. ]*")
_COUNT = re.compile(r"[+-]?[0-9]+[A-Za-z]*")  # head/tail -n/-c values; rejects `tail -cf`

Word = list[tuple[str, bool]]  # (character, was it quoted); ("", True) marks quotes


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class Program:
    """What one program may be given without it writing or running anything."""

    flags: str = ""  # short options without a value
    values: str = ""  # short options that take a value (-n5 or -n 5)
    long_flags: frozenset[str] = frozenset()
    long_values: frozenset[str] = frozenset()  # --opt=V or --opt V
    long_optional: frozenset[str] = frozenset()  # --opt or --opt=V; never takes the next word
    numeric: bool = False  # -NUM shorthand (head -5)
    value_pattern: re.Pattern[str] | None = None  # every option value must match this
    permute: bool = False  # options may follow operands (rg: one implementation everywhere)
    attached: bool = True  # -L2 style values (tree has its own parser: only -L 2)
    any_args: bool = False  # echo: arguments are only printed
    max_operands: int | None = None
    operands_ok: Callable[[list[str], str], bool] | None = None


def _diff_operands_ok(operands: list[str], ws: str) -> bool:
    # With a directory operand diff compares the files inside it, following their symlinks.
    return len(operands) == 2 and all(
        op == "-" or os.path.isfile(os.path.join(ws, op)) for op in operands
    )


def _tail_operands_ok(operands: list[str], ws: str) -> bool:
    # GNU tail reads `tail +5f FILE` as the obsolete form of `tail -n +5 -f FILE`.
    return not any(op.startswith("+") for op in operands)


_HEAD = Program(
    flags="qv",
    values="nc",
    long_flags=_words("--quiet --silent --verbose"),
    long_values=_words("--lines --bytes"),
    numeric=True,
    value_pattern=_COUNT,
)

# Not here on purpose: git (repo config runs programs), xargs/env/sh/bash (run programs),
# awk/sed (system(), -i), tee (writes), less/more (spawn editors), printf (bash -v).
PROGRAMS: dict[str, Program] = {
    "cat": Program(
        flags="AbeEnstTuv",  # not BSD -l (locks stdout)
        long_flags=_words(
            "--number --number-nonblank --squeeze-blank --show-all --show-ends "
            "--show-tabs --show-nonprinting"
        ),
    ),
    "head": _HEAD,
    "tail": replace(_HEAD, operands_ok=_tail_operands_ok),  # no -f/-F/--follow
    "wc": Program(flags="clmwL", long_flags=_words("--bytes --chars --lines --words")),
    "ls": Program(
        flags="1aAbBcCdfFghiklmnopqrRsStuUvx",  # not -L/-H (follow), not -D/-I/-T/-w (values)
        long_flags=_words(
            "--all --almost-all --recursive --reverse --human-readable --classify "
            "--directory --inode --size --numeric-uid-gid --group-directories-first"
        ),
        long_values=_words("--sort"),
        long_optional=_words("--color"),
    ),
    "grep": Program(
        # not -R (follows symlinks), -f (pattern file), -d/-D, BSD -O/-S/-p/-Z/-z;
        # nor -L: harmless here, but it means "follow symlinks" to too many other tools
        flags="EFGPiyvwxcloqsbHhnTrIaU0123456789",
        values="emABC",
        long_flags=_words(
            "--extended-regexp --fixed-strings --basic-regexp --perl-regexp --ignore-case "
            "--no-ignore-case --invert-match --word-regexp --line-regexp --count "
            "--files-with-matches --files-without-match --only-matching --quiet --silent "
            "--no-messages --byte-offset --with-filename --no-filename --line-number "
            "--initial-tab --recursive --text --null --line-buffered"
        ),
        long_values=_words(
            "--regexp --max-count --after-context --before-context --include --exclude "
            "--exclude-dir --label --binary-files"
        ),
        long_optional=_words("--color --colour"),
    ),
    "rg": Program(
        # not -L/--follow, -z/--search-zip, --pre, -f/--file, --ignore-file, --hostname-bin
        flags="abcFHIilNnoPpqSsUuvwx0",
        values="ABCdegmMrtT",
        long_flags=_words(
            "--ignore-case --smart-case --case-sensitive --fixed-strings --word-regexp "
            "--line-regexp --invert-match --count --count-matches --files-with-matches "
            "--files-without-match --files --line-number --no-line-number --with-filename "
            "--no-filename --only-matching --quiet --hidden --no-ignore --no-ignore-vcs "
            "--multiline --pcre2 --heading --no-heading --json --vimgrep --column --stats "
            "--text --null --no-messages --type-list --pretty --trim --unrestricted "
            "--no-config --byte-offset"
        ),
        long_values=_words(
            "--after-context --before-context --context --max-count --max-depth --glob "
            "--iglob --type --type-not --regexp --replace --color --colors --sort --sortr "
            "--max-columns --max-filesize"
        ),
        permute=True,
    ),
    "pwd": Program(flags="LP", max_operands=0),
    "sort": Program(
        # not -o/--output, -T, --compress-program, --files0-from, --random-source
        flags="bcCdfghiMmnRrsuVz",
        values="ktS",
        long_flags=_words(
            "--numeric-sort --general-numeric-sort --human-numeric-sort --reverse --unique "
            "--ignore-case --ignore-leading-blanks --dictionary-order --ignore-nonprinting "
            "--month-sort --version-sort --random-sort --stable --merge --zero-terminated"
        ),
        long_values=_words("--key --field-separator --buffer-size"),
        long_optional=_words("--check"),
    ),
    "uniq": Program(  # a second operand is the OUTPUT file
        flags="cdDiuz",
        values="fsw",
        long_flags=_words("--count --repeated --ignore-case --unique --zero-terminated"),
        long_values=_words("--skip-fields --skip-chars --check-chars"),
        long_optional=_words("--all-repeated --group"),
        max_operands=1,
    ),
    "cut": Program(
        flags="nsz",
        values="bcdf",
        long_flags=_words("--complement --only-delimited --zero-terminated"),
        long_values=_words("--bytes --characters --fields --delimiter --output-delimiter"),
    ),
    "tr": Program(
        flags="cCdst",
        long_flags=_words("--complement --delete --squeeze-repeats --truncate-set1"),
    ),
    "stat": Program(  # not -L (follow), not -f (GNU flag, BSD value)
        flags="t",
        values="c",
        long_flags=_words("--terse"),
        long_values=_words("--format --printf"),
    ),
    "du": Program(  # not -L/-H/-D (follow), -X/--exclude-from, --files0-from
        flags="abchkmsx",
        values="d",
        long_flags=_words(
            "--all --total --human-readable --summarize --one-file-system --apparent-size"
        ),
        long_values=_words("--max-depth"),
    ),
    "file": Program(  # not -z/-Z (decompressors), -m, -f, -C (writes magic.mgc), -L, -s, -p
        flags="bhikNnr",
        long_flags=_words(
            "--brief --mime --mime-type --mime-encoding --no-dereference --keep-going "
            "--raw --no-pad --no-buffer"
        ),
    ),
    "tree": Program(  # not -o (writes), -l (follows), -R/-H/-T (HTML), --fromfile
        flags="adfixqNQpugshDFvtcUrnCJ",
        values="LPI",
        long_flags=_words("--noreport --dirsfirst --prune --du --ignore-case --matchdirs"),
        attached=False,
    ),
    "diff": Program(  # not -l/--paginate (runs pr), -r (follows symlinks), -x/-X/-S
        flags="abBcdeEinNpqstTuwy",
        values="CUWIFLD",
        long_flags=_words(
            "--brief --report-identical-files --ignore-case --ignore-all-space "
            "--ignore-space-change --ignore-blank-lines --text --side-by-side "
            "--strip-trailing-cr --minimal --new-file --expand-tabs --initial-tab "
            "--suppress-common-lines --show-c-function --ed --normal --rcs"
        ),
        long_values=_words("--label --width --ignore-matching-lines"),
        long_optional=_words("--unified --context --color"),
        operands_ok=_diff_operands_ok,
    ),
    "nl": Program(flags="p", values="bdfhilnsvw"),
    "echo": Program(any_args=True),  # a shell builtin; prints its arguments, nothing else
    "basename": Program(flags="az", values="s"),
    "dirname": Program(flags="z"),
    "realpath": Program(flags="emqsz"),
}

# find's expression language, allowlisted: no -exec*/-ok*/-delete/-fprint*/-fls/-follow.
_FIND_NULLARY = _words(
    "-print -print0 -ls -prune -quit -empty -true -false -depth -xdev -mount -readable "
    "-writable -executable -nouser -nogroup -noleaf -daystart -not -a -and -o -or ( ) ! ,"
)
_FIND_UNARY = _words(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -type -size "
    "-mtime -mmin -atime -amin -ctime -cmin -perm -user -group -uid -gid -links -inum "
    "-maxdepth -mindepth -newer -samefile -lname -ilname -printf"
)


def is_read_only(command: str, workspace: Path) -> bool:
    """True only if ``sh -c COMMAND`` in ``workspace`` provably only reads inside it."""
    try:
        return _is_read_only(command, os.path.realpath(workspace))
    except Exception:  # any surprise means "not proven"
        return False


def _is_read_only(command: str, ws: str) -> bool:
    if not isinstance(command, str) or not 0 < len(command) <= MAX_COMMAND_LENGTH:
        return False
    if any(not " " <= c <= "~" or c in _FORBIDDEN_ANYWHERE for c in command):
        return False
    stages = _tokenize(command)
    if stages is None or not _shlex_agrees(command, stages):
        return False
    if not os.path.isdir(ws) or not _search_path_is_trusted(ws):
        return False
    return all(_stage_is_read_only(stage, ws) for stage in stages)


def _tokenize(command: str) -> list[list[Word]] | None:
    """Split into pipeline stages of words, or None if outside our subset of sh."""
    stages: list[list[Word]] = [[]]
    word: Word | None = None
    i = 0
    while i < len(command):
        c = command[i]
        if c in "'\"":
            end = command.find(c, i + 1)
            body = command[i + 1 : end]
            if end < 0 or (c == '"' and any(ch in _UNSAFE_IN_DOUBLE_QUOTES for ch in body)):
                return None
            # ("", True) keeps even an empty '' visible: quoting in a command word rejects
            word = (word or []) + [(ch, True) for ch in body] + [("", True)]
            i = end + 1
            continue
        if c in " |":
            if word is not None:
                stages[-1].append(word)
                word = None
            if c == "|":
                stages.append([])
        elif c in _UNQUOTED_SAFE:
            word = (word or []) + [(c, False)]
        else:
            return None
        i += 1
    if word is not None:
        stages[-1].append(word)
    return None if any(not stage for stage in stages) else stages


def _text(word: Word) -> str:
    return "".join(c for c, _ in word)


def _shlex_agrees(command: str, stages: list[list[Word]]) -> bool:
    """Second opinion from the stdlib tokenizer; any disagreement means we are unsure."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    expected: list[str] = []
    for n, stage in enumerate(stages):
        expected += ["|"] * (n > 0) + [_text(w) for w in stage]
    return list(lexer) == expected


def _is_within(path: str, ws: str) -> bool:
    return os.path.commonpath([path, ws]) == ws


def _search_path_is_trusted(ws: str) -> bool:
    """A relative or in-workspace PATH entry would let the repo shadow `cat`."""
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isabs(entry) or _is_within(os.path.realpath(entry), ws):
            return False
    return True


def _stays_inside(arg: str, ws: str) -> bool:
    if _DRIVE.search(arg):
        return False
    paths = [arg, arg.partition("=")[2]] if arg.startswith("-") else [arg]
    if any(_leads_out(path) for path in paths):
        return False
    return _is_within(os.path.realpath(os.path.join(ws, arg)), ws)


def _leads_out(path: str) -> bool:
    """Absolute (`/x`, `\\x`, `\\\\server\\share`), home (`~`) or up (`..`, also `a\\..`)."""
    if path.startswith(("/", "\\", "~")):
        return True
    return any(_PARENT.fullmatch(part) for part in _SEPARATOR.split(path))


def _names_a_drive(value: str) -> bool:
    return _DRIVE.match(value) is not None or value.startswith("\\")


def _expand(word: Word, ws: str) -> list[str] | None:
    """The arguments sh makes of WORD (pathname expansion), or None if unsure."""
    value = _text(word)
    if not any(c in _GLOB_CHARS and not quoted for c, quoted in word):
        return [value]
    slash = max((i for i, (c, _) in enumerate(word) if c == "/"), default=-1)
    head, last = word[: slash + 1], word[slash + 1 :]
    directory = _text(head)
    if any(c in _GLOB_CHARS and not q for c, q in head) or _text(last).startswith("."):
        return None  # globbed directories; `.*` matches `..` in dash
    exact = re.compile("".join(_glob_regex(c, q, ".") for c, q in last), re.DOTALL)
    loose = re.compile("".join(_glob_regex(c, q, ".*") for c, q in last), re.DOTALL)
    matches = []
    for name in os.listdir(os.path.join(ws, directory)):
        # `?` is one character in the locale: a byte in dash, a code point in bash. For non-ASCII
        # names match loosely (`?` as `.*`) and refuse any match.
        pattern = exact if name.isascii() and name.isprintable() else loose
        if name.startswith(".") or not pattern.fullmatch(name):
            continue  # sh never matches a leading dot with `*` or `?`
        if not _PLAIN_NAME.fullmatch(name):
            return None  # -ofile, --pre=sh, spaces, odd bytes
        matches.append(directory + name)
    return sorted(matches) or [value]  # no match: sh passes the word unchanged


def _glob_regex(c: str, quoted: bool, question: str) -> str:
    if not quoted and c == "*":
        return ".*"
    if not quoted and c == "?":
        return question
    return re.escape(c)


def _stage_is_read_only(stage: list[Word], ws: str) -> bool:
    command_word, *rest = stage
    name = _text(command_word)
    if any(quoted for _, quoted in command_word) or (name != "find" and name not in PROGRAMS):
        return False
    args: list[str] = []
    for word in rest:
        expanded = _expand(word, ws)
        if expanded is None:
            return False
        args += expanded
    if not all(_stays_inside(arg, ws) for arg in args):
        return False
    if name == "find":
        return _find_is_read_only(args)
    options = args[: args.index("--")] if "--" in args else args
    if name == "rg" and os.environ.get("RIPGREP_CONFIG_PATH") and "--no-config" not in options:
        return False  # the config file could say --pre or --search-zip
    return _arguments_ok(PROGRAMS[name], args, ws)


def _arguments_ok(prog: Program, args: list[str], ws: str) -> bool:
    if prog.any_args:
        return True
    operands: list[str] = []
    only_operands = False
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if only_operands or arg == "-" or not arg.startswith("-"):
            operands.append(arg)
        elif operands and not prog.permute:
            return False  # GNU would parse it as an option, BSD as a file
        elif arg == "--":
            only_operands = True
        else:
            width = _option_width(prog, arg, args[i:])
            if width is None:
                return False
            i += width
    if prog.max_operands is not None and len(operands) > prog.max_operands:
        return False
    return prog.operands_ok is None or prog.operands_ok(operands, ws)


def _option_width(prog: Program, arg: str, following: list[str]) -> int | None:
    """How many following words option ARG takes (0 or 1); None if not allowed."""
    if arg.startswith("--"):
        name, eq, value = arg.partition("=")
        if name in prog.long_optional or (name in prog.long_flags and not eq):
            return 0
        if name in prog.long_values:
            return _value_width(prog, value if eq else None, following)
        return None
    if prog.numeric and arg[1:].isdigit():
        return 0
    for j, c in enumerate(arg[1:], start=2):
        if c in prog.values:
            attached = arg[j:]
            if attached and (not prog.attached or _names_a_drive(attached)):
                return None
            return _value_width(prog, attached or None, following)
        if c not in prog.flags:
            return None
    return 0


def _value_width(prog: Program, attached: str | None, following: list[str]) -> int | None:
    if attached is not None:
        value, width = attached, 0
    elif following and _separate_value_ok(following[0]):
        value, width = following[0], 1
    else:
        return None
    if prog.value_pattern is not None and not prog.value_pattern.fullmatch(value):
        return None
    return width


def _separate_value_ok(value: str) -> bool:
    # Were some implementation to take no value here, an option-like word would be an option.
    return value == "-" or not value.startswith("-") or value[1:2].isdigit()


def _find_is_read_only(args: list[str]) -> bool:
    i = 0
    while i < len(args) and args[i] == "-P":  # never follow symlinks (the default)
        i += 1
    while i < len(args) and not (args[i].startswith("-") or args[i] in _FIND_NULLARY):
        i += 1  # starting points; already checked to stay inside
    while i < len(args):
        arg = args[i]
        i += 1
        if arg in _FIND_UNARY:
            if i >= len(args) or not _separate_value_ok(args[i]):
                return False
            i += 1
        elif arg not in _FIND_NULLARY:
            return False
    return True
