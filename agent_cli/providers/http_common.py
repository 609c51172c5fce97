"""The conduct of a streamed request, shared by every HTTP wire format (SPEC §5).

A provider is two things: a wire format (the JSON body a `Request` becomes,
and the events each frame of the answer becomes) and the conduct of the
request (the HTTP client, TLS, retries and the error messages about them).
The second is the same for every service, so it lives here once, in
`StreamingProvider`; a wire format subclasses it with an encoder and a
decoder. `openai.py` (Chat Completions), `anthropic.py` (Messages) and
`responses.py` (OpenAI Responses) do.

The rules: failures before any output are retried (connection errors and
timeouts, 5xx, 429, 529, a stream that ends early) with `Retrying` events;
after output nothing is retried (`StreamInterrupted`: a replay would show a
second, different answer); other 4xx fail at once with the server's message,
the API key redacted. The per-delta path is bytes →
`SSEParser.feed_data` → `decoder.on_data`: each format here names its event
type inside the JSON, so SSE event names need not be built into objects.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import socket
import ssl
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any, ClassVar, Protocol, Self

import httpx

from agent_cli import __version__
from agent_cli.errors import (
    ConfigError,
    ContextTooLong,
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderProtocolError,
    StreamInterrupted,
)
from agent_cli.providers.base import ModelInfo, Request, Retrying, StreamEvent
from agent_cli.providers.local_hints import local_server_hint
from agent_cli.providers.retry import RetryPolicy, parse_retry_after
from agent_cli.providers.sse import SSEParser

__all__ = ["StreamingProvider", "WireDecoder", "error_text", "is_context_refusal", "parse_json"]

DEFAULT_CONNECT_TIMEOUT = 10.0  # seconds to establish a connection
DEFAULT_READ_TIMEOUT = 120.0  # seconds of silence between two chunks before giving up
DRAIN_SECONDS = 1.0  # after the end event, how long to wait for the response's end
ERROR_BODY_LIMIT = 64 * 1024  # bytes of an error body worth reading
MESSAGE_LIMIT = 300  # characters of a server's error message shown to the user
REASON_LIMIT = 80  # characters of a server's message in a `Retrying` reason
EXCERPT_LIMIT = 200  # characters of an unexpected frame or page shown to the user
REDACTED = "***"
USER_AGENT = f"agent-cli/{__version__}"
_JSON_HEADERS = {"Content-Type": "application/json"}
_PROXY_ENV = ("http_proxy", "https_proxy", "all_proxy")
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
# see parse_json; typeshed does not declare the decoder's (documented in its source) scan_once
_scan_json = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
# Request and response bodies at debug level (`--debug`); the log's handler redacts secrets.
log = logging.getLogger(__name__)

# What to tell the user to do after a given HTTP status (404 and 5xx: see _http_failure).
STATUS_HINTS = {
    401: "check the API key",
    403: "check the API key and that it may use this model",
    429: "the service is rate limiting; wait a little and try again",
    529: "the service is overloaded; try again in a little while",
}
_SERVER_ERROR_HINT = "the service failed; try again later"

# How services say a request does not fit the context window: OpenAI's error code,
# llama.cpp's error type, vLLM's and Anthropic's wording.
_CONTEXT_REFUSAL = re.compile(
    rb"context_length_exceeded|exceed_context_size_error|maximum context length"
    rb"|context window|longer than the maximum model length|too many tokens"
    rb"|exceeds the available context size|prompt is too long",
    re.IGNORECASE,
)


class WireDecoder(Protocol):
    """Turns the SSE data payloads of one answer into events (one decoder per attempt)."""

    done: bool  # the stream's end event came: stop reading
    produced: bool  # an event the user sees was returned: never retry after this
    finish_reason: str | None  # the answer is whole even if the end event goes missing

    @property
    def complete(self) -> bool: ...

    def on_data(self, data: str) -> list[StreamEvent]: ...

    def finish(self) -> list[StreamEvent]: ...


class StreamingProvider:
    """A `Provider` speaking some JSON-over-SSE API; subclasses supply the wire format.

    One `httpx.AsyncClient` is created on first use and kept, so a conversation
    reuses its connection; call `aclose()` when done. Consumers that stop
    iterating `stream()` early should close the generator so the response is
    released at once.
    """

    kind: ClassVar[str] = ""
    stream_path: ClassVar[str] = ""  # appended to the base URL for the streamed POST
    models_path: ClassVar[str] = "/models"
    api_name: ClassVar[str] = "an API stream"  # "check that it is <api_name>"
    base_url_hint: ClassVar[str] = "check the base URL"  # said of 404s and HTML pages
    # What a body that is not the API should make the user check besides the base URL
    # (empty: "that the service speaks <api_name>").
    api_check: ClassVar[str] = ""
    base_url_example: ClassVar[str] = "https://api.example.com/v1"  # for a malformed base URL
    status_hints: ClassVar[dict[int, str]] = STATUS_HINTS
    fixed_headers: ClassVar[dict[str, str]] = {}  # sent with every request (an API version)

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        name: str = "",
        headers: dict[str, str] | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = name or self.kind
        self.base_url = _checked_base_url(base_url, self.name, self.base_url_example)
        self._api_key = _checked_api_key(api_key, self.name)
        self._headers = dict(headers or {})
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._retry = retry or RetryPolicy()
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._where = f"model service at {self.base_url}"  # how messages name it
        self._stream_url = self.base_url + self.stream_path
        self._models_url = self.base_url + self.models_path

    # -- what a wire format supplies --------------------------------------------

    def _auth_headers(self, api_key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"}

    def _encode(self, request: Request) -> bytes:
        raise NotImplementedError

    def _decoder(self) -> WireDecoder:
        raise NotImplementedError

    def _model_infos(self, body: dict[str, Any]) -> list[ModelInfo]:
        """The model list of `GET models_path`; every format so far shares one shape."""
        return model_infos(body)

    # -- the Provider protocol ---------------------------------------------------

    def __repr__(self) -> str:
        # Never the key: reprs end up in logs and tracebacks.
        return f"{type(self).__name__}(name={self.name!r}, base_url={self.base_url!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client and its connections; the provider may be used again after."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """Send `request` and yield its answer as events, retrying failures before output."""
        payload = self._encode(request)
        debugging = log.isEnabledFor(logging.DEBUG)  # once: the per-delta path stays short
        attempt = 0
        while True:
            decoder = self._decoder()
            if debugging:
                log.debug("POST %s: %s", self._stream_url, self._text(payload, limit=None))
            try:
                async with self._http().stream(
                    "POST", self._stream_url, content=payload, headers=_JSON_HEADERS
                ) as response:
                    await self._check_stream_response(response)
                    # httpx types this async generator as a bare AsyncIterator (no aclose)
                    raw = response.aiter_bytes()
                    async with aclosing(raw) as chunks:  # type: ignore[type-var]
                        parser = SSEParser()
                        async for chunk in chunks:
                            for data in parser.feed_data(chunk):
                                if debugging:
                                    log.debug("%s data: %s", self.name, self._redact(data))
                                for event in decoder.on_data(data):
                                    yield event
                            if decoder.done:
                                await _drain(chunks)
                                break
                if decoder.complete:
                    for event in decoder.finish():
                        yield event
                    return
                failure = _Failed(
                    ProviderConnectionError(
                        f"The {self._where} ended the stream before the answer was complete "
                        "— try again."
                    ),
                    "the stream ended early",
                )
            except _Failed as exc:
                failure = exc
            except httpx.HTTPError as exc:
                failure = self._transport_failure(exc)
            except ProviderError as exc:
                failure = _Failed.of(exc)
            if decoder.finish_reason is not None and failure.is_connection:
                # The answer was whole; only its closing event went missing.
                for event in decoder.finish():
                    yield event
                return
            attempt += 1
            delay = self._retry_delay(failure, attempt, decoder.produced)
            yield Retrying(attempt, delay, failure.reason)
            await asyncio.sleep(delay)

    async def list_models(self) -> list[ModelInfo]:
        """The models the service offers, retried like a stream before output."""
        attempt = 0
        while True:
            try:
                return self._parse_models(await self._http().get(self._models_url))
            except _Failed as exc:
                failure = exc
            except httpx.HTTPError as exc:
                failure = self._transport_failure(exc)
            except ProviderError as exc:
                failure = _Failed.of(exc)
            attempt += 1
            await asyncio.sleep(self._retry_delay(failure, attempt, produced=False))

    # -- HTTP plumbing -------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        """The shared client, made on first use (so constructing a provider costs nothing)."""
        if self._client is None:
            headers = {"User-Agent": USER_AGENT, **self.fixed_headers, **self._headers}
            if self._api_key:
                headers.update(self._auth_headers(self._api_key))
            connect, read = self._connect_timeout, self._read_timeout
            self._client = httpx.AsyncClient(
                headers=headers,
                timeout=httpx.Timeout(connect=connect, read=read, write=read, pool=connect),
                transport=self._transport,
                verify=tls_verification(self.base_url),
            )
        return self._client

    def _retry_delay(self, failure: _Failed, attempt: int, produced: bool) -> float:
        """Seconds to wait before retry `attempt`, or raise if this failure is final."""
        error = failure.error
        if produced and error.retryable:
            raise StreamInterrupted(
                f"The connection to the {self._where} broke after the answer had started "
                f"({failure.reason}) — the answer is incomplete; try again."
            ) from error
        if not error.retryable or not self._retry.allows(attempt):
            raise error
        retry_after = error.retry_after if isinstance(error, ProviderHTTPError) else None
        return self._retry.delay(attempt, retry_after)

    async def _check_stream_response(self, response: httpx.Response) -> None:
        """Raise unless `response` is a successful event stream."""
        if not 200 <= response.status_code < 300:
            body = await _read_limited(response)
            if log.isEnabledFor(logging.DEBUG):
                log.debug("%s answered %d: %s", self.name, response.status_code, self._text(body))
            raise self._http_failure(response, body)
        content_type = response.headers.get("content-type", "")
        if "event-stream" not in content_type and content_type:
            raise self._unexpected_body(content_type, await _read_limited(response))

    def _parse_models(self, response: httpx.Response) -> list[ModelInfo]:
        if log.isEnabledFor(logging.DEBUG):
            status, text = response.status_code, self._text(response.content)
            log.debug("GET %s: %d %s", self._models_url, status, text)
        if not 200 <= response.status_code < 300:
            raise self._http_failure(response, response.content)
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            content_type = response.headers.get("content-type", "")
            raise self._unexpected_body(content_type, response.content)
        return self._model_infos(body)

    # -- error messages --------------------------------------------------------------

    def _redact(self, text: str) -> str:
        """Remove the API key from text that came from elsewhere (servers echo keys)."""
        if self._api_key and self._api_key in text:
            return text.replace(self._api_key, REDACTED)
        return text

    def _text(self, body: bytes, limit: int | None = ERROR_BODY_LIMIT) -> str:
        """A body for the debug log: decoded, cut to `limit` bytes, and without the key."""
        return self._redact(body[:limit].decode("utf-8", "replace"))

    def _http_failure(self, response: httpx.Response, body: bytes) -> _Failed:
        """An error status, with the server's own message and what to do about it."""
        status = response.status_code
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        if 300 <= status < 400:
            location = self._redact(response.headers.get("location", "somewhere else"))
            message = f"The {self._where} answered {status}, redirecting to {location} — use "
            message += "that address as the base URL."
            return _Failed(ProviderHTTPError(message, status), f"redirected ({status})")
        detail = self._redact(server_message(body) or response.reason_phrase or "no details")
        hint = self.base_url_hint + " and the model name" if status == 404 else ""
        hint = (
            hint or self.status_hints.get(status) or (_SERVER_ERROR_HINT if status >= 500 else "")
        )
        message = f"The {self._where} answered {status}: {detail}" + (f" — {hint}" if hint else "")
        reason = f"HTTP {status}: {shorten(detail, REASON_LIMIT)}"
        if is_context_refusal(status, body):
            return _Failed(ContextTooLong(message, status), reason)
        return _Failed(ProviderHTTPError(message, status, retry_after), reason)

    def _unexpected_body(self, content_type: str, body: bytes) -> ProviderError:
        """A success status whose body is not the API: an HTML page, a JSON error, other."""
        text = body.decode("utf-8", "replace").strip()
        if "html" in content_type or text[:15].lower().startswith(("<!doctype", "<html")):
            return ProviderProtocolError(
                f"The {self._where} answered with an HTML page, not {self.api_name} — "
                f"{self.base_url_hint}."
            )
        if "json" in content_type and (detail := server_message(body)):
            return ProviderError(f"The {self._where} answered: {self._redact(detail)}")
        return ProviderProtocolError(
            f"The {self._where} answered with {content_type or 'no content type'} instead of an "
            f"event stream: {self._redact(text[:EXCERPT_LIMIT])!r} — {self.base_url_hint} and "
            f"{self.api_check or 'that the service speaks ' + self.api_name}."
        )

    def _transport_failure(self, exc: httpx.HTTPError) -> _Failed:
        """Translate an httpx error into ours, with a short reason for `Retrying`."""
        detail = self._redact(str(exc) or type(exc).__name__)
        if isinstance(exc, httpx.ConnectTimeout):
            reason = f"no connection within {self._connect_timeout:g} s"
            message = f"Could not connect to the {self._where} within "
            message += f"{self._connect_timeout:g} s — check that it is running and reachable."
        elif isinstance(exc, httpx.ConnectError):
            return self._connect_failure(exc, detail)
        elif isinstance(exc, httpx.ReadTimeout):
            reason = f"nothing arrived for {self._read_timeout:g} s"
            message = f"The {self._where} sent nothing for {self._read_timeout:g} s — it may be "
            message += "stuck or overloaded; try again or raise the read timeout."
        elif isinstance(exc, httpx.TransportError):
            reason = f"the connection broke: {detail}"
            message = f"The connection to the {self._where} broke ({detail}) — try again."
        else:  # e.g. a body that fails to decompress: the service is not speaking the API
            message = f"The {self._where} sent a response that could not be read ({detail}) — "
            return _Failed(ProviderProtocolError(message + "check the base URL."), detail)
        return _Failed(ProviderConnectionError(message), reason)

    def _connect_failure(self, exc: httpx.ConnectError, detail: str) -> _Failed:
        """No connection: say whether the name, TLS or the server itself was the trouble.

        A server that sent a certificate we do not trust is running, so "start your
        server" would mislead; and no retry changes a certificate or makes a name exist.
        """
        cause = _root_cause(exc)
        retryable = True
        if isinstance(cause, ssl.SSLCertVerificationError):
            message = f"The certificate of the {self._where} could not be verified "
            message += f"({cause.verify_message or detail}) — if you trust this server, point "
            message += "SSL_CERT_FILE at the certificate that signs it; otherwise check the "
            message += "base URL."
            retryable = False
        elif isinstance(cause, ssl.SSLError):
            message = f"Could not set up TLS with the {self._where} ({detail}) — check that "
            message += "the server speaks https, or use http:// in the base URL if it does not."
        elif isinstance(cause, socket.gaierror):
            host = httpx.URL(self.base_url).host
            message = f"Could not find the host {host} of the {self._where} — check the base "
            message += "URL and the network connection."
            retryable = cause.errno != socket.EAI_NONAME  # "no such name", not a hiccup
        else:
            message = f"Could not reach the {self._where} ({detail}) — check that it is "
            message += "running and that the base URL is right."
            message = local_server_hint(self.base_url, self.name) or message
        error = ProviderConnectionError(message)
        error.retryable = retryable
        return _Failed(error, f"could not connect: {detail}")


def _root_cause(exc: BaseException) -> BaseException:
    """The innermost exception behind `exc` (httpx wraps httpcore, which wraps the OS's)."""
    seen = {id(exc)}
    while (inner := exc.__cause__ or exc.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        exc = inner
    return exc


class _Failed(Exception):
    """Control flow inside the provider: an attempt failed. Carries the error to raise
    if the failure is final and a short reason for the `Retrying` event if it is not."""

    def __init__(self, error: ProviderError, reason: str) -> None:
        super().__init__(reason)
        self.error = error
        self.reason = reason

    @classmethod
    def of(cls, error: ProviderError) -> _Failed:
        if isinstance(error, ProviderHTTPError):
            return cls(error, f"the service reported error {error.status}")
        return cls(error, str(error))

    @property
    def is_connection(self) -> bool:
        return isinstance(self.error, ProviderConnectionError)


# -- helpers the wire formats share ------------------------------------------------------


def parse_json(data: str) -> Any:
    """`json.loads` minus its two whitespace-skipping regex passes (a third of a small
    frame's parse); anything unusual goes to `json.loads`, which handles it or raises."""
    try:
        value, end = _scan_json(data, 0)
    except StopIteration:
        return json.loads(data)
    if end != len(data):
        return json.loads(data)
    return value


def error_text(error: object) -> str:
    """The message inside an error value: a string, or a dict's `message`/`detail`."""
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        for key in ("message", "detail", "error"):
            value = error.get(key)
            if isinstance(value, str) and value:
                return value
    return ""


def is_context_refusal(status: int, body: bytes) -> bool:
    """Whether an error answer means "the request is too long for the model"."""
    return status in (400, 413, 422) and _CONTEXT_REFUSAL.search(body) is not None


def server_message(body: bytes) -> str:
    """The human part of an error body: JSON `error.message`, `error`, `message`,
    `detail`, an HTML page's title, or the plain text — on one line, shortened."""
    text = body.decode("utf-8", "replace").strip()
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        message = error_text(parsed.get("error")) or error_text(parsed)
    elif text[:1] == "<":
        title = _HTML_TITLE.search(text)
        message = title.group(1) if title else "an HTML page"
    else:
        message = text
    return shorten(" ".join(message.split()), MESSAGE_LIMIT)


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tls_verification(base_url: str) -> ssl.SSLContext | bool:
    """Certificate checking for the client.

    Loading the CA bundle costs tens of milliseconds, which is wasted on a
    plain-http local server. There, without a proxy (which could be https),
    TLS is never used, so a context that trusts nothing (fails closed) is enough.
    """
    if base_url.lower().startswith("https://") or any(
        os.environ.get(name) or os.environ.get(name.upper()) for name in _PROXY_ENV
    ):
        return True
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _checked_base_url(base_url: str, name: str, example: str) -> str:
    """The base URL without a trailing slash; only http(s) makes sense here."""
    url = base_url.strip().rstrip("/")
    if not url.lower().startswith(("http://", "https://")):
        raise ConfigError(
            f"The base URL for provider {name!r} is {base_url!r}, which is not an http(s) "
            f"address — write it like {example}."
        )
    return url


def _checked_api_key(api_key: str | None, name: str) -> str | None:
    """Strip the newline a key file usually ends with; refuse keys a header cannot carry."""
    if api_key is None:
        return None
    key = api_key.strip()
    if not key.isprintable():
        raise ConfigError(
            f"The API key for provider {name!r} contains control characters — set it again."
        )
    return key or None


async def _read_limited(response: httpx.Response) -> bytes:
    """Up to `ERROR_BODY_LIMIT` bytes of a body we only want to quote from."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= ERROR_BODY_LIMIT:
            break
    return bytes(body)


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what follows the end event so the connection can be reused, but never wait long."""
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in chunks:
                pass
    except (TimeoutError, httpx.HTTPError):
        return  # the answer is whole; the connection is simply not reused


def model_infos(body: dict[str, Any]) -> list[ModelInfo]:
    """Unique models in listing order; the context window when the server says it."""
    seen: dict[str, ModelInfo] = {}
    for item in [*_listed(body.get("data")), *_listed(body.get("models"))]:
        if not isinstance(item, dict):
            continue
        model_id = item.get("id") or item.get("model") or item.get("name")
        if not isinstance(model_id, str) or model_id in seen:
            continue
        window = item.get("max_model_len") or item.get("context_length")
        extra = {key: value for key, value in item.items() if key != "id"}
        seen[model_id] = ModelInfo(model_id, window if type(window) is int else None, extra)
    return list(seen.values())


def _listed(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


class PendingCall:
    """A tool call being streamed: its number in the round, id, name and argument pieces."""

    __slots__ = ("id", "index", "name", "parts")

    def __init__(self, index: int, call_id: str, name: str) -> None:
        self.index = index
        self.id = call_id
        self.name = name
        self.parts: list[str] = []
