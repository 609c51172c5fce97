"""A loopback fake of an OpenAI-compatible server that replays scripted answers.

A real TCP server on 127.0.0.1 (a free port) in a background thread, so it
serves in-process tests, `agent` run as a subprocess, and benchmarks alike:

    with FakeOpenAI(models=["m1"]) as fake:
        fake.add(text("Hello there"), http_error(429, "slow down", retry_after=0.05))
        ... point a client at fake.base_url ...
        assert fake.requests[0]["stream"] is True

Each POST /v1/chat/completions takes the next scripted response; bodies are
rendered to bytes when scripted, so serving a 20,000-delta answer costs one
big write. Streams use chunked transfer encoding like real servers, which lets
`drop` break a response mid-body in a way the client notices.

Faults worth a real server: `long_text` streams an answer of any size made as
it is sent (the fake never holds it whole), and `FakeOpenAI(certificate=...)`
serves HTTPS with a certificate of the test's making (`self_signed_certificate`),
so a client that does not trust it fails the TLS handshake for real.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import ssl
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = [
    "FakeOpenAI",
    "Scripted",
    "chunk",
    "frames",
    "held",
    "http_error",
    "json_body",
    "long_text",
    "raw",
    "self_signed_certificate",
    "text",
    "tool_calls",
]

HOST = "127.0.0.1"
WRITE_BLOCK = 64 * 1024  # bytes per chunk when a body is not split on purpose
POLL_SECONDS = 0.01  # how often the accept loop checks for stop(); bounds stop()'s latency
IDLE_SECONDS = 30.0  # a connection idle this long is closed (a safety net for stray clients)
ARGUMENT_PIECES = 4  # fragments per tool call's arguments
LONG_TEXT_PIECE = "0123456789abcdef" * 64  # one delta of `long_text`: 1 KiB, easy to check
HOLD_LIMIT = 120.0  # seconds a `held` answer waits for its gate at most (a test that failed)
CERTIFICATE_DAYS = 2  # a test certificate needs to outlive only the test
EMPTY_QUEUE_MESSAGE = "fake server: no scripted response left"
COMPLETION_ID = "chatcmpl-fake"
_WORD = re.compile(r"\s*\S+\s*|\s+")


@dataclass(frozen=True)
class Scripted:
    """One scripted answer. `split` writes the body in pieces of that many bytes
    (each flushed as its own chunk), `delay` waits between pieces, `drop` breaks
    the connection after the body, `stall` waits that long before finishing.
    `more` makes pieces to send after `body`, each only when its turn comes, so
    an answer of any size streams without being held whole (chunked streams only)."""

    body: bytes
    status: int = 200
    content_type: str = "text/event-stream"
    headers: tuple[tuple[str, str], ...] = ()
    split: int | None = None
    delay: float = 0.0
    drop: bool = False
    stall: float = 0.0
    more: Callable[[], Iterable[bytes]] | None = None

    def replace(self, **changes: Any) -> Scripted:
        """A copy with some options changed, e.g. `text("hi").replace(split=1)`."""
        return replace(self, **changes)


# -- builders --------------------------------------------------------------------


def frames(*chunks: dict[str, Any], done: bool = True) -> bytes:
    """SSE bytes for these chat.completion.chunk dicts, then `data: [DONE]` unless done=False."""
    body = b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks)
    return body + b"data: [DONE]\n\n" if done else body


def chunk(
    delta: dict[str, Any] | None = None,
    *,
    finish_reason: str | None = None,
    model: str = "m1",
    usage: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """One chat.completion.chunk dict; with no delta and no finish reason, empty choices."""
    frame: dict[str, Any] = {
        "id": COMPLETION_ID,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [],
    }
    if delta is not None or finish_reason is not None:
        frame["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}]
    if usage is not None:
        frame["usage"] = _usage(usage)
    return frame


def text(
    answer: str,
    *,
    chunks: int | None = None,
    reasoning: str = "",
    usage: tuple[int, int] | None = (10, 5),
    model: str = "m1",
) -> Scripted:
    """A complete streamed answer: reasoning deltas, text deltas, stop, usage, [DONE]."""
    parts = [frames(chunk({"role": "assistant", "content": ""}, model=model), done=False)]
    parts.append(_delta_frames("reasoning_content", _words(reasoning), model))
    pieces = _words(answer) if chunks is None else _even_pieces(answer, chunks)
    parts.append(_delta_frames("content", pieces, model))
    parts.append(_ending("stop", usage, model))
    return Scripted(b"".join(parts))


def tool_calls(
    *calls: tuple[str, str, str],
    text: str = "",
    usage: tuple[int, int] | None = (10, 5),
    model: str = "m1",
    interleave: bool = False,
) -> Scripted:
    """Calls `(id, name, arguments_json)`, arguments in fragments ("" id: omitted)."""
    parts = [frames(chunk({"role": "assistant", "content": None}, model=model), done=False)]
    parts.append(_delta_frames("content", _words(text), model))
    per_call = [_call_fragments(index, *call) for index, call in enumerate(calls)]
    ordered = _round_robin(per_call) if interleave else [f for frags in per_call for f in frags]
    parts.append(frames(*(chunk({"tool_calls": [f]}, model=model) for f in ordered), done=False))
    parts.append(_ending("tool_calls", usage, model))
    return Scripted(b"".join(parts))


def long_text(size: int, *, usage: tuple[int, int] | None = (10, 5)) -> Scripted:
    """A streamed answer of `size` characters (a multiple of 1 KiB) in 1 KiB deltas of
    `LONG_TEXT_PIECE`, made as it is sent: a 50 MB answer costs the fake no memory."""
    count, rest = divmod(size, len(LONG_TEXT_PIECE))
    if rest:
        raise ValueError(f"long_text: size must be a multiple of {len(LONG_TEXT_PIECE)}")
    frame = _delta_frames("content", [LONG_TEXT_PIECE], "m1")
    per_write = max(1, WRITE_BLOCK // len(frame))

    def pieces() -> Iterator[bytes]:
        for start in range(0, count, per_write):
            yield frame * min(per_write, count - start)
        yield _ending("stop", usage, "m1")

    opening = frames(chunk({"role": "assistant", "content": ""}), done=False)
    return Scripted(opening, more=pieces)


def held(scripted: Scripted, gate: threading.Event, *, shown: int = 2) -> Scripted:
    """`scripted` (a streamed answer) sent up to its `shown`-th SSE event, then held until
    the test sets `gate`, then the rest: "while the answer streams" as a fact, not a race.
    A gate never set lets the answer go on after `HOLD_LIMIT` (the test has failed)."""
    events = [event + b"\n\n" for event in scripted.body.split(b"\n\n") if event]
    first, rest = b"".join(events[:shown]), b"".join(events[shown:])

    def after_the_gate() -> Iterator[bytes]:
        gate.wait(HOLD_LIMIT)
        yield rest

    return scripted.replace(body=first, more=after_the_gate)


def http_error(
    status: int,
    message: str,
    *,
    retry_after: float | None = None,
    body: bytes | None = None,
    content_type: str = "application/json",
) -> Scripted:
    """An error status with an OpenAI-style `{"error": {"message"}}` body (or `body` as given)."""
    if body is None:
        error = {"message": message, "type": "fake_error", "code": status}
        body = json.dumps({"error": error}).encode()
    headers = () if retry_after is None else (("Retry-After", f"{retry_after:g}"),)
    return Scripted(body, status=status, content_type=content_type, headers=headers)


def raw(
    body: bytes,
    *,
    content_type: str = "text/event-stream",
    split: int | None = None,
    delay: float = 0.0,
    drop: bool = False,
    stall: float = 0.0,
) -> Scripted:
    """These exact body bytes with status 200, with the given delivery options."""
    return Scripted(
        body, content_type=content_type, split=split, delay=delay, drop=drop, stall=stall
    )


def json_body(value: Any, *, status: int = 200) -> Scripted:
    """A plain JSON response (for scripting GET /v1/models answers)."""
    return Scripted(json.dumps(value).encode(), status=status, content_type="application/json")


def _usage(usage: tuple[int, int]) -> dict[str, int]:
    prompt, completion = usage
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _words(answer: str) -> list[str]:
    """One piece per word, each keeping the spaces around it, so pieces join to `answer`."""
    return _WORD.findall(answer)


def _even_pieces(answer: str, count: int) -> list[str]:
    """`count` consecutive pieces of about equal length (some empty if count > len)."""
    size = len(answer)
    return [answer[i * size // count : (i + 1) * size // count] for i in range(count)]


def _delta_frames(key: str, pieces: list[str], model: str) -> bytes:
    """Frames for many deltas of one kind, rendered from a template (fast for 20,000)."""
    if not pieces:
        return b""
    marker = "\x00"
    template = json.dumps(chunk({key: marker}, model=model))
    head, tail = template.split(json.dumps(marker))
    lines = [f"data: {head}{json.dumps(piece)}{tail}\n\n" for piece in pieces]
    return "".join(lines).encode()


def _ending(reason: str, usage: tuple[int, int] | None, model: str) -> bytes:
    final = [chunk({}, finish_reason=reason, model=model)]
    if usage is not None:
        final.append(chunk(None, usage=usage, model=model))
    return frames(*final)


def _call_fragments(index: int, call_id: str, name: str, arguments: str) -> list[dict[str, Any]]:
    """The first fragment names the call; the arguments follow in a few pieces."""
    first: dict[str, Any] = {
        "index": index,
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }
    if call_id:
        first["id"] = call_id
    size = max(1, -(-len(arguments) // ARGUMENT_PIECES))
    rest = [
        {"index": index, "function": {"arguments": arguments[i : i + size]}}
        for i in range(0, len(arguments), size)
    ]
    return [first, *rest]


def _round_robin(groups: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for position in range(max((len(g) for g in groups), default=0)):
        out.extend(group[position] for group in groups if position < len(group))
    return out


# -- the server ------------------------------------------------------------------


@dataclass
class _State:
    """What the handler threads share with the test: the queues and the record."""

    models: list[str]
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    chat: deque[Scripted] = field(default_factory=deque)
    model_answers: deque[Scripted] = field(default_factory=deque)
    props: dict[str, Any] | None = None  # llama.cpp's GET /props answer (None: 404)
    requests: list[dict[str, Any]] = field(default_factory=list)
    request_headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    connections: set[socket.socket] = field(default_factory=set)
    accepted: int = 0
    tls_refused: int = 0  # TLS handshakes that failed (the client refused the certificate)
    threads: list[threading.Thread] = field(default_factory=list)


class _Server(ThreadingHTTPServer):
    """Handler threads are daemons, so a fake someone forgot to stop cannot hold up the
    interpreter's exit, yet they are tracked so that stop() can join every one."""

    state: _State
    tls: ssl.SSLContext | None = None

    def finish_request(self, request: Any, client_address: Any) -> None:
        """With TLS, the handshake happens here, in the connection's own thread: a client
        that refuses the certificate then fails only its own connection."""
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(IDLE_SECONDS)
        try:
            secure = self.tls.wrap_socket(request, server_side=True)
        except OSError:  # ssl.SSLError included: the client hung up on our certificate
            with self.state.lock:
                self.state.tls_refused += 1
            return
        with secure:
            super().finish_request(secure, client_address)

    def handle_error(self, request: object, client_address: object) -> None:
        """A client hanging up early (a stopped run, a benchmark) is normal here: no traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self.process_request_thread, args=(request, client_address), daemon=True
        )
        self.state.threads = [t for t in self.state.threads if t.is_alive()]
        self.state.threads.append(thread)
        thread.start()

    def server_close(self) -> None:
        super().server_close()
        for thread in self.state.threads:
            thread.join()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # split=1 writes must not wait on delayed ACKs
    timeout = IDLE_SECONDS
    server: _Server

    def setup(self) -> None:
        super().setup()
        state = self.server.state
        with state.lock:
            state.accepted += 1
            state.connections.add(self.connection)
            if state.stopping.is_set():  # accepted just as stop() began: end it now
                self._abort()

    def finish(self) -> None:
        with self.server.state.lock:
            self.server.state.connections.discard(self.connection)
        with contextlib.suppress(OSError):  # the peer is gone; nothing left to flush
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read assertions, not access logs."""

    def do_GET(self) -> None:
        state = self.server.state
        state.paths.append(f"GET {self.path}")
        if self.path == "/props" and state.props is not None:
            self._send(json_body(state.props))
            return
        if self.path.partition("?")[0].rstrip("/") != "/v1/models":
            self._send(_not_found(self.path))
            return
        with state.lock:
            scripted = state.model_answers.popleft() if state.model_answers else None
        if scripted is None:
            listing = [{"id": model, "object": "model"} for model in state.models]
            scripted = json_body({"object": "list", "data": listing})
        self._send(scripted)

    def do_POST(self) -> None:
        state = self.server.state
        state.paths.append(f"POST {self.path}")
        length = int(self.headers.get("Content-Length") or 0)
        payload = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(_not_found(self.path))
            return
        try:
            body = json.loads(payload)
        except ValueError:
            body = {"_unparsed": payload.decode("utf-8", "replace")}
        with state.lock:
            state.requests.append(body)
            state.request_headers.append({k.lower(): v for k, v in self.headers.items()})
            scripted = state.chat.popleft() if state.chat else None
        self._send(scripted or http_error(500, EMPTY_QUEUE_MESSAGE))

    def _send(self, scripted: Scripted) -> None:
        try:
            self._write_response(scripted)
        except OSError:  # the client went away (a timeout or cancel on its side)
            self.close_connection = True

    def _write_response(self, scripted: Scripted) -> None:
        stopping = self.server.state.stopping
        chunked = scripted.status == 200 and scripted.content_type.startswith("text/event-stream")
        self.send_response(scripted.status)
        self.send_header("Content-Type", scripted.content_type)
        for name, value in scripted.headers:
            self.send_header(name, value)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Cache-Control", "no-cache")
        elif scripted.drop:
            self.send_header("Content-Length", str(len(scripted.body) + WRITE_BLOCK))
        else:
            self.send_header("Content-Length", str(len(scripted.body)))
        self.end_headers()
        block = scripted.split or WRITE_BLOCK
        body = scripted.body
        for start in range(0, len(body), block):
            piece = body[start : start + block]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            if scripted.delay and start + block < len(body) and stopping.wait(scripted.delay):
                break  # stop() was called
        if chunked and scripted.more is not None:
            for piece in scripted.more():
                if stopping.is_set():
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        if scripted.stall:
            stopping.wait(scripted.stall)  # cut short by stop()
        if scripted.drop or stopping.is_set():  # a stopped server does not finish either
            self._abort()
        elif chunked:
            self.wfile.write(b"0\r\n\r\n")

    def _abort(self) -> None:
        """Break the connection without finishing the response."""
        self.close_connection = True
        _shutdown(self.connection)


def _shutdown(connection: socket.socket) -> None:
    """Shut a socket both ways, which wakes any thread blocked on it."""
    with contextlib.suppress(OSError):  # already closed by the peer
        connection.shutdown(socket.SHUT_RDWR)


def _not_found(path: str) -> Scripted:
    return http_error(404, f"fake server: no route for {path}")


class FakeOpenAI:
    """The fake server; a context manager that starts on enter and stops on exit."""

    def __init__(
        self, models: list[str] | None = None, *, certificate: tuple[Path, Path] | None = None
    ) -> None:
        """`certificate` (certificate file, key file): serve HTTPS with it."""
        self._state = _State(models=list(models) if models is not None else ["m1"])
        self._server = _Server((HOST, 0), _Handler)
        self._server.state = self._state
        if certificate is not None:
            self._server.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self._server.tls.load_cert_chain(*certificate)
        self.port: int = self._server.server_address[1]
        scheme = "http" if certificate is None else "https"
        self.base_url = f"{scheme}://{HOST}:{self.port}/v1"
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": POLL_SECONDS},
            name=f"fake-openai-{self.port}",
            daemon=True,
        )
        self._thread.start()
        self._stopped = False

    @property
    def requests(self) -> list[dict[str, Any]]:
        """JSON bodies received on /chat/completions, in order."""
        return self._state.requests

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """Headers (lower-cased names) of those requests, in the same order."""
        return self._state.request_headers

    @property
    def paths(self) -> list[str]:
        """Every request as "METHOD /path", in order (chat and models alike)."""
        return self._state.paths

    @property
    def connections_accepted(self) -> int:
        """TCP connections accepted so far (to check that clients reuse connections)."""
        return self._state.accepted

    @property
    def tls_refused(self) -> int:
        """TLS handshakes that failed: a client that would not trust the certificate."""
        return self._state.tls_refused

    @property
    def pending(self) -> int:
        """Scripted chat responses not yet served."""
        return len(self._state.chat)

    def add(self, *responses: Scripted) -> None:
        """Queue answers for the next POSTs to /chat/completions, in order."""
        with self._state.lock:
            self._state.chat.extend(responses)

    def serve_props(self, body: dict[str, Any]) -> None:
        """Answer llama.cpp's `GET /props` (the context window it runs with) with `body`."""
        self._state.props = body

    def add_models(self, *responses: Scripted) -> None:
        """Queue answers for the next GETs of /models (the default listing after)."""
        with self._state.lock:
            self._state.model_answers.extend(responses)

    def stop(self) -> None:
        """Stop serving, break open connections, and wait for every thread to end."""
        if self._stopped:
            return
        self._stopped = True
        self._state.stopping.set()
        self._server.shutdown()
        with self._state.lock:
            open_connections = list(self._state.connections)
        for connection in open_connections:
            _shutdown(connection)
        self._server.server_close()  # joins the handler threads (after shutdown: no new ones)
        self._thread.join()

    def __enter__(self) -> FakeOpenAI:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def self_signed_certificate(folder: Path) -> tuple[Path, Path] | None:
    """A certificate for 127.0.0.1 that signs itself, and its key, written to `folder`;
    None when neither the `cryptography` package nor an `openssl` program is here."""
    certificate, key = folder / "cert.pem", folder / "key.pem"
    try:
        _write_certificate_with_cryptography(certificate, key)
    except ImportError:
        openssl = shutil.which("openssl")
        if openssl is None:
            return None
        subprocess.run(
            [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={HOST}",
             "-addext", f"subjectAltName=IP:{HOST}", "-days", str(CERTIFICATE_DAYS),
             "-keyout", str(key), "-out", str(certificate)],
            check=True,
            capture_output=True,
        )  # fmt: skip
    return certificate, key


def _write_certificate_with_cryptography(certificate: Path, key_file: Path) -> None:
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)])
    now = datetime.datetime.now(datetime.UTC)
    public, address = key.public_key(), ipaddress.ip_address(HOST)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=CERTIFICATE_DAYS))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(address)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    certificate.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
