"""A conversation's log: records, a save cut short, reading from the end (SPEC §3)."""

from __future__ import annotations

import os

import pytest

from agent_cli.engine.conversation_log import (
    FileMark,
    append,
    header_record,
    item_record,
    last_header,
    read_log,
)
from agent_cli.engine.items import AssistantItem, Conversation, ToolItem, UserItem


def saves() -> tuple[Conversation, list[bytes]]:
    """A conversation and its log as two saves: a first, then a result and a new item."""
    conversation = Conversation(workspace="/w", title="t")
    tool = ToolItem("read_file", "c1", state="running")
    conversation.items += [UserItem("hi"), AssistantItem("", streaming=False), tool]
    records = [item_record(item, at) for at, item in enumerate(conversation.items)]
    first = b"".join([*records, header_record(conversation)])
    tool.state, tool.result = "done", "the result"
    conversation.items.append(AssistantItem("answered", streaming=False))
    second = item_record(tool, 2) + item_record(conversation.items[-1], 3)
    second += header_record(conversation)
    return conversation, [first, second]


def test_an_item_written_again_replaces_it_in_its_place():
    conversation, [first, second] = saves()
    data = read_log(first + second)
    assert data == conversation.to_json()
    assert [i["kind"] for i in data["items"]] == ["user", "assistant", "tool", "assistant"]
    assert data["items"][2]["result"] == "the result"
    twin = conversation.items[0]  # positions, not ids, say where: a repeated id is kept
    doubled = item_record(twin, 4) + header_record(conversation).replace(b'"items":4', b'"items":5')
    assert [i["id"] for i in read_log(first + second + doubled)["items"]].count(twin.id) == 2
    with pytest.raises(ValueError, match="an item at 9"):
        read_log(first + item_record(twin, 9) + header_record(conversation))


def test_a_save_cut_short_anywhere_reads_as_the_save_before_it(tmp_path):
    conversation, [first, second] = saves()
    before = read_log(first)
    log = tmp_path / "log.jsonl"
    for cut in range(len(second) - 1):  # every byte a kill or a full disk could stop at
        log.write_bytes(first + second[:cut])
        assert read_log(log.read_bytes()) == before, cut
        assert last_header(log)["items"] == len(before["items"]), cut
    after = conversation.to_json()
    assert read_log(first + second[:-1]) == after  # whole but for its newline: it is all there
    assert read_log(first + second) == after


def test_a_damaged_line_before_the_last_is_an_error_not_a_shorter_conversation():
    _, [first, second] = saves()
    damaged = first.replace(b'"text":"hi"', b'"text":"h', 1)
    with pytest.raises(ValueError):
        read_log(damaged + second)
    with pytest.raises(ValueError, match="no complete save"):
        read_log(first[: first.index(b"\n") + 1])  # an item, and no header yet


def test_the_listing_finds_the_last_header_behind_a_long_item(tmp_path):
    conversation = Conversation(workspace="/w", title="long")
    conversation.items.append(UserItem("x" * 100_000))
    log = tmp_path / "log.jsonl"
    log.write_bytes(item_record(conversation.items[0], 0) + header_record(conversation))
    conversation.items.append(AssistantItem("y" * 200_000, streaming=False))
    with log.open("ab") as f:  # a long save cut short: the header is far back
        f.write(item_record(conversation.items[1], 1)[:150_000])
    header = last_header(log)
    assert header["title"] == "long" and header["items"] == 1


def test_an_append_to_a_log_someone_else_wrote_writes_nothing(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"one\n")
    mark = FileMark.of(os.stat(log))
    mark = append(log, b"two\n", mark)
    assert log.read_bytes() == b"one\ntwo\n" and mark.size == 8
    log.write_bytes(b"another writer's\n")
    assert append(log, b"three\n", mark) is None
    assert log.read_bytes() == b"another writer's\n"
    log.unlink()
    assert append(log, b"three\n", mark) is None
