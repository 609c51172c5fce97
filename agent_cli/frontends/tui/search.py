"""Finding text in a conversation: every item, mounted or not. No Textual here."""

from __future__ import annotations

from agent_cli.engine.items import AssistantItem, Item, NoticeItem, SummaryItem, ToolItem, UserItem


def item_text(item: Item) -> str:
    """All the text of an item a person could be looking for."""
    if isinstance(item, UserItem):
        return item.text
    if isinstance(item, AssistantItem):
        return f"{item.reasoning}\n{item.text}"
    if isinstance(item, ToolItem):
        return "\n".join((item.title, item.tool, item.args, item.result, item.diff))
    if isinstance(item, NoticeItem | SummaryItem):
        return item.text
    return ""


def find_all(items: list[Item], query: str) -> list[int]:
    """Indexes of the items containing `query` (case-insensitive), oldest first."""
    needle = query.casefold()
    if not needle:
        return []
    return [index for index, item in enumerate(items) if needle in item_text(item).casefold()]
