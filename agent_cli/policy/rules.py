"""Allow and deny rules, and their scopes (SPEC §8).

A rule is `TOOL` (every call of that tool) or `TOOL(PATTERN)`, the pattern
matched against the call's subject: the command for `exec_shell_command`,
the workspace-relative path for file tools. In a path pattern `*` stays in
one name and `**` crosses folders; in a command pattern `*` is any text.
Deny wins over allow, whatever the scopes.

An allow rule never covers a compound command: `pytest *` must not allow
`pytest; rm -rf ~`. A deny rule is checked against every simple command of a
line, so `rm *` also denies `ls && rm x`, `echo $(rm x)`, `FOO=1 /bin/rm x`,
`sudo rm x` and `sh -c 'rm x'`. Deny rules are a guard rail, not a sandbox: a
program can always be reached some way no pattern foresees.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple

from agent_cli.tools.workspace import OutsideWorkspace, Workspace

Scope = Literal["config", "conversation", "project", "everywhere"]
SHELL_TOOL = "exec_shell_command"
# Characters that make a command more than one simple command (or hide one).
_COMPOUND = re.compile(r"[;&|`$<>(){}\n\r\\]")
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
_RULE = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


class Rule(NamedTuple):
    tool: str
    pattern: str | None  # None: every call of the tool

    @classmethod
    def parse(cls, text: str) -> Rule:
        match = _RULE.match(text)
        if match is None:
            raise ValueError(f"{text!r} is not a rule: write TOOL or TOOL(PATTERN)")
        return cls(match.group(1), match.group(2).strip() if match.group(2) else None)

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
        """("deny"|"allow", "RULE (scope)") for the first deny, else the first allow."""
        subject = self._subject(tool, args)
        for wanted in ("deny", "allow"):
            for verdict, rule, scope in self._rules:
                if verdict == wanted and _matches(rule, tool, subject, verdict):
                    return verdict, f"{rule} ({scope})"
        return None

    def add(self, text: str, scope: Scope) -> None:
        """Add an allow rule chosen with "always"; project and everywhere are persisted."""
        rule = Rule.parse(text)
        if scope in ("project", "everywhere"):  # kept first: a rule that cannot be is not used
            saved = [*self._load(scope), ("allow", str(rule))]
            self._save(scope, saved)
        self._rules.append(("allow", rule, scope))

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
        data = {"workspace": str(self.workspace.root), "rules": []}
        data["rules"] = [{"verdict": v, "rule": r} for v, r in rules]
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        os.replace(tmp, path)


def _matches(rule: Rule, tool: str, subject: str | None, verdict: str) -> bool:
    if rule.tool != tool:
        return False
    if rule.pattern is None:
        return True
    if subject is None:
        return False
    if tool != SHELL_TOOL:
        return _path_pattern(rule.pattern).fullmatch(subject) is not None
    pattern = _command_pattern(rule.pattern)
    if verdict == "allow":
        return _COMPOUND.search(subject) is None and pattern.fullmatch(_words(subject)) is not None
    # Deny: any simple command of the line, and the line as a whole.
    return any(pattern.fullmatch(words) for words in _simple_commands(subject))


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


def _command_pattern(pattern: str) -> re.Pattern[str]:
    # "pytest *" also matches plain "pytest": the trailing " *" may be empty.
    words = " ".join(pattern.split())
    tail = words.endswith(" *")
    body = words[:-2] if tail else words
    regex = ".*".join(re.escape(piece) for piece in body.split("*"))
    return re.compile(regex + ("(?: .*)?" if tail else ""), re.DOTALL)


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
    """A rule generalised from a call: the program and first argument, or the file's folder."""
    if tool == SHELL_TOOL:
        try:
            words = shlex.split(str(args.get("command", "")))
        except ValueError:
            words = []
        if not words:
            return tool
        head = " ".join(words[:2])
        return f"{tool}({head} *)" if len(words) > 2 else f"{tool}({head})"
    path = args.get("path")
    if isinstance(path, str):
        try:
            relative = workspace.relative(workspace.resolve(path))
        except (OutsideWorkspace, ValueError):
            return tool
        folder = relative.rpartition("/")[0]
        return f"{tool}({folder}/**)" if folder else f"{tool}(*)"
    return tool
