"""The fake server itself: its builders render what they promise and it serves them as told."""

from __future__ import annotations

import contextlib
import json
import socket
import threading

import httpx
import pytest

from tests.support.fake_openai import (
    EMPTY_QUEUE_MESSAGE,
    WRITE_BLOCK,
    FakeOpenAI,
    chunk,
    frames,
    http_error,
    raw,
    text,
    tool_calls,
)
from tests.support.waiting import FOREVER, GENEROUS, eventually_sync


def data_frames(body: bytes) -> list[str]:
    return [line[6:] for line in body.decode().split("\n") if line.startswith("data: ")]


def deltas(body: bytes, key: str) -> list[str]:
    found = []
    for data in data_frames(body):
        if data == "[DONE]":
            continue
        for choice in json.loads(data)["choices"]:
            if choice["delta"].get(key):
                found.append(choice["delta"][key])
    return found


def post(fake: FakeOpenAI, client: httpx.Client) -> httpx.Response:
    return client.post(f"{fake.base_url}/chat/completions", json={"model": "m1", "messages": []})


def test_text_is_one_delta_per_word_and_ends_with_usage_and_done() -> None:
    body = text("Hello  big world", reasoning="hm ok", usage=(3, 4)).body
    assert deltas(body, "content") == ["Hello  ", "big ", "world"]
    assert deltas(body, "reasoning_content") == ["hm ", "ok"]
    frames_ = data_frames(body)
    assert frames_[-1] == "[DONE]"
    assert json.loads(frames_[-2])["usage"]["completion_tokens"] == 4


def test_text_with_chunks_makes_that_many_deltas() -> None:
    body = text("abcdefghij" * 2000, chunks=20_000).body
    pieces = data_frames(body)[1:-3]  # less the role frame, finish, usage and [DONE]
    assert len(pieces) == 20_000
    assert "".join(deltas(body, "content")) == "abcdefghij" * 2000


def test_tool_calls_fragment_arguments_and_leave_out_empty_ids() -> None:
    body = tool_calls(("c1", "ls", '{"path": "src/deep/dir"}'), ("", "pwd", "{}")).body
    fragments = [
        call
        for data in data_frames(body)[:-1]
        for choice in json.loads(data)["choices"]
        for call in choice["delta"].get("tool_calls", [])
    ]
    first_call = [f for f in fragments if f["index"] == 0]
    assert len(first_call) > 2
    assert "".join(f["function"]["arguments"] for f in first_call) == '{"path": "src/deep/dir"}'
    assert "id" not in next(f for f in fragments if f["index"] == 1)


def test_frames_renders_sse_with_optional_done() -> None:
    assert frames({"a": 1}) == b'data: {"a": 1}\n\ndata: [DONE]\n\n'
    assert frames({"a": 1}, done=False) == b'data: {"a": 1}\n\n'


def test_serves_scripted_answers_in_order_and_records_requests() -> None:
    with FakeOpenAI() as fake, httpx.Client() as client:
        fake.add(text("one"), http_error(429, "slow", retry_after=1.5))
        first = post(fake, client)
        assert first.status_code == 200
        assert first.headers["content-type"] == "text/event-stream"
        assert deltas(first.content, "content") == ["one"]
        second = post(fake, client)
        assert second.status_code == 429
        assert second.headers["retry-after"] == "1.5"
        assert second.json()["error"]["message"] == "slow"
        empty = post(fake, client)
        assert empty.status_code == 500
        assert empty.json()["error"]["message"] == EMPTY_QUEUE_MESSAGE
        assert fake.requests == [{"model": "m1", "messages": []}] * 3
        assert fake.request_headers[0]["content-type"] == "application/json"
        assert fake.connections_accepted == 1


def test_split_one_delivers_the_same_bytes() -> None:
    body = frames(chunk({"content": "é😀"}))
    with FakeOpenAI() as fake, httpx.Client() as client:
        fake.add(raw(body, split=1))
        with client.stream("POST", f"{fake.base_url}/chat/completions", json={}) as response:
            pieces = list(response.iter_raw())
    assert b"".join(pieces) == body
    assert len(pieces) > 1


def test_drop_breaks_the_connection_mid_body() -> None:
    with FakeOpenAI() as fake, httpx.Client() as client:
        fake.add(raw(frames(chunk({"content": "x"}), done=False), drop=True))
        with pytest.raises(httpx.RemoteProtocolError):
            post(fake, client)


def test_models_listing_and_unknown_paths() -> None:
    with FakeOpenAI(models=["a", "b"]) as fake, httpx.Client() as client:
        listing = client.get(f"{fake.base_url}/models").json()
        assert listing == {
            "object": "list",
            "data": [{"id": "a", "object": "model"}, {"id": "b", "object": "model"}],
        }
        assert client.get(f"{fake.base_url}/nope").status_code == 404
        assert fake.paths == ["GET /v1/models", "GET /v1/nope"]


def test_stop_leaves_no_threads_even_with_open_and_stalled_connections() -> None:
    before = set(threading.enumerate())
    fake = FakeOpenAI()
    fake.add(raw(b"data: {}\n\n", stall=FOREVER))
    with httpx.Client() as idle, httpx.Client(timeout=GENEROUS) as stalled:
        idle.get(f"{fake.base_url}/models")  # leaves a kept-alive connection open
        reader = threading.Thread(target=lambda: _read_until_closed(fake, stalled))
        reader.start()
        eventually_sync(lambda: fake.requests, "the stalled request to arrive")
        # stop() breaks the stall (an hour long) and the connections: it returns, and the
        # reader's response ends, long before the bound (only a hang gets near it).
        stopper = threading.Thread(target=fake.stop)
        stopper.start()
        stopper.join(timeout=GENEROUS)
        reader.join(timeout=GENEROUS)
        assert not stopper.is_alive() and not reader.is_alive()
    left = [thread.name for thread in threading.enumerate() if thread not in before]
    assert left == [], f"threads still running after stop(): {left}"


def _read_until_closed(fake: FakeOpenAI, client: httpx.Client) -> None:
    with contextlib.suppress(httpx.HTTPError):  # stop() breaks the stalled response: the point
        post(fake, client)


def test_a_20000_delta_answer_is_served_quickly() -> None:
    """In blocks of WRITE_BLOCK bytes, not one write (and packet) per delta: the cost of
    serving a flood is a few writes, however many deltas it has."""
    scripted = text("x" * 20_000, chunks=20_000)
    with FakeOpenAI() as fake, httpx.Client() as client:
        fake.add(scripted, scripted)
        response = post(fake, client)
        chunks = raw_chunks(fake)
    assert response.content == scripted.body
    assert b"".join(chunks) == scripted.body
    assert len(chunks) == -(-len(scripted.body) // WRITE_BLOCK) > 1
    assert {len(piece) for piece in chunks[:-1]} == {WRITE_BLOCK}


def raw_chunks(fake: FakeOpenAI) -> list[bytes]:
    """The chunks of one chat answer as they come off the socket (chunked encoding)."""
    address = httpx.URL(fake.base_url)
    request = json.dumps({"model": "m1", "messages": []}).encode()
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {address.host}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(request)}\r\n"
        "Connection: close\r\n\r\n"
    )
    with socket.create_connection((address.host, address.port), timeout=GENEROUS) as sock:
        sock.sendall(head.encode() + request)
        received = b"".join(iter(lambda: sock.recv(1 << 16), b""))
    headers, _, rest = received.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in headers.lower()
    chunks = []
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return chunks
        chunks.append(rest[:size])
        rest = rest[size + 2 :]
