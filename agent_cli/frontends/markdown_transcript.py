"""A conversation as a Markdown document (`agent sessions export ID --format markdown`).

For a person to read or keep: the messages, the answers, each tool call with
its outcome (an edit's diff, a command's exit code and last lines), the
notices, and at the end what rewinds took out. Plain text in, Markdown out:
what a message or a result says is fenced or quoted, never read as markup of
the document around it, and control characters (a model's escape sequences,
which a terminal would obey) are left out.
"""

from __future__ import annotations

import re
from datetime import datetime

from agent_cli.engine.items import (
    AssistantItem,
    Conversation,
    Item,
    NoticeItem,
    SummaryItem,
    ToolItem,
    UserItem,
)
from agent_cli.media import chips
from agent_cli.tools.shell import exit_line

RESULT_LINES = 20  # lines of a tool's result shown under it
LEVELS = {"info": "Note", "warn": "Warning", "error": "Error"}
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline


def markdown(conversation: Conversation) -> str:
    """The whole conversation as one Markdown document, ending in a newline."""
    parts = [f"# {_line(conversation.title) or '(untitled)'}", _details(conversation)]
    parts += [text for item in conversation.items if (text := _item(item))]
    for rewound in conversation.rewound:
        taken = datetime.fromtimestamp(rewound.time).strftime("%Y-%m-%d %H:%M")
        parts.append(f"## Rewound at {taken}\n\nTaken out of the conversation by `/rewind`:")
        parts += [text for item in rewound.items if (text := _item(item, level=3))]
    return CONTROL.sub("", "\n\n".join(parts)) + "\n"


def _details(conversation: Conversation) -> str:
    agent = conversation.agent + (f" · model {conversation.model}" if conversation.model else "")
    usage = conversation.usage
    rows = [
        ("id", f"`{conversation.id}`"),
        ("workspace", f"`{conversation.workspace}`"),
        ("agent", agent),
        ("mode", conversation.mode),
        ("started", _when(conversation.created)),
        ("updated", _when(conversation.updated)),
    ]
    if usage.input_tokens or usage.output_tokens:
        rows.append(("tokens", f"{usage.input_tokens:,} in, {usage.output_tokens:,} out"))
    return "\n".join(f"- {name}: {value}" for name, value in rows)


def _item(item: Item, level: int = 2) -> str:
    heading = "#" * level
    if item.parent:  # a sub-agent's: under its task, as a quote
        inner = _item_body(item, heading + "#")
        return "\n".join(f"> {line}" if line else ">" for line in inner.splitlines())
    return _item_body(item, heading)


def _item_body(item: Item, heading: str) -> str:
    if isinstance(item, UserItem):
        who = "Task prompt" if item.parent else "You"
        attached = chips(item.images, item.attachments)  # what was attached, not its content
        said = "\n\nAttached: " + ", ".join(f"`{chip}`" for chip in attached) if attached else ""
        return f"{heading} {who}\n\n{_fenced(item.text, 'text')}{said}"
    if isinstance(item, AssistantItem):
        if not item.text.strip():
            return ""
        return f"{heading} Agent\n\n{item.text.strip()}"
    if isinstance(item, ToolItem):
        return _tool(item, heading)
    if isinstance(item, NoticeItem):
        return f"> **{LEVELS.get(item.level, 'Note')}:** {_line(item.text)}"
    if isinstance(item, SummaryItem):
        return f"{heading} Summary of the {item.replaced} items before\n\n{item.text.strip()}"
    return ""


def _tool(item: ToolItem, heading: str) -> str:
    title = _line(item.title or item.tool)
    lines = [f"{heading}# Tool: {title}", "", f"- tool: `{item.tool}` · {item.state}"]
    if item.mcp:
        lines[-1] += f" · MCP server `{item.mcp}`"
    code = exit_line(item.result)  # the line, to take out of the text shown below
    recorded = item.command_exit()
    if code or recorded is not None:
        lines.append(f"- exit code: {code[1] if code else recorded}")
    if item.rule:
        lines.append(f"- allowed by: {' + '.join(item.rule.splitlines())}")
    if item.diff:
        lines += ["", _fenced(item.diff.rstrip("\n"), "diff")]
    elif item.result.strip():
        result = item.result
        if code:  # said above; the sandbox's notes after it stay
            result = result[: code.start()] + result[code.end() :].lstrip("\n")
        result = result.rstrip()
        if result.strip():
            lines += ["", _fenced(_cut(result), "text")]
    return "\n".join(lines)


def _cut(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= RESULT_LINES:
        return text
    more = len(lines) - RESULT_LINES
    return "\n".join([*lines[:RESULT_LINES], f"… {more} more line{'s' if more != 1 else ''}"])


def _fenced(text: str, language: str) -> str:
    """A code block no line of `text` can close: its fence is longer than any run inside."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _line(text: str) -> str:
    return " ".join(text.split())


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M") if timestamp else "—"
