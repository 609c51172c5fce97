"""What the model reads of a conversation, kept from round to round (SPEC §4).

Every round sends every earlier message again; building them all each round
made a round's cost grow with the conversation. A view keeps the messages and
the token estimate of the items that can no longer change — a user message, a
summary, a notice, a finished call, an answer whose calls have all finished —
and builds only the others each round, with the very functions `to_messages`
uses: a round's messages are always `to_messages` of the items, and the ones
kept are the same objects round after round (so is what a provider encodes).

A settled item changes only by being shortened, which the view does itself.
Items put before others (a `/compact` summary) make it start again.
"""

from __future__ import annotations

from agent_cli.backends.context import (
    CHARS_PER_TOKEN,
    FINAL,
    answer_messages,
    call_results,
    estimate_item,
    item_messages,
    result_message,
    shortenable,
)
from agent_cli.engine.items import AssistantItem, Item, SummaryItem, ToolItem
from agent_cli.providers.base import Message


class ModelView:
    """One loop's scope of a conversation as its model reads it."""

    def __init__(self, scope: str) -> None:
        self.scope = scope
        self.items: list[Item] = []  # the scope's items, in the conversation's order
        self._source: list[Item] | None = None
        self._seen = 0  # the conversation's items taken in so far
        self._last: Item | None = None  # the last of them, to notice an insertion
        self._begin(0)

    def _begin(self, start: int) -> None:
        self._start = start  # what is sent begins here: at the latest summary
        self._settled = start  # the items from `start` to here are settled
        self._messages: list[Message] = []  # theirs
        self._tokens = 0  # their estimate
        self._results: dict[str, list[int]] = {}  # a settled tool item's id → its messages' places
        self._cannot_shorten = start  # no item from `start` to here can be shortened

    def sync(self, source: list[Item]) -> None:
        """Take in the items the conversation gained since the last round."""
        seen = self._seen
        if (
            source is not self._source
            or len(source) < seen
            or (seen and source[seen - 1] is not self._last)
        ):
            self.items = []
            self._begin(0)
            self._source, seen = source, 0
        scope = self.scope
        for item in source[seen:]:
            if item.parent == scope:
                if isinstance(item, SummaryItem):
                    self._begin(len(self.items))
                self.items.append(item)
        self._seen = len(source)
        self._last = source[-1] if source else None

    def messages(self) -> tuple[Message, ...]:
        """`to_messages(self.items)`, building only what changed since the last round."""
        self._settle()
        items = self.items
        rest = [m for at in range(self._settled, len(items)) for m in item_messages(items, at)]
        return (*self._messages, *rest)

    def estimate(self, system: str, tools_chars: int = 0) -> int:
        """`context.estimate(system, self.items, tools_chars)`."""
        self._settle()
        rest = sum(estimate_item(item) for item in self.items[self._settled :])
        return (len(system) + tools_chars) // CHARS_PER_TOKEN + self._tokens + rest

    def shorten_oldest(self) -> ToolItem | None:
        """`context.shorten_oldest(self.items)`, keeping what is settled up to date."""
        items = self.items
        for index in range(self._cannot_shorten, len(items)):
            item = items[index]
            settled = index < self._settled
            if isinstance(item, ToolItem) and shortenable(item):
                before = estimate_item(item)
                item.shortened = True
                if settled:
                    self._tokens += estimate_item(item) - before
                    for place in self._results.get(item.id, ()):
                        old = self._messages[place]
                        self._messages[place] = result_message(old.tool_call_id, item)
                return item
            if settled:  # a settled item does not grow: it never becomes long
                self._cannot_shorten = index + 1
        return None

    def _settle(self) -> None:
        """Keep the messages of the items that became settled since the last round."""
        items = self.items
        while self._settled < len(items):
            index = self._settled
            item = items[index]
            if isinstance(item, ToolItem) and item.state not in FINAL:
                return
            if isinstance(item, AssistantItem):
                if item.streaming:
                    return
                results = call_results(items, index)
                if not _round_finished(items, index) or any(
                    call.id not in results for call in item.tool_calls
                ):
                    return
                if item.text or item.tool_calls:
                    first = len(self._messages) + 1
                    for offset, call in enumerate(item.tool_calls):
                        places = self._results.setdefault(results[call.id].id, [])
                        places.append(first + offset)
                    self._messages += answer_messages(item, results)
            else:
                self._messages += item_messages(items, index)
            self._tokens += estimate_item(item)
            self._settled += 1


def _round_finished(items: list[Item], index: int) -> bool:
    """Every call of the answer at `index` (its round's tool items) has its result."""
    for at in range(index + 1, len(items)):
        item = items[at]
        if isinstance(item, AssistantItem):
            return True
        if isinstance(item, ToolItem) and item.state not in FINAL:
            return False
    return True
