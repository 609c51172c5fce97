"""The modes' names (SPEC §8), apart from the policy that decides with them.

The settings, the commands' options and the TUI's first frame name the modes; the
policy (`modes.decide`) needs the tools' types, which they do not (a bare `agent`
paints before any tool is imported). `modes` re-exports these.
"""

from __future__ import annotations

MODES = ("ask", "auto", "read-only", "full", "plan")
"""The one list of modes; everything else that names them reads it."""
MODES_TEXT = ", ".join(MODES[:-1]) + " or " + MODES[-1]
STRICTNESS = ("read-only", "plan", "ask", "auto", "full")
"""Each allows more than the one before (a sub-agent's mode is capped by its parent's).
`plan` allows the same calls as `read-only` (it only reads); it also asks for a plan."""
READ_ONLY_MODES = ("read-only", "plan")
"""The modes in which nothing changes: only reads and read-only commands run."""
IMPLEMENT_MODES = ("ask", "auto", "full")
"""The modes a plan made in plan mode may be carried out in."""
