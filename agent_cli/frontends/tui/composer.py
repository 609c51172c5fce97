"""The input area: the text box, its completion menu and its history, working together.

While a run goes, the messages waiting to be sent are the app's (the session's);
the composer asks for them back through `recall` (Up in an empty input: the last
one, to edit) and `drop` (Escape in an empty input: the last one, gone).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Static, TextArea

from agent_cli.errors import ClipboardError, ImageError
from agent_cli.frontends.tui.history import History
from agent_cli.frontends.tui.prompt_input import PromptInput
from agent_cli.frontends.tui.styles import beside, read_styles

if TYPE_CHECKING:
    from textual.widgets import OptionList

    from agent_cli.engine.resources import ResourceSource
    from agent_cli.frontends.slash import Command
    from agent_cli.frontends.tui.completion import Candidate, Token
    from agent_cli.frontends.tui.completion_menu import CompletionMenu
    from agent_cli.frontends.tui.image_chips import ImageChips
    from agent_cli.media import Image

PROMPT_MARKER = "›"
# Read with the menu's and the chips' first mount (styles.py), not before the first frame.
MENU_STYLES = beside(__file__, "completion_menu.tcss")
CHIPS_STYLES = beside(__file__, "image_chips.tcss")


def _nothing() -> None:
    return None


def _built_in_commands() -> Sequence[Command]:
    # the slash commands' list, with the first "/": not before the first frame
    from agent_cli.frontends.slash import COMMANDS

    return COMMANDS


class Composer(Vertical):
    """Posts `Send` with the text on Enter (`queue`: on Tab); the app calls `sent` if it
    took it."""

    @dataclass
    class Send(Message):
        """A message to send, with its images."""

        text: str
        queue: bool = False  # Tab: after the run, not into it
        images: tuple[Image, ...] = ()  # the chips above the input

    def __init__(
        self,
        workspace: Path,
        history: Callable[[], History],
        *,
        recall: Callable[[], str | None] = _nothing,
        drop: Callable[[], object] = _nothing,
        commands: Callable[[], Sequence[Command]] = _built_in_commands,
        resources: ResourceSource | None = None,
    ) -> None:
        super().__init__()
        self.commands = commands  # what `/` completes: the built-ins and prompt commands
        self.resources = resources  # what `@server:` completes: its MCP resources
        self.recall = recall
        self.drop = drop
        self.workspace = workspace
        self._history_of = history  # made when first used: its file is read after the start
        self._history: History | None = None
        self._menu: CompletionMenu | None = None  # mounted at the first completion shown
        self._chips: ImageChips | None = None  # mounted at the first image
        self.input = PromptInput(id="prompt")
        self.files: list[str] | None = None  # the workspace's files, walked on the first "@"
        self._token: Token | None = None
        self._last: tuple[int, str] | None = None
        self._recalled: str | None = None
        self._listing = False  # the resources are being listed again

    def compose(self) -> ComposeResult:
        # The menu and the chips, above the prompt row, are mounted when first shown.
        with Horizontal(id="prompt-row"):
            yield Static(PROMPT_MARKER, id="prompt-marker")  # left of the first line only
            yield self.input

    @property
    def menu(self) -> CompletionMenu:
        """The completion menu, made and mounted (at the top) at the first completion shown:
        hidden until then, the first frame goes out without it (its mount, its styles)."""
        if self._menu is None:
            from agent_cli.frontends.tui.completion_menu import CompletionMenu

            self._menu = CompletionMenu()
            read_styles(self.app, MENU_STYLES)
            self.mount(self._menu, before=0)
        return self._menu

    @property
    def chips(self) -> ImageChips:
        """The image chips, made and mounted (just above the prompt row) at the first image,
        as the menu is."""
        if self._chips is None:
            from agent_cli.frontends.tui.image_chips import ImageChips

            self._chips = ImageChips()
            read_styles(self.app, CHIPS_STYLES)
            self.mount(self._chips, before="#prompt-row")
        return self._chips

    @property
    def images(self) -> tuple[Image, ...]:
        """The images going with the next message (the chips'; none before the first)."""
        return self._chips.images if self._chips is not None else ()

    @images.setter
    def images(self, images: tuple[Image, ...]) -> None:
        if images or self._chips is not None:  # no chips mounted just to clear them
            self.chips.images = images

    def focus_input(self) -> None:
        self.input.focus()

    def sent(self, text: str) -> None:
        """The app took the text: remember it and empty the box."""
        self.history.add(text)
        self.images = ()
        self.input.set_text("")
        self._last = None
        self._close()

    # -- history -------------------------------------------------------------------

    @property
    def history(self) -> History:
        """What was sent in this workspace, read at the first Up or send: not before the
        first frame, which it would only delay."""
        if self._history is None:
            self._history = self._history_of()
        return self._history

    @on(PromptInput.HistoryWalk)
    def _walk(self, event: PromptInput.HistoryWalk) -> None:
        event.stop()
        if event.step < 0 and not self.input.text and (waiting := self.recall()) is not None:
            self._recalled = waiting  # a message waiting to be sent, back to edit
            self.input.set_text(waiting)
            return
        entry = self.history.previous(self.input.text) if event.step < 0 else self.history.next()
        if entry is not None:
            self._recalled = entry  # no completion menu over a recalled message
            self.input.set_text(entry)

    @on(PromptInput.Submitted)
    def _submitted(self, event: PromptInput.Submitted) -> None:
        event.stop()
        if event.text.strip() or self.images:
            self.post_message(self.Send(event.text.strip(), images=self.images))

    @on(PromptInput.Queued)
    def _queued(self, event: PromptInput.Queued) -> None:
        event.stop()
        self.post_message(self.Send(event.text.strip(), queue=True, images=self.images))

    @on(PromptInput.EmptyEscape)
    def _escaped(self, event: PromptInput.EmptyEscape) -> None:
        event.stop()
        self.drop()

    def put_back(self, texts: list[str]) -> None:
        """Messages a stop gave back unsent: into the input, after what is there."""
        current = self.input.text.rstrip()
        self.input.set_text("\n".join([current, *texts] if current else texts))

    # -- images --------------------------------------------------------------------

    def add_image(self, image: Image) -> None:
        if image not in self.images:
            self.images = (*self.images, image)

    @on(PromptInput.ImagePasted)
    @work(group="images")
    async def _pasted_image(self, event: PromptInput.ImagePasted) -> None:
        """A pasted image path or data: a chip; one that cannot be taken goes in as text."""
        event.stop()
        from agent_cli.frontends.clipboard import image_from_paste  # at the first paste of one

        try:
            image = await asyncio.to_thread(image_from_paste, event.text)
        except ImageError as e:
            self.app.notify(str(e), severity="warning")
            image = None
        if image is None:
            self.input.insert(event.text)
            return
        self.add_image(image)

    @on(PromptInput.ClipboardImage)
    @work(exclusive=True, group="clipboard")
    async def _clipboard_image(self, event: PromptInput.ClipboardImage) -> None:
        """Ctrl+V: the clipboard's image as a chip; else the app's own copied text, as a
        text field's Ctrl+V does; else why there is nothing to paste."""
        event.stop()
        from agent_cli.frontends.clipboard import clipboard_image  # at the first Ctrl+V

        try:
            self.add_image(await clipboard_image())
        except (ClipboardError, ImageError) as e:
            if self.app.clipboard:
                self.input.insert(self.app.clipboard)
            else:
                self.app.notify(str(e), severity="warning")

    @on(PromptInput.EmptyBackspace)
    def _backspace(self, event: PromptInput.EmptyBackspace) -> None:
        event.stop()
        self.images = self.images[:-1]

    def on_image_chips_removed(self, event: ImageChips.Removed) -> None:
        event.stop()
        images = self.images
        self.images = images[: event.index] + images[event.index + 1 :]
        self.input.focus()

    # -- completion ----------------------------------------------------------------

    @on(TextArea.Changed)
    @on(TextArea.SelectionChanged)
    def _text_changed(self) -> None:
        self._complete()

    def _complete(self) -> None:
        """Open, update or close the menu for the token before the cursor."""
        # What completes, at the first "/" or "@": not before the first frame.
        from agent_cli.frontends.tui.completion import (
            command_candidates,
            mention_candidates,
            token_at,
        )

        if self.input.text == self._recalled:
            self._close()  # Up and Down keep walking the history
            return
        row, column = self.input.cursor_location
        line = self.input.document.get_line(row)[:column]
        if (row, line) == self._last:
            return  # a text change and a cursor move report the same key twice
        self._last = (row, line)
        token = token_at(line)
        if token is not None and token.kind == "command" and row != 0:
            token = None  # a command is only a command on the first line
        self._token = token
        if token is None:
            self._close()
            return
        if token.kind == "command":
            candidates = command_candidates(token.query, self.commands())
        elif self.files is None:
            self._walk_files()
            return
        else:
            listed = self.resources.listed() if self.resources is not None else None
            candidates = mention_candidates(token.query, self.files, listed)
            if ":" in token.query:  # `@server:`: listed again if a server said they changed
                self._list_resources()
        self._show(candidates)

    def _show(self, candidates: list[Candidate]) -> None:
        if not candidates:
            self._close()  # none: no menu mounted just to stay hidden
            return
        self.menu.show(candidates)
        self.input.completing = True

    @work(exclusive=True, group="files")
    async def _walk_files(self) -> None:
        from agent_cli.frontends.tui.completion import walk_files

        self.files = await asyncio.to_thread(walk_files, self.workspace)
        self.relisted()

    def _list_resources(self) -> None:
        """The MCP resources, listed again when due (in the background: typing goes on)."""
        if self.resources is not None and not self._listing:
            self._listing = True
            self._relist(self.resources)

    @work(group="resources")
    async def _relist(self, resources: ResourceSource) -> None:
        try:
            if await resources.refresh():
                self.relisted()
        finally:
            self._listing = False

    def relisted(self) -> None:
        """A listing came (files, resources): complete what is typed again."""
        self._last = None
        self._complete()

    def _close(self) -> None:
        if self._menu is not None:  # never shown: nothing to hide
            self._menu.hide()
        self.input.completing = False

    def _chosen(self) -> Candidate | None:
        return self._menu.chosen() if self._menu is not None else None

    @on(PromptInput.MenuKey)
    def _menu_key(self, event: PromptInput.MenuKey) -> None:
        event.stop()
        if event.key in ("up", "down"):
            self.menu.move(-1 if event.key == "up" else 1)
        elif event.key == "accept":
            self._accept()
        elif event.key == "enter":
            self._enter()
        else:
            self._close()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.menu.highlighted = event.option_index
        self._accept()
        self.input.focus()

    def _enter(self) -> None:
        """Enter in the menu: a file is completed; a command is completed and, if it
        needs no argument (or was typed out already), run."""
        candidate, token = self._chosen(), self._token
        if token is None or candidate is None or token.kind != "command":
            self._accept()
            return
        if self.input.text.strip() == candidate.value.strip():
            self._close()
            self.post_message(self.Send(self.input.text.strip()))
            return
        self._accept()
        if candidate.runs:
            self.post_message(self.Send(self.input.text.strip()))

    def _accept(self) -> None:
        candidate, token = self._chosen(), self._token
        self._close()
        if candidate is None or token is None:
            return
        row, column = self.input.cursor_location
        spaced = token.kind != "command" and candidate.spaced
        value = candidate.value + " " if spaced else candidate.value
        self.input.replace(value, (row, token.start), (row, column))
