"""What our MCP client answers its servers, beside tool calls: roots, forms, notifications.

- **Roots** are the workspace: a server that honours them (the filesystem server
  started without a folder) works inside it, and is told when they change.
- **Forms** (elicitation) go to whoever asks through the call being made (the
  person, through the run's front end); with nobody there, they are declined.
  A URL request (the spec's `url` mode) is declined too: we open no links for a server.
- **Notifications** that a server's tools, resources or prompts changed mark
  them to be listed again before they are next offered.

The SDK is imported only inside these functions (it is loaded lazily, SPEC §9).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.tools.mcp_forms import DECLINE, Elicit, ElicitAnswer, form_of

log = logging.getLogger(__name__)

Changed = Callable[[str], None]
"""Told what of a server changed: "tools", "resources" or "prompts"."""


@dataclass
class ClientAnswers:
    """A session's answers for its servers: shared by all of them.

    `elicit`: who answers a form when no call's run does (`agent mcp call
    --accept-defaults` sets one); None declines it.
    """

    roots: Sequence[Path] = ()
    elicit: Elicit | None = None
    _askers: list[Elicit] = field(default_factory=list)

    def asking(self, ask: Elicit | None) -> _Asking:
        """While a call runs, its run answers the forms its server sends."""
        return _Asking(self._askers, ask)

    async def answer(self, server: str, params: Any) -> ElicitAnswer:
        """The answer to one request (the SDK's `ElicitRequestParams`)."""
        if getattr(params, "mode", "form") != "form":
            log.debug("MCP server %s asked to open a URL; declined", server)
            return DECLINE
        schema = params.requested_schema
        if hasattr(schema, "model_dump"):
            schema = schema.model_dump(by_alias=True, exclude_none=True)
        form = form_of(server, params.message, schema or {})
        ask = self._askers[-1] if self._askers else self.elicit
        if ask is None:
            return DECLINE
        return await ask(form)


class _Asking:
    """`with answers.asking(run.elicit):` — the run answers forms for the call's length."""

    def __init__(self, askers: list[Elicit], ask: Elicit | None) -> None:
        self._askers, self._ask = askers, ask

    def __enter__(self) -> None:
        if self._ask is not None:
            self._askers.append(self._ask)

    def __exit__(self, *_: object) -> None:
        if self._ask is not None:
            self._askers.remove(self._ask)


def callbacks(
    name: str,
    answers: ClientAnswers,
    changed: Changed,
    person: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
) -> dict[str, Any]:
    """The `mcp.client.Client` keyword arguments that answer server `name`; `person()` is
    open while a form waits on the person (the server's call deadlines stand still)."""
    import mcp_types as types
    from pydantic import FileUrl

    async def list_roots(_context: Any) -> Any:
        roots = [
            types.Root(uri=FileUrl(path.resolve().as_uri()), name=path.name)
            for path in answers.roots
        ]
        return types.ListRootsResult(roots=roots)

    async def elicit(_context: Any, params: Any) -> Any:
        try:
            with person():
                answer = await answers.answer(name, params)
        except Exception:  # a front end that failed to ask: the server hears a decline
            log.debug("asking for MCP server %s's form failed", name, exc_info=True)
            answer = DECLINE
        content: dict[str, Any] | None = None
        if answer.action == "accept":
            content = dict(answer.content)
        return types.ElicitResult(action=answer.action, content=content)

    async def on_message(message: Any) -> None:
        kinds: dict[type, str] = {
            types.ToolListChangedNotification: "tools",
            types.ResourceListChangedNotification: "resources",
            types.PromptListChangedNotification: "prompts",
        }
        what = kinds.get(type(message))
        if what is not None:
            log.debug("MCP server %s: its %s changed", name, what)
            changed(what)

    return {
        "list_roots_callback": list_roots,
        "elicitation_callback": elicit,
        "message_handler": on_message,
    }
