"""What local model servers (llama.cpp, Ollama, vLLM) tell us beyond the OpenAI API, and
what to tell people about them.

Why apart from the providers: these are the quirks of particular servers behind
the one OpenAI-compatible wire format, so the wire format stays generic and
these stay testable as pure functions:

- `local_server_hint`: the message when nothing answers at a local address —
  usually the person has not started the server, so say how to.
- `tools_unsupported`: llama.cpp refuses tools unless started with `--jinja`
  (and Ollama refuses them for models without a tool template); the loop can
  then carry on without tools, with a notice.
- `served_context_window`: the context window the server really runs with
  (llama.cpp `/props` `n_ctx`, Ollama `/api/show`, vLLM's `max_model_len`),
  which no table of model names can know. Short timeouts, never raises: it is
  a nicety, asked once per session.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import urlsplit

__all__ = [
    "LOCAL_PRESETS",
    "TOOLS_UNSUPPORTED_NOTICE",
    "is_local",
    "local_server_hint",
    "models_from_tags",
    "served_context_window",
    "server_root",
    "tools_unsupported",
    "tools_unsupported_notice",
]


class ServerSettings(Protocol):
    """What is needed of a provider's settings (`settings.ProviderSettings` has it; a
    protocol because providers sit below settings)."""

    @property
    def kind(self) -> str: ...
    @property
    def base_url(self) -> str: ...
    @property
    def api_key(self) -> str | None: ...
    @property
    def headers(self) -> Mapping[str, str]: ...


PROBE_TIMEOUT = 2.0  # seconds for each question to a server about its context window
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0", "[::1]"})

# How to start each local server, by preset name and by its usual port.
LOCAL_PRESETS = {
    "llama.cpp": "llama-server -m MODEL.gguf --jinja",
    "ollama": "ollama serve",
    "vllm": "vllm serve MODEL",
}
_BY_PORT = {8080: "llama.cpp", 11434: "ollama", 8000: "vllm"}

TOOLS_UNSUPPORTED_NOTICE = (
    "The model server at {address} does not accept tools — going on without them, so the "
    "model can only answer in text. To give it tools, restart llama-server with --jinja "
    "(vLLM: --enable-auto-tool-choice --tool-call-parser NAME; Ollama: a model that "
    "supports tools)."
)

# llama.cpp: "tools param requires --jinja flag"; Ollama: "MODEL does not support tools";
# others: "tools are not supported", "tool use is not supported".
_TOOLS_REFUSAL = re.compile(
    r"requires? --jinja|--jinja flag|--enable-auto-tool-choice|does not support tools"
    r"|tools? (?:use |calling |calls )?"
    r"(?:is |are )?(?:not|un)supported|unsupported[^.]{0,20}\btools?\b",
    re.IGNORECASE,
)


def server_root(base_url: str) -> str:
    """The server's own address: the base URL without its trailing `/v1`."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def is_local(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    return host in LOCAL_HOSTS or host.startswith("127.")


def local_server_hint(base_url: str, preset_name: str | None) -> str | None:
    """The sentence to show when nothing answers at `base_url`, or None for a remote service.

    For a local address (or a local preset) the likely cause is a server not
    started, so the sentence says how to start one.
    """
    if preset_name not in LOCAL_PRESETS and not is_local(base_url):
        return None
    parts = urlsplit(base_url)
    address = f"{parts.scheme}://{parts.netloc}" if parts.netloc else base_url
    server = preset_name if preset_name in LOCAL_PRESETS else _BY_PORT.get(parts.port or 0)
    if server is None:
        return (
            f"No server answers at {address} — start your model server there, or fix the base URL."
        )
    return f"No server answers at {address} — start `{LOCAL_PRESETS[server]}`."


def tools_unsupported(status: int, body: str | bytes) -> bool:
    """Whether an error answer means "this server cannot take tools" (not "the request is bad").

    `body` may be the raw error body or the message made of it.
    """
    if status not in (400, 404, 422, 500, 501):
        return False
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    return _TOOLS_REFUSAL.search(text) is not None


def tools_unsupported_notice(base_url: str) -> str:
    """The notice the loop shows when it goes on without tools."""
    parts = urlsplit(base_url)
    address = f"{parts.scheme}://{parts.netloc}" if parts.netloc else base_url
    return TOOLS_UNSUPPORTED_NOTICE.format(address=address)


# ------------------------------------------------------------- context window


async def served_context_window(provider: ServerSettings, model: str) -> int | None:
    """The context window the server says `model` runs with; None when it does not say.

    Asks llama.cpp's `/props`, Ollama's `/api/show` and the `/models` listing
    (vLLM's `max_model_len`, OpenRouter's `context_length`) at once, and trusts
    them in that order: what is loaded beats what a listing advertises.
    """
    if provider.kind != "openai":
        return None  # Anthropic and OpenAI Responses do not say; the table knows them
    try:
        import httpx

        from agent_cli.providers.http_common import tls_verification

        headers = {**provider.headers}
        if provider.api_key:
            headers["Authorization"] = f"Bearer {provider.api_key}"
        timeout = httpx.Timeout(PROBE_TIMEOUT)
        verify = tls_verification(provider.base_url)
        async with httpx.AsyncClient(headers=headers, timeout=timeout, verify=verify) as client:
            answers = await asyncio.gather(
                _props(client, provider.base_url),
                _ollama_show(client, provider.base_url, model),
                _listed(client, provider.base_url, model),
                return_exceptions=True,
            )
    except Exception:  # a nicety: any failure means "not known"
        return None
    for answer in answers:
        if isinstance(answer, int) and answer > 0:
            return answer
    return None


async def _get_json(client: Any, method: str, url: str, body: Any = None) -> Any:
    response = await client.request(method, url, json=body)
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


async def _props(client: Any, base_url: str) -> int | None:
    """llama.cpp: `GET /props` → `default_generation_settings.n_ctx` (per slot) or `n_ctx`."""
    return props_context_window(await _get_json(client, "GET", server_root(base_url) + "/props"))


def props_context_window(body: Any) -> int | None:
    if not isinstance(body, dict):
        return None
    settings = body.get("default_generation_settings")
    for holder in (settings, body):
        if isinstance(holder, dict) and _positive(holder.get("n_ctx")):
            return holder["n_ctx"]
    return None


async def _ollama_show(client: Any, base_url: str, model: str) -> int | None:
    """Ollama: `POST /api/show` → `num_ctx` if set for the model, else its trained length."""
    url = server_root(base_url) + "/api/show"
    return show_context_window(await _get_json(client, "POST", url, {"model": model}))


def show_context_window(body: Any) -> int | None:
    if not isinstance(body, dict):
        return None
    parameters = body.get("parameters")
    if isinstance(parameters, str):
        found = re.search(r"^\s*num_ctx\s+(\d+)", parameters, re.MULTILINE)
        if found:
            return int(found.group(1))
    info = body.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if key.endswith("context_length") and _positive(value):
                return value
    return None


async def _listed(client: Any, base_url: str, model: str) -> int | None:
    """The `/models` listing's `max_model_len` (vLLM) or `context_length` (OpenRouter)."""
    body = await _get_json(client, "GET", base_url.rstrip("/") + "/models")
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return None
    for item in body["data"]:
        if isinstance(item, dict) and item.get("id") == model:
            for key in ("max_model_len", "context_length"):
                if _positive(item.get(key)):
                    return item[key]
    return None


def models_from_tags(body: Any) -> list[str]:
    """Model names from Ollama's `GET /api/tags` answer."""
    if not isinstance(body, dict) or not isinstance(body.get("models"), list):
        return []
    names = [m.get("name") or m.get("model") for m in body["models"] if isinstance(m, dict)]
    return [name for name in names if isinstance(name, str) and name]


def _positive(value: object) -> bool:
    return type(value) is int and value > 0
