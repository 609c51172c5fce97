"""What each MCP server listed last time, so a conversation need not wait for it again.

Starting a server costs the SDK's import (about a second) and the server's own
start, often more; a conversation that never calls the server's tools should
not pay that before its first request. So the tools a server listed are kept
in the user cache dir, keyed by everything that starts it (its entry and the
workspace), and offered from there; the server starts when one of its tools is
first called, and what it lists then replaces what was kept. An entry whose
command, arguments or environment changed has another key: it is started and
listed afresh. Nothing here is trusted more than a live listing: MCP tools are
changes under the policy whatever they say of themselves.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from agent_cli import paths

FORMAT = 1  # bump when the file's shape changes: older files are then ignored


class Listed(NamedTuple):
    """One tool as its server listed it: what the model is shown of it."""

    name: str
    title: str | None
    description: str | None
    input_schema: dict[str, Any]
    read_only_hint: bool | None


def from_sdk(tool: Any) -> Listed:
    """A `mcp_types.Tool` as a `Listed`."""
    annotations = tool.annotations
    return Listed(
        tool.name,
        tool.title,
        tool.description,
        dict(tool.input_schema or {}),
        annotations.read_only_hint if annotations is not None else None,
    )


def listing_key(identity: Any) -> str:
    """A file name for whatever identifies a server's start (JSON-able)."""
    text = json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _file(key: str) -> Path:
    return paths.cache_dir() / "mcp-listings" / f"{key}.json"


def recall(key: str) -> list[Listed] | None:
    """The tools kept under `key`; None when there are none (or the file is unreadable)."""
    try:
        data = json.loads(_file(key).read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            return None
        return [Listed(*entry) for entry in data["tools"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def recall_offers(key: str) -> frozenset[str]:
    """What else the server offered when its tools were kept ("resources", "prompts")."""
    try:
        data = json.loads(_file(key).read_text(encoding="utf-8"))
        return frozenset(str(o) for o in data.get("offers", ()))
    except (OSError, ValueError, TypeError, AttributeError):
        return frozenset()


def remember(key: str, tools: list[Listed], offers: frozenset[str] = frozenset()) -> None:
    """Keep `tools` (and what else it `offers`) under `key`, atomically; a cache that cannot
    be written is only slower."""
    file = _file(key)
    kept = {"format": FORMAT, "tools": [list(t) for t in tools], "offers": sorted(offers)}
    data = json.dumps(kept, ensure_ascii=False)
    with contextlib.suppress(OSError):
        file.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=file.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(data)
            os.replace(temporary, file)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def forget(key: str) -> None:
    """Drop what was kept under `key` (its server failed: start it up front next time)."""
    with contextlib.suppress(OSError):
        _file(key).unlink()
