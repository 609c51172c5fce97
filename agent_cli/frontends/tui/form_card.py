"""An MCP server's form (elicitation) as a card: one input per field, defaults filled in.

The server and its message head the card; each field is an input (a switch for
yes/no, a choice for an enum, a list of checkboxes for several choices) already
holding the schema's default. Ctrl+S or
the Accept button sends the values (checked against the fields first: what does
not fit is said on the card), Ctrl+D or Decline declines, Escape cancels.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Select, SelectionList, Static, Switch

from agent_cli.tools.mcp_forms import CANCEL, ElicitAnswer, Elicitation, FormField, Value

DECLINED = ElicitAnswer("decline")


class FormCard(ModalScreen[ElicitAnswer]):
    """Dismisses with the person's answer: accept (with the values), decline, cancel."""

    CSS_PATH = "form_card.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "accept", "accept"),
        Binding("ctrl+d", "decline", "decline"),
        Binding("escape", "cancel", "cancel"),
    ]

    def __init__(self, form: Elicitation) -> None:
        super().__init__()
        self.form = form

    def compose(self) -> ComposeResult:
        form = self.form
        with Vertical(id="form"):
            yield Static(Content(f"The MCP server {form.server!r} asks"), id="form-title")
            yield Static(Content(form.message.strip() or "(no message)"), id="form-message")
            with VerticalScroll(id="form-fields"):
                for field in form.fields:
                    mark = " *" if field.required else ""
                    about = f" — {field.description}" if field.description else ""
                    yield Static(Content(f"{field.label}{mark}{about}"), classes="form-label")
                    yield _widget(field)
            yield Static("", id="form-problem")
            with Horizontal(id="form-buttons"):
                yield Button("Accept", id="accept", variant="primary")
                yield Button("Decline", id="decline")
                yield Button("Cancel", id="cancel")
            yield Static("ctrl+s accept · ctrl+d decline · esc cancel", id="form-keys")

    def values(self) -> dict[str, Value]:
        """What the fields hold, as the schema's types; ValueError says what does not fit."""
        values: dict[str, Value] = {}
        for field in self.form.fields:
            widget = self.query_one(f"#field-{field.name}")
            value: Value | None
            if isinstance(widget, Switch):
                value = widget.value
            elif isinstance(widget, Select):
                value = None if widget.is_blank() else str(widget.value)
            elif isinstance(widget, SelectionList):  # in the schema's order, as many as allowed
                chosen = [o for o in field.options if o in widget.selected]
                value = field.choose(chosen) if chosen else None
            else:
                assert isinstance(widget, Input)
                value = field.parse(widget.value)
            if value is not None:
                values[field.name] = value
        missing = self.form.missing(values)
        if missing:
            raise ValueError(f"Still wanted: {', '.join(missing)}")
        return values

    def action_accept(self) -> None:
        try:
            values = self.values()
        except ValueError as exc:
            self.query_one("#form-problem", Static).update(Content(f"{exc}."))
            return
        self.dismiss(ElicitAnswer("accept", values))

    def action_decline(self) -> None:
        self.dismiss(DECLINED)

    def action_cancel(self) -> None:
        self.dismiss(CANCEL)

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        event.stop()
        {"accept": self.action_accept, "decline": self.action_decline}.get(
            event.button.id or "", self.action_cancel
        )()


def _widget(field: FormField) -> Input | Switch | Select[str] | SelectionList[str]:
    name = f"field-{field.name}"
    if field.kind == "boolean":
        return Switch(value=bool(field.default), id=name)
    if field.kind == "choices":
        given = field.default if isinstance(field.default, list) else []
        titles = field.labels or field.options
        rows = [(t, o, o in given) for t, o in zip(titles, field.options, strict=True)]
        return SelectionList[str](*rows, id=name)
    if field.kind == "choice":
        options = list(zip(field.labels or field.options, field.options, strict=True))
        chosen = str(field.default)
        if chosen in field.options:
            return Select(options, value=chosen, allow_blank=not field.required, id=name)
        return Select(options, allow_blank=not field.required, id=name)
    kinds = {"integer": "integer", "number": "number"}
    return Input(
        field.shown(field.default), id=name, type=kinds.get(field.kind, "text"),  # type: ignore[arg-type]
        placeholder=field.label,
    )  # fmt: skip
