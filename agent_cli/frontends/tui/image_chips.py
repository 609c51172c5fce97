"""The images waiting to go with the next message, as chips above the input.

`[image shot.png 640×480] ✕` each; a click on one removes it (so does Backspace
in an empty input: the last one). Hidden while there are none. The images are
the Composer's; this widget shows them and reports a click.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from agent_cli.media import Image

HINT = "click one or Backspace in an empty input to remove it"


class ImageChips(Widget):
    """The chips of `images`; `images = ()` hides them."""

    images: reactive[tuple[Image, ...]] = reactive((), layout=True)

    @dataclass
    class Removed(Message):
        index: int

    def watch_images(self, images: tuple[Image, ...]) -> None:
        self.display = bool(images)

    def render(self) -> Content:
        chips = [Content.styled(f"{image.label} ✕", "bold $accent") for image in self.images]
        return Content("  ").join([*chips, Content.styled(HINT, "$text-muted")])

    def on_click(self, event: events.Click) -> None:
        """The chip under the pointer goes (its place by the widths of those before it)."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        at = 0
        for index, image in enumerate(self.images):
            width = Content(f"{image.label} ✕").cell_length
            if at <= offset.x < at + width:
                event.stop()
                self.post_message(self.Removed(index))
                return
            at += width + 2
