"""The SSE parser: the spec's line rules, and the same events however the bytes are split."""

from __future__ import annotations

import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_cli.providers.sse import SSEEvent, SSEParser


def parse(*chunks: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + parser.close()


def split_at(stream: bytes, cuts: list[int]) -> list[bytes]:
    """The stream cut at these offsets (those past its end are ignored)."""
    bounds = [0, *sorted(cut for cut in cuts if cut <= len(stream)), len(stream)]
    return [stream[start:end] for start, end in itertools.pairwise(bounds)]


def message(data: str, event_id: str | None = None) -> SSEEvent:
    return SSEEvent("message", data, event_id)


# -- line rules ------------------------------------------------------------------


def test_single_event_with_lf() -> None:
    assert parse(b"data: hello\n\n") == [message("hello")]


def test_crlf_and_lone_cr_line_endings() -> None:
    assert parse(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n") == [
        message("a"),
        message("b"),
        message("c"),
    ]


def test_crlf_split_between_chunks_is_one_line_ending() -> None:
    # Were the LF taken as a second line ending, the blank line would reset the event type.
    chunks = (b"event: note\r", b"\ndata: a\r", b"\n\r", b"\ndata: b\r", b"\n\r\n")
    assert parse(*chunks) == [SSEEvent("note", "a"), message("b")]


def test_multi_line_data_is_joined_with_newlines() -> None:
    assert parse(b"data: one\ndata: two\ndata:\ndata: four\n\n") == [message("one\ntwo\n\nfour")]


def test_only_one_space_after_the_colon_is_removed() -> None:
    assert parse(b"data:x\n\ndata:  y\n\n") == [message("x"), message(" y")]


def test_comments_retry_and_unknown_fields_are_ignored() -> None:
    stream = b": keep-alive\nretry: 1000\nfoo: bar\ndata: x\n:comment\n\n"
    assert parse(stream) == [message("x")]


def test_event_type_applies_to_one_event_and_id_persists() -> None:
    stream = b"event: ping\nid: 7\ndata: a\n\ndata: b\n\nid: 8\0bad\ndata: c\n\n"
    assert parse(stream) == [SSEEvent("ping", "a", "7"), message("b", "7"), message("c", "7")]


def test_field_without_colon_counts_as_empty_value() -> None:
    assert parse(b"data\ndata\n\n") == [message("\n")]


def test_empty_data_is_dispatched_but_a_blank_line_alone_is_not() -> None:
    assert parse(b"\n\nevent: x\n\ndata:\n\n") == [message("")]


def test_utf8_character_split_across_chunks() -> None:
    encoded = "data: héllo 😀 世界\n\n".encode()
    assert parse(*(encoded[i : i + 1] for i in range(len(encoded)))) == [message("héllo 😀 世界")]


def test_invalid_utf8_becomes_replacement_character() -> None:
    assert parse(b"data: a\xffb\n\n") == [message("a\ufffdb")]


def test_bom_at_start_is_dropped_even_when_split() -> None:
    assert parse(b"\xef\xbb", b"\xbfdata: x\n\n") == [message("x")]


def test_bom_later_in_the_stream_is_not_special() -> None:
    # The second BOM makes the line's field name "\ufeffdata", which is unknown.
    assert parse(b"\xef\xbb\xbfdata: x\n\n\xef\xbb\xbfdata: y\n\n") == [message("x")]


def test_close_drops_an_event_without_its_blank_line() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: whole\n\ndata: half\n") == [message("whole")]
    assert parser.close() == []


def test_close_drops_an_unterminated_line() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: x\n\ndata: y") == [message("x")]
    assert parser.close() == []


def test_feed_data_returns_only_the_data() -> None:
    parser = SSEParser()
    assert parser.feed_data(b"event: e\ndata: 1\n\ndata: 2\ndata: 3\n\n") == ["1", "2\n3"]


def test_chunk_without_line_end_returns_nothing_until_completed() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: par") == []
    assert parser.feed(b"tial") == []
    assert parser.feed(b"\n\n") == [message("partial")]


# -- any split gives the same events ------------------------------------------------


def _chunk_json(delta: dict[str, object], finish: str | None = None) -> str:
    frame = {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return json.dumps(frame, ensure_ascii=False)


def _recorded_events() -> list[tuple[list[str], str, str | None]]:
    """(lines of one event, expected data, expected id) for a realistic stream."""
    tool_args = ['{"pa', 'th": "dïr/文件', '.txt"}']
    events: list[tuple[list[str], str, str | None]] = []
    for piece in ["Hé", "llo, ", "wörld ", "😀", " 世界", ""]:
        frame = _chunk_json({"content": piece})
        events.append(([f"data: {frame}"], frame, None))
    start = _chunk_json(
        {
            "tool_calls": [
                {"index": 0, "id": "call_1", "function": {"name": "read", "arguments": ""}}
            ]
        }
    )
    events.append(([": a comment", "id: 41", f"data:{start}"], start, "41"))
    for fragment in tool_args:
        frame = _chunk_json({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]})
        events.append(([f"data: {frame}"], frame, "41"))
    events.append(
        (["event: note", "data: first line", "data:  second"], "first line\n second", "41")
    )
    finish = _chunk_json({}, "tool_calls")
    events.append(([f"data: {finish}", "retry: 10"], finish, "41"))
    events.append((["data: [DONE]"], "[DONE]", "41"))
    return events


def _recorded_stream(endings: list[str]) -> bytes:
    """The recorded events written with the given line endings, one per event, cycling."""
    parts = ["\ufeff"]
    for number, (lines, _, _) in enumerate(_recorded_events()):
        end = endings[number % len(endings)]
        parts.append("".join(line + end for line in lines) + end)
    return "".join(parts).encode()


def _expected() -> list[SSEEvent]:
    expected = []
    for lines, data, event_id in _recorded_events():
        kind = "note" if any(line.startswith("event: note") for line in lines) else "message"
        expected.append(SSEEvent(kind, data, event_id))
    return expected


STREAMS = {
    "lf": _recorded_stream(["\n"]),
    "crlf": _recorded_stream(["\r\n"]),
    "cr": _recorded_stream(["\r"]),
    "mixed": _recorded_stream(["\r\n", "\n", "\r"]),
}


def test_recorded_streams_parse_to_the_expected_events() -> None:
    for name, stream in STREAMS.items():
        assert parse(stream) == _expected(), f"the {name} stream parsed differently"


def test_every_single_split_point_gives_the_same_events() -> None:
    for name, stream in STREAMS.items():
        whole = parse(stream)
        for cut in range(len(stream) + 1):
            assert parse(stream[:cut], stream[cut:]) == whole, f"{name} split at byte {cut}"


def test_one_byte_at_a_time_gives_the_same_events() -> None:
    for stream in STREAMS.values():
        assert parse(*(stream[i : i + 1] for i in range(len(stream)))) == parse(stream)


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(sorted(STREAMS)),
    cuts=st.lists(st.integers(min_value=0, max_value=max(map(len, STREAMS.values())))),
)
def test_random_multi_splits_give_the_same_events(name: str, cuts: list[int]) -> None:
    stream = STREAMS[name]
    assert parse(*split_at(stream, cuts)) == parse(stream)


_TEXT = st.text(st.characters(exclude_characters="\r", exclude_categories=("Cs",)))


@settings(max_examples=200, deadline=None)
@given(
    datas=st.lists(_TEXT, max_size=8),
    ending=st.sampled_from(["\n", "\r\n", "\r"]),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=6),
)
def test_any_data_round_trips_through_any_split(
    datas: list[str], ending: str, cuts: list[int]
) -> None:
    stream = "".join(
        "".join(f"data: {line}{ending}" for line in data.split("\n")) + ending for data in datas
    ).encode()
    assert [event.data for event in parse(*split_at(stream, cuts))] == datas
