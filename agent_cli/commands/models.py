"""`agent models`: the models a provider's server offers, with their context windows.

The listing is the server's own (`/models`; Ollama's `/api/tags` for the
`ollama` preset, and for any OpenAI-compatible server whose `/models` fails).
Each model's context window is said with where it comes from, because the
numbers differ in trust: the config (the person said so), the server (what is
loaded), or the table of known models (a guess by name).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent_cli.commands.common import guarded, start_debug_log, workspace_from

if TYPE_CHECKING:
    from agent_cli.providers.base import ModelInfo
    from agent_cli.settings import ProviderSettings, Settings

PROBED_MODELS = 20  # at most this many models get their window asked of the server
TAGS_TIMEOUT = 5.0  # seconds for Ollama's /api/tags


def register(app: typer.Typer) -> None:
    app.command(
        "models",
        epilog="Examples: agent models · agent models --provider ollama · agent models --json",
    )(models)


def models(
    provider: Annotated[str | None, typer.Option(help="The provider (a config entry).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    debug: Annotated[
        bool, typer.Option("--debug", help="Write a debug log; show tracebacks.")
    ] = False,
    cwd: Annotated[Path | None, typer.Option(help="The workspace (for its config).")] = None,
) -> None:
    """List the models the provider's server offers, with each one's context window."""

    def action() -> int:
        import asyncio

        from agent_cli.settings import Flags, load_settings

        if debug:
            start_debug_log()
        settings = load_settings(workspace_from(cwd), Flags(provider=provider, debug=debug))
        for warning in settings.warnings:
            print(f"agent: {warning}", file=sys.stderr)
        chosen = settings.require_provider()
        rows = asyncio.run(_rows(chosen, settings))
        if as_json:
            listing = {"provider": chosen.name, "base_url": chosen.base_url, "models": rows}
            print(json.dumps(listing))
        else:
            _print(chosen, rows)
        return 0

    raise typer.Exit(guarded(debug, action))


async def _rows(provider: ProviderSettings, settings: Settings) -> list[dict]:
    import asyncio

    from agent_cli.providers.local_hints import served_context_window

    infos = await list_models(provider, settings)
    configured = provider.context_window
    asked = [i.id for i in infos[:PROBED_MODELS] if not i.context_window and not configured]
    served = await asyncio.gather(*(served_context_window(provider, m) for m in asked))
    windows = dict(zip(asked, served, strict=True))
    current = settings.model or (infos[0].id if infos else "")  # what a session would use
    rows = []
    for info in infos:
        window, source = _window(info, configured, windows.get(info.id))
        rows.append(
            {
                "id": info.id,
                "context_window": window,
                "context_from": source,
                "current": info.id == current,
            }
        )
    return rows


def _window(info: ModelInfo, configured: int | None, served: int | None) -> tuple[int | None, str]:
    """The window and where it comes from: config, server, known model, or "" (unknown)."""
    from agent_cli.backends.context import KNOWN_WINDOWS

    if configured:
        return configured, "config"
    if info.context_window or served:
        return info.context_window or served, "server"
    name = info.id.lower().rpartition("/")[2]
    for prefix, window in KNOWN_WINDOWS:
        if name.startswith(prefix):
            return window, "known model"
    return None, ""


async def list_models(provider: ProviderSettings, settings: Settings) -> list[ModelInfo]:
    """The server's models: `/models`, or Ollama's `/api/tags` (first for the ollama
    preset, as a fallback for any OpenAI-compatible server). A refused connection to a
    local server says how to start it."""
    from agent_cli import wiring
    from agent_cli.errors import ProviderConnectionError, ProviderError

    tags_first = provider.name == "ollama"
    if tags_first and (found := await _ollama_tags(provider)):
        return found
    client = wiring.make_provider(provider, settings)
    try:
        return await client.list_models()
    except ProviderError as e:
        if provider.kind == "openai" and not tags_first and (found := await _ollama_tags(provider)):
            return found
        if isinstance(e, ProviderConnectionError):
            from agent_cli.providers.local_hints import local_server_hint

            hint = local_server_hint(provider.base_url, provider.name)
            if hint:
                raise ProviderConnectionError(hint) from e
        raise
    finally:
        await client.aclose()


async def _ollama_tags(provider: ProviderSettings) -> list[ModelInfo]:
    """Ollama's own listing; [] when the server is not Ollama or does not answer."""
    import httpx

    from agent_cli.providers.base import ModelInfo
    from agent_cli.providers.http_common import tls_verification
    from agent_cli.providers.local_hints import models_from_tags, server_root

    headers = dict(provider.headers)
    if provider.api_key:
        headers["Authorization"] = f"Bearer {provider.api_key}"
    try:
        async with httpx.AsyncClient(
            headers=headers, timeout=TAGS_TIMEOUT, verify=tls_verification(provider.base_url)
        ) as client:
            response = await client.get(server_root(provider.base_url) + "/api/tags")
            body = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return []
    return [ModelInfo(name) for name in models_from_tags(body)]


def _print(provider: ProviderSettings, rows: list[dict]) -> None:
    print(f"Models of {provider.name} ({provider.base_url}):")
    if not rows:
        print("  none listed — load a model into the server, or name one with --model.")
        return
    width = max(len(row["id"]) for row in rows)
    for row in rows:
        mark = "*" if row["current"] else " "
        window = row["context_window"]
        context = f"context {window:,} ({row['context_from']})" if window else "context unknown"
        print(f"{mark} {row['id'].ljust(width)}  {context}")
