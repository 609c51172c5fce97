"""`agent undo`: restore the files as they were before the agent's last change (SPEC §8)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent_cli.commands.common import guarded, start_debug_log, workspace_from

if TYPE_CHECKING:
    from agent_cli.git import Restored

WHAT_UNDO_DID = {"M": "changed back", "A": "brought back", "D": "removed"}


def register(app: typer.Typer) -> None:
    app.command(
        "undo",
        epilog="Examples: agent undo · agent undo --conversation 20250101-120000-ab12cd · "
        "run it again to step further back.",
    )(undo)


def undo(
    conversation: Annotated[
        str | None,
        typer.Option(
            "--conversation",
            metavar="ID",
            help="Undo in conversation ID (default: the last one here).",
        ),
    ] = None,
    debug: Annotated[
        bool, typer.Option("--debug", help="Write a debug log; show tracebacks.")
    ] = False,
    cwd: Annotated[Path | None, typer.Option(help="Work in this folder.")] = None,
) -> None:
    """Restore the files as they were before the agent's last change."""

    def action() -> int:
        if debug:
            start_debug_log()
        return _undo(conversation, cwd)

    raise typer.Exit(guarded(debug, action))


def _undo(conversation_id: str | None, cwd: Path | None) -> int:
    from agent_cli import wiring
    from agent_cli.errors import StoreError, UsageError
    from agent_cli.git import Checkpoints

    workspace = workspace_from(cwd)
    store = wiring.make_store()
    if conversation_id:
        try:
            conversation = store.load(conversation_id)
        except StoreError as e:
            raise UsageError(str(e)) from e  # an id that names no conversation: a bad argument
        if conversation.workspace != str(workspace):
            raise UsageError(
                f"Conversation {conversation.id} belongs to {conversation.workspace} — "
                "run agent undo there, or pass --cwd."
            )
    else:
        found = store.last(str(workspace))
        if found is None:
            raise UsageError(f"There is no conversation in {workspace}, so nothing to undo.")
        conversation = found
    restored = Checkpoints(workspace).undo(conversation.id)
    print(describe(restored, conversation.id))
    return 0


def describe(restored: Restored, conversation: str) -> str:
    """What the undo did, one file a line, and how to go further back."""
    from agent_cli.git import short_label

    count = len(restored.changes)
    lines = [
        f"Restored {count} {'file' if count == 1 else 'files'} to before "
        f"'{short_label(restored.label)}' (conversation {conversation}):"
    ]
    lines += [f"  {letter} {path}" for letter, path in restored.changes]
    used = {letter for letter, _ in restored.changes}
    legend = ", ".join(
        f"{letter} {what}" for letter, what in WHAT_UNDO_DID.items() if letter in used
    )
    lines.append(f"({legend}.) Run agent undo again to step further back.")
    return "\n".join(lines)
