"""Approval cards one at a time: the others wait in order, answered ones are skipped.

A request may be answered elsewhere (another front end) or cancelled (the run
was stopped) while it waits here or while its card is shown: a waiting one is
then never shown, and a shown card closes itself (it polls its request).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.app import App

    from agent_cli.engine.approval import ApprovalRequest, Decision


class ApprovalQueue:
    """Pushes `ApprovalScreen` for each request in turn; `on_change(waiting)` reports."""

    def __init__(
        self,
        app: App,
        set_mode: Callable[[str], None],
        on_change: Callable[[bool], None],
    ) -> None:
        self.app = app
        self.set_mode = set_mode
        self.on_change = on_change
        self._waiting: deque[ApprovalRequest] = deque()
        self.shown: ApprovalRequest | None = None
        self.clock: Callable[[], float] = time.monotonic  # the cards' key guard (tests set it)

    def add(self, request: ApprovalRequest) -> None:
        self._waiting.append(request)
        self._next()

    def _next(self) -> None:
        if self.shown is not None:
            return
        while self._waiting:
            request = self._waiting.popleft()
            if request.done:
                continue
            # Imported here: the card is its own module, loaded only when a card is needed.
            from agent_cli.frontends.tui.approval import ApprovalScreen
            from agent_cli.frontends.tui.transcript import read_view_styles

            read_view_styles(self.app)  # its diff's, should it come before any view
            self.shown = request
            self.on_change(True)
            self.app.push_screen(
                ApprovalScreen(request, self.set_mode, clock=self.clock),
                callback=lambda decision, request=request: self._answered(request, decision),
            )
            return
        self.on_change(False)

    def _answered(self, request: ApprovalRequest, decision: Decision | None) -> None:
        from agent_cli.engine.approval import Decision  # with the first card, as it is

        # A card closed because its request was answered elsewhere: resolve() ignores this.
        request.resolve(decision if decision is not None else Decision("no"))
        self.shown = None
        self._next()
