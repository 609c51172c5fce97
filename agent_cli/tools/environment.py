"""Which of the user's environment variables a command or an MCP server gets (SPEC §13).

The steps follow Codex's `shell_environment_policy`: start from the whole
environment, a few core variables, or nothing (`inherit`); drop the names that
look like secrets unless told not to (`ignore_default_excludes`); drop the
`exclude` globs; when `include_only` has globs, keep only the names they match;
and last add `set`, so a value the person set is there whatever the filters say.
Globs match names in any case.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = [
    "CORE_VARIABLES",
    "INHERIT_CHOICES",
    "SECRET_NAME_PATTERNS",
    "EnvironmentPolicy",
    "scrubbed_env",
]

INHERIT_CHOICES = ("all", "core", "none")
SECRET_NAME_PATTERNS = ("KEY", "SECRET", "TOKEN", "PASSWORD")
"""The default excludes: a name containing any of these, in any case, looks like a secret."""
CORE_VARIABLES = frozenset(
    {"HOME", "LANG", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TEMP", "TMP", "TZ", "USER",
     "USERNAME"}
)  # fmt: skip
"""What `inherit = "core"` keeps, with every `LC_*` locale variable."""


def scrubbed_env(
    env: Mapping[str, str], patterns: Iterable[str] = SECRET_NAME_PATTERNS
) -> dict[str, str]:
    """`env` without the variables whose names contain any of `patterns` (any case)."""
    needles = [p.upper() for p in patterns]
    return {k: v for k, v in env.items() if not any(n in k.upper() for n in needles)}


def _matches(name: str, globs: Iterable[str]) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, glob.upper()) for glob in globs)


def _is_core(name: str) -> bool:
    return name in CORE_VARIABLES or name.startswith("LC_")


@dataclass(frozen=True)
class EnvironmentPolicy:
    """The `[shell_environment]` table; the default is the user's environment minus secrets."""

    inherit: str = "all"  # one of INHERIT_CHOICES
    ignore_default_excludes: bool = False
    exclude: tuple[str, ...] = ()  # globs, on top of the default excludes
    include_only: tuple[str, ...] = ()  # globs; empty keeps everything left
    # Added last, whatever the filters; a value may be a token, so it stays out of reprs.
    set: Mapping[str, str] = field(default_factory=dict, repr=False)

    def apply(self, env: Mapping[str, str]) -> dict[str, str]:
        """The variables a command started from `env` (the user's environment) gets."""
        if self.inherit == "all":
            kept = dict(env)
        elif self.inherit == "core":
            kept = {k: v for k, v in env.items() if _is_core(k)}
        else:
            kept = {}
        if not self.ignore_default_excludes:
            kept = scrubbed_env(kept)
        if self.exclude:
            kept = {k: v for k, v in kept.items() if not _matches(k, self.exclude)}
        if self.include_only:
            kept = {k: v for k, v in kept.items() if _matches(k, self.include_only)}
        return kept | dict(self.set)
