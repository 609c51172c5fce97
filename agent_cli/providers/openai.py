"""OpenAI-compatible `/chat/completions` streaming (llama.cpp, vLLM, Ollama, OpenAI; SPEC §5).

One request in, typed stream events out. The per-delta path is kept short on
purpose — bytes → `SSEParser` → one JSON parse → a few dict lookups → one
event — because a long answer is tens of thousands of deltas and the user is
waiting on every one of them.

Failures before any output are retried (connection errors and timeouts, 5xx,
429, and a stream that ends early: the user has seen nothing, so sending the
request again is invisible to them). After output nothing is retried: a
broken stream becomes `StreamInterrupted`, because replaying would show the
user a second, different answer.

The conduct of a request — the HTTP client, TLS, retries and error messages —
is `http_common.StreamingProvider`'s. The wire format spoken here — the JSON
body sent and the events each stream frame becomes — is in `openai_wire`.
"""

from __future__ import annotations

import functools
from typing import ClassVar

from agent_cli.providers.base import Request
from agent_cli.providers.http_common import (
    STATUS_HINTS,
    StreamingProvider,
    is_context_refusal,
    tls_verification,
)
from agent_cli.providers.message_json import MessageJSON
from agent_cli.providers.openai_wire import ChunkDecoder, encode_chat_request

__all__ = ["OpenAIProvider", "encode_chat_request", "is_context_refusal"]

CHAT_PATH = "/chat/completions"
MODELS_PATH = "/models"
_tls_verification = tls_verification  # its name when it lived here (the tests import it)


class OpenAIProvider(StreamingProvider):
    """A `Provider` for any service speaking OpenAI's `/chat/completions` with streaming.

    One `httpx.AsyncClient` is created on first use and kept, so a conversation
    reuses its connection; call `aclose()` when done. Consumers that stop
    iterating `stream()` early should close the generator (`aclose()`, or
    `contextlib.aclosing`) so the HTTP response is released at once.
    """

    kind = "openai"
    stream_path = CHAT_PATH
    models_path = MODELS_PATH
    api_name = "an OpenAI-compatible stream"
    base_url_hint = "check the base URL (it usually ends in /v1)"
    api_check = "that the service is OpenAI-compatible"
    base_url_example = "http://localhost:8080/v1"
    # 529 is Anthropic's "overloaded"; here it is just another server failure.
    status_hints: ClassVar[dict[int, str]] = {k: v for k, v in STATUS_HINTS.items() if k != 529}

    @functools.cached_property
    def _messages(self) -> MessageJSON:
        """The last request's messages' JSON: a round encodes only its new ones."""
        return MessageJSON()

    def _encode(self, request: Request) -> bytes:
        return encode_chat_request(request, self._messages)

    def _decoder(self) -> ChunkDecoder:
        return ChunkDecoder(self._where, self._redact)
