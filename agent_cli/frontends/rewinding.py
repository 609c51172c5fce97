"""What `/rewind` says, shared by both interactive front ends: the numbered messages,
what a rewind took out, and the files it can offer to restore (`RewindOffer`)."""

from __future__ import annotations

from typing import NamedTuple

from agent_cli.engine.items import Rewound, UserItem

LINE_LENGTH = 80


class RewindOffer(NamedTuple):
    """After a rewind: the files can go back to before `label`, the first change since."""

    conversation: str
    turns: frozenset[str]
    label: str


def listing(points: list[UserItem]) -> str:
    """The messages to rewind to, numbered as `/rewind N` takes them (Markdown)."""
    lines = [f"{number}. {_line(point.text)}" for number, point in enumerate(points, 1)]
    lines.append(
        "\nRewind with `/rewind N`: message N and everything after it leave the "
        "conversation (kept in its history), and its text comes back to edit."
    )
    return "\n".join(lines)


def rewound_text(rewound: Rewound, checkpoints: bool) -> str:
    """What a rewind did, for the person; `checkpoints`: the files could be restored."""
    first = rewound.items[0]
    text = first.text if isinstance(first, UserItem) else ""
    count = len(rewound.items)
    said = (
        f"Rewound: {count} item{'' if count == 1 else 's'} from “{_line(text)}” on left the "
        "conversation (kept in its history: `agent sessions show`). Edit the message and "
        "send it again."
    )
    if checkpoints and isinstance(first, UserItem) and not first.turn:
        said += (  # its changes are its run's: the checkpoints cannot tell them apart
            "\n\nThat message was steered into a run: the files that run changed after it "
            "cannot be told apart from the ones before; `/undo` steps back through them."
        )
    return said


def rewound_turns(rewound: Rewound) -> frozenset[str]:
    """The turns of the messages a rewind took out: their checkpoints are its changes."""
    return frozenset(
        item.turn for item in rewound.items if isinstance(item, UserItem) and item.turn
    )


def _line(text: str) -> str:
    """One line of text that cannot break a Markdown list or table row."""
    line = " ".join(text.split())
    cut = line if len(line) <= LINE_LENGTH else line[: LINE_LENGTH - 1] + "…"
    return cut.replace("|", "\\|").replace("`", "'")
