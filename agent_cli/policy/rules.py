"""Allow and deny rules, and their scopes (SPEC §8).

A rule is `TOOL` (every call of that tool) or `TOOL(PATTERN)`, the pattern
matched against the call's subject: the command for `exec_shell_command`,
the workspace-relative path for file tools. In a path pattern `*` stays in
one name and `**` crosses folders. A command pattern is matched against one
simple command written the way `shell_line` shows it (`python3 -c 'print(1)'`,
however it was quoted): `*` is any text, a trailing ` *` may also be nothing,
and what is inside quotes, or written `\\*`, is literal.
Deny wins over allow, whatever the scopes.

A line is allowed only if every simple command of it is matched by an allow
rule: `pytest *` allows `pytest -q`, not `pytest; rm -rf ~`, and with `echo *`
too it allows `pytest -q && echo done`. A line `shell_line` cannot split
exactly (`$(…)`, a redirection to a file, `if`...) is allowed by no command
pattern. "Always" on a card offers one rule per simple command, one a line
(`suggest_rule`), and `RuleSet.add` takes that text as it is.

A deny rule is checked against every simple command of a line, so `rm *` also
denies `ls && rm x`, `echo $(rm x)`, `FOO=1 /bin/rm x`, `sudo rm x` and
`sh -c 'rm x'`. Deny rules are a guard rail, not a sandbox: a program can
always be reached some way no pattern foresees.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple

from agent_cli.policy import shell_line
from agent_cli.policy.suggest import command_patterns
from agent_cli.tools.workspace import OutsideWorkspace, Workspace

Scope = Literal["config", "conversation", "project", "everywhere"]
SHELL_TOOL = "exec_shell_command"
# Where a simple command may start inside a line: separators, substitutions, groups.
_SEPARATORS = re.compile(r"\|\||&&|\$\(|[;&|\n\r`(){}]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# Programs that run the rest of their words as another command.
_WRAPPERS = frozenset(
    {"sudo", "doas", "env", "command", "exec", "builtin", "nohup", "time", "nice", "ionice"}
    | {"xargs", "stdbuf", "timeout"}
)
_SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh"))
_MAX_NESTING = 3  # sh -c "sudo sh -c '...'" levels looked into
_WRAPPER_WORDS = 6  # a wrapper's own options and values before the command it runs
# What a card says when "always" has no rule to offer for a command line.
NO_RULE = (
    "No rule can allow this line: it has a redirection to a file, a substitution or other "
    "shell syntax a rule cannot check. It can be allowed once; a rule may still be typed."
)
_RULE = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


class Rule(NamedTuple):
    tool: str
    pattern: str | None  # None: every call of the tool

    @classmethod
    def parse(cls, text: str) -> Rule:
        match = _RULE.match(text)
        # `TOOL()` is refused rather than read as every call of TOOL.
        if match is None or (match.group(2) is not None and not match.group(2).strip()):
            raise ValueError(f"{text!r} is not a rule: write TOOL or TOOL(PATTERN)")
        pattern = match.group(2)
        return cls(match.group(1), pattern.strip() if pattern is not None else None)

    def __str__(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"


class RuleSet:
    """Rules from config and those the person added with "always", by scope.

    Project rules live in the user data folder keyed by workspace, never in
    the repository; "everywhere" rules in one file beside them.
    """

    def __init__(
        self,
        workspace: Workspace,
        allow: tuple[str, ...] = (),
        deny: tuple[str, ...] = (),
        folder: Path | None = None,
    ) -> None:
        self.workspace = workspace
        self.folder = folder
        self._rules: list[tuple[str, Rule, Scope]] = []
        for text in deny:
            self._rules.append(("deny", Rule.parse(text), "config"))
        for text in allow:
            self._rules.append(("allow", Rule.parse(text), "config"))
        for scope in ("project", "everywhere"):
            for verdict, text in self._load(scope):
                with contextlib.suppress(ValueError):
                    self._rules.append((verdict, Rule.parse(text), scope))

    def match(self, tool: str, args: Mapping[str, Any]) -> tuple[str, str] | None:
        """("deny"|"unsandboxed"|"allow", "RULE (scope)") for the first deny, else the first
        allow that lets a command leave the sandbox, else the first allow.

        A command line is matched when each of its simple commands is; the answer then
        names every rule it took, `R1 + R2 (scope)`. It leaves the sandbox only if every
        one of them was allowed to.
        """
        subject = self._subject(tool, args)
        for verdict, rule, scope in self._rules:
            if verdict == "deny" and _denies(rule, tool, subject):
                return verdict, f"{rule} ({scope})"
        for wanted in ("unsandboxed", "allow"):
            kinds = ("unsandboxed",) if wanted == "unsandboxed" else ("unsandboxed", "allow")
            rules = [(r, s) for v, r, s in self._rules if v in kinds and r.tool == tool]
            used = _covering(rules, tool, subject)
            if used:
                return wanted, _describe(used, ", unsandboxed" if wanted == "unsandboxed" else "")
        return None

    def add(self, text: str, scope: Scope, unsandboxed: bool = False) -> None:
        """Add the allow rules chosen with "always", one a line (`suggest_rule` offers one per
        simple command of a line); all or none: a rule that cannot be read adds nothing.
        Project and everywhere rules are persisted. `unsandboxed`: the calls they allow run
        outside the sandbox (from the card that offered to run a command the sandbox stopped)."""
        rules = [Rule.parse(line) for line in split_rules(text)]
        if not rules:
            raise ValueError("No rule was given: write TOOL or TOOL(PATTERN), one a line")
        verdict = "unsandboxed" if unsandboxed else "allow"
        if scope in ("project", "everywhere"):  # kept first: a rule that cannot be is not used
            saved = [*self._load(scope), *((verdict, str(rule)) for rule in rules)]
            self._save(scope, saved)
        self._rules += [(verdict, rule, scope) for rule in rules]

    def _subject(self, tool: str, args: Mapping[str, Any]) -> str | None:
        if tool == SHELL_TOOL:
            command = args.get("command")
            return command if isinstance(command, str) else None
        path = args.get("path")
        if not isinstance(path, str):
            return None
        try:
            return self.workspace.relative(self.workspace.resolve(path))
        except (OutsideWorkspace, ValueError):
            return None

    def _file(self, scope: Scope) -> Path | None:
        if self.folder is None:
            return None
        if scope == "everywhere":
            return self.folder / "everywhere.json"
        key = hashlib.sha256(str(self.workspace.root).encode()).hexdigest()[:16]
        return self.folder / f"project-{key}.json"

    def _load(self, scope: Scope) -> list[tuple[str, str]]:
        path = self._file(scope)
        if path is None or not path.is_file():
            return []
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return [(r["verdict"], r["rule"]) for r in data.get("rules", [])]
        except (OSError, ValueError, KeyError, TypeError):
            return []

    def _save(self, scope: Scope, rules: list[tuple[str, str]]) -> None:
        path = self._file(scope)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        data: dict[str, Any] = {"workspace": str(self.workspace.root), "rules": []}
        data["rules"] = [{"verdict": v, "rule": r} for v, r in rules]
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        os.replace(tmp, path)


def split_rules(text: str) -> list[str]:
    """The rules in a suggestion or an answer: one a line, blank lines left out."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def _denies(rule: Rule, tool: str, subject: str | None) -> bool:
    if rule.tool != tool:
        return False
    if rule.pattern is None:
        return True
    if subject is None:
        return False
    if tool != SHELL_TOOL:
        return _path_pattern(rule.pattern).fullmatch(subject) is not None
    # Any simple command of the line, and the line as a whole, loosely and exactly split.
    pattern = _command_pattern(rule.pattern)
    exact = shell_line.parse(subject) or []
    seen = [*_simple_commands(subject), *(shell_line.shown(command) for command in exact)]
    return any(pattern.fullmatch(words) for words in seen)


def _covering(
    rules: list[tuple[Rule, Scope]], tool: str, subject: str | None
) -> list[tuple[Rule, Scope]]:
    """The first of RULES that allows the call; for a command line, the first for each of
    its simple commands. [] if some part is allowed by none."""
    if tool != SHELL_TOOL:
        for rule, scope in rules:
            if rule.pattern is None or (
                subject is not None and _path_pattern(rule.pattern).fullmatch(subject)
            ):
                return [(rule, scope)]
        return []
    commands = shell_line.parse(subject) if subject is not None else None
    if commands is None:  # not a line we can split: only a rule for every command allows it
        return [(rule, scope) for rule, scope in rules if rule.pattern is None][:1]
    used: list[tuple[Rule, Scope]] = []
    for command in commands:
        shown = shell_line.shown(command)
        found = next(
            (
                (rule, scope)
                for rule, scope in rules
                if rule.pattern is None or _command_pattern(rule.pattern).fullmatch(shown)
            ),
            None,
        )
        if found is None:
            return []
        if found not in used:
            used.append(found)
    return used


def _describe(used: list[tuple[Rule, Scope]], mark: str) -> str:
    """`R (scope)`, `R1 + R2 (scope)`, or each with its own scope if they differ."""
    if len({scope for _, scope in used}) == 1:
        return " + ".join(str(rule) for rule, _ in used) + f"{mark} ({used[0][1]})"
    return " + ".join(f"{rule}{mark} ({scope})" for rule, scope in used)


def _words(command: str) -> str:
    """A command with its words normalised (quotes removed, single spaces)."""
    try:
        return " ".join(shlex.split(command))
    except ValueError:
        return " ".join(command.split())


def _simple_commands(line: str, depth: int = 0) -> list[str]:
    """The line and every simple command in it, normalised as `_words` does, with env
    assignments, wrappers (`sudo`, `env`, `xargs`...) and a program's folder taken off."""
    found = [_words(line)]
    for part in _SEPARATORS.split(line):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        found += _unwrapped(words, depth)
    return found


def _unwrapped(words: list[str], depth: int) -> list[str]:
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words:
        return []
    words = [os.path.basename(words[0]) or words[0], *words[1:]]
    found = [" ".join(words)]
    if depth >= _MAX_NESTING:
        return found
    # Neither a wrapper's options nor a shell's are known here: try the next few words.
    following = words[1:_WRAPPER_WORDS]
    if words[0] in _WRAPPERS:
        for start in range(1, len(following) + 1):
            found += _unwrapped(words[start:], depth + 1)
    elif words[0] in _SHELLS:
        scripted = False  # after -c (or -ec, -lc...) the next words may be the script
        for word in following:
            if scripted:
                found += _simple_commands(word, depth + 1)
            scripted = scripted or (word[:1] == "-" and word[1:2] != "-" and "c" in word)
    return found


@functools.lru_cache(maxsize=512)
def _command_pattern(pattern: str) -> re.Pattern[str]:
    """Unquoted `*` is any text and `\\*` a star; quoted text (`'…'`, `"…"`, `$'…'`) is
    literal; unquoted blanks are one space. "pytest *" also matches plain "pytest"."""
    pieces: list[str] = []  # regex pieces; " " and ".*" stand for unquoted blank and star
    text = pattern.strip()
    i = 0
    while i < len(text):
        c = text[i]
        if c in " \t\n":
            while i + 1 < len(text) and text[i + 1] in " \t\n":
                i += 1
            pieces.append(" ")
        elif c == "*":
            pieces.append(".*")
        elif c == "\\" and text[i + 1 : i + 2] in ("*", "\\"):
            pieces.append(re.escape(text[i + 1]))
            i += 1
        elif c in "'\"" or text.startswith("$'", i):
            end = _quote_end(text, i)
            pieces.append(re.escape(text[i:end]))
            i = end - 1
        else:
            pieces.append(re.escape(c))
        i += 1
    if pieces[-2:] == [" ", ".*"]:
        pieces[-2:] = ["(?: .*)?"]
    return re.compile("".join(pieces), re.DOTALL)


def _quote_end(text: str, start: int) -> int:
    """Just past the quoted part that starts at START (to the end if it is never closed)."""
    if text[start] == "$":  # $'…' where \' does not close
        i = start + 2
        while i < len(text) and text[i] != "'":
            i += 2 if text[i] == "\\" else 1
        return min(i + 1, len(text))
    end = text.find(text[start], start + 1)
    return len(text) if end < 0 else end + 1


def _path_pattern(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    pattern = pattern.removeprefix("./")
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def suggest_rule(tool: str, args: Mapping[str, Any], workspace: Workspace) -> str:
    """The rules "always" offers, one a line: for a command one per simple command of the
    line, generalised as `suggest.command_patterns` says ("" when no rule could allow the
    line: see `shell_line`); for a file tool the file's folder."""
    if tool == SHELL_TOOL:
        patterns = command_patterns(str(args.get("command", "")))
        return "\n".join(f"{tool}({pattern})" for pattern in patterns)
    path = args.get("path")
    if isinstance(path, str):
        try:
            relative = workspace.relative(workspace.resolve(path))
        except (OutsideWorkspace, ValueError):
            return tool
        folder = relative.rpartition("/")[0]
        return f"{tool}({folder}/**)" if folder else f"{tool}(*)"
    return tool
