"""Widgets in the transcript whose size needs no layout pass of its own.

Textual's `Widget.virtual_size` asks for another layout (and a repaint) whenever it
changes; it changes in the very layout pass that measured it, for every view just
mounted and every view that grew. So each flush that added or grew a view was two
frames: its own, then the one that layout asked for. For a widget that does not scroll,
its virtual size changes nothing the pass has not already placed and painted.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Static


class Steady:
    """Mixin, before the Textual base: `class View(Steady, Static)`."""

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False, repaint=False)


class SteadyStatic(Steady, Static):
    """A `Static` in the transcript (a card's header, its tail)."""
