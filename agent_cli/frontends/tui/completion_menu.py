"""The small menu of completions above the input (files after `@`, commands after `/`)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from agent_cli.frontends.tui.completion import Candidate


class CompletionMenu(OptionList):
    """Shows candidates; the Composer moves the highlight and takes the chosen one."""

    def __init__(self) -> None:
        super().__init__()
        self.candidates: list[Candidate] = []
        self.display = False
        self.can_focus = False

    def show(self, candidates: list[Candidate]) -> None:
        self.candidates = candidates
        self.clear_options()
        if candidates:
            self.add_options([Option(Content(c.label)) for c in candidates])
            self.highlighted = 0
        self.display = bool(candidates)

    def hide(self) -> None:
        self.show([])

    def move(self, step: int) -> None:
        if self.candidates:
            current = self.highlighted or 0
            self.highlighted = (current + step) % len(self.candidates)

    def chosen(self) -> Candidate | None:
        if not self.candidates or self.highlighted is None:
            return None
        return self.candidates[self.highlighted]
