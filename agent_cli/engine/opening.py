"""Which conversation a front end opens: a type of its own, so a bare `agent` names it
without importing wiring (the engine, tools and providers) before the TUI's first frame."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Opening:
    """Which conversation a front end opens."""

    resume: str | None = None
    continue_last: bool = False
    save: bool = True
