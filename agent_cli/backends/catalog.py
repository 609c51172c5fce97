"""The catalog of external coding agents: how each one starts, as data (SPEC §11).

The shipped file `agents.toml` beside this module lists the known agents; the
user's config adds entries or changes fields of shipped ones (`[agents.ID]`,
parsed and type-checked by `settings`). Nothing here starts a program:
`AgentSpec.missing` only looks the programs up on PATH.
"""

from __future__ import annotations

import difflib
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.errors import ConfigError, UsageError

BUILTIN = "builtin"
"""The built-in agent's id: reserved, never a catalog entry."""

CATALOG_FILE = Path(__file__).with_name("agents.toml")


@dataclass(frozen=True)
class AgentSpec:
    """How to start one external agent, and what it needs."""

    id: str
    name: str
    command: str
    args: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()  # programs that must be on PATH
    env: Mapping[str, str] = field(default_factory=dict)  # added to the user's environment
    install: str = ""  # one line saying how to install what it needs
    gated: bool = True  # False: it never asks permission and edits files itself (pi)

    def missing(self, path: str | None = None) -> list[str]:
        """The programs it needs (its command first) that are not on PATH (or `path`)."""
        wanted = dict.fromkeys([self.command, *self.needs])
        return [program for program in wanted if shutil.which(program, path=path) is None]

    def missing_message(self, missing: list[str]) -> str:
        """One sentence saying what is missing and how to install it."""
        programs = ", ".join(missing)
        verb = "is" if len(missing) == 1 else "are"
        how = f"install it with: {self.install}" if self.install else "install it"
        return f"{self.name} cannot start: {programs} {verb} not on PATH — {how}."


def load_catalog(user: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, AgentSpec]:
    """The shipped agents with the user's `[agents.ID]` entries added or merged in."""
    shipped = tomllib.loads(CATALOG_FILE.read_text(encoding="utf-8")).get("agents", {})
    catalog = {agent_id: _spec(agent_id, entry, None) for agent_id, entry in shipped.items()}
    for agent_id, entry in (user or {}).items():
        if agent_id == BUILTIN:
            raise ConfigError(
                f"[agents.{BUILTIN}] in the config names the built-in agent, which cannot be "
                "changed — give the external agent another id."
            )
        catalog[agent_id] = _spec(agent_id, entry, catalog.get(agent_id))
    return catalog


def find_agent(catalog: Mapping[str, AgentSpec], agent_id: str) -> AgentSpec:
    """The entry for `agent_id`, or a UsageError naming the ids (and the likely one)."""
    spec = catalog.get(agent_id)
    if spec is not None:
        return spec
    ids = [BUILTIN, *sorted(catalog)]
    close = difflib.get_close_matches(agent_id, ids, n=1)
    guess = f"Did you mean {close[0]!r}? " if close else ""
    raise UsageError(
        f"There is no agent {agent_id!r}. {guess}Use one of: {', '.join(ids)} — "
        "`agent agents` lists them with what each needs."
    )


def _spec(agent_id: str, entry: Mapping[str, Any], base: AgentSpec | None) -> AgentSpec:
    """An entry as a spec: on top of `base` (a shipped entry the user changes) if given."""
    if base is None:
        if not entry.get("command"):
            raise ConfigError(
                f'[agents.{agent_id}] in the config has no command — add command = "PROGRAM" '
                "(and args = [...] if it needs any)."
            )
        base = AgentSpec(id=agent_id, name=agent_id, command=entry["command"])
    return AgentSpec(
        id=base.id,
        name=entry.get("name", base.name),
        command=entry.get("command", base.command),
        args=tuple(entry.get("args", base.args)),
        needs=tuple(entry.get("needs", base.needs)),
        env=dict(entry["env"]) if "env" in entry else base.env,
        install=entry.get("install", base.install),
        gated=entry.get("gated", base.gated),
    )
