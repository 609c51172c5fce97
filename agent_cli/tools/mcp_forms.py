"""An MCP server's form request (elicitation), as plain data every front end can show.

A server asks for a flat object: each property a string, number, integer,
boolean or a choice of strings (the spec allows nothing nested). The form is
read from the request's schema once, here; a front end shows its fields with
their defaults filled in and answers accept (with the values), decline or
cancel. What a person types is checked against the field before it is sent,
so a server gets values of the types it asked for.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

Action = Literal["accept", "decline", "cancel"]
Value = str | int | float | bool | list[str]
KINDS = ("string", "number", "integer", "boolean")


@dataclass(frozen=True)
class FormField:
    """One property of the form."""

    name: str
    kind: str  # "string", "number", "integer", "boolean", or "choice" (an enum)
    title: str = ""
    description: str = ""
    required: bool = False
    default: Value | None = None
    options: tuple[str, ...] = ()  # a choice's values
    labels: tuple[str, ...] = ()  # a choice's titles, when the schema gives them

    @property
    def label(self) -> str:
        return self.title or self.name

    def shown(self, value: Value | None) -> str:
        """A value as text in the form (a choice by its title)."""
        if value is None:
            return ""
        if isinstance(value, bool):
            return "yes" if value else "no"
        if self.kind == "choice" and value in self.options and self.labels:
            return self.labels[self.options.index(str(value))]
        return str(value)

    def parse(self, text: str) -> Value | None:
        """What a person typed as this field's value; None for nothing; ValueError if it
        does not fit (the message says what would)."""
        text = text.strip()
        if not text:
            return None
        if self.kind == "boolean":
            if text.lower() in ("y", "yes", "true", "1", "on"):
                return True
            if text.lower() in ("n", "no", "false", "0", "off"):
                return False
            raise ValueError(f"{self.label}: answer yes or no")
        if self.kind == "integer":
            try:
                return int(text)
            except ValueError:
                raise ValueError(f"{self.label}: a whole number is wanted") from None
        if self.kind == "number":
            try:
                return float(text)
            except ValueError:
                raise ValueError(f"{self.label}: a number is wanted") from None
        if self.kind == "choice":
            for value, label in zip(self.options, self.labels or self.options, strict=True):
                if text in (value, label) or text.lower() in (value.lower(), label.lower()):
                    return value
            if text.isdigit() and 1 <= int(text) <= len(self.options):
                return self.options[int(text) - 1]
            raise ValueError(f"{self.label}: one of {', '.join(self.labels or self.options)}")
        return text


@dataclass(frozen=True)
class Elicitation:
    """A server's request for information from the person, during a call."""

    server: str
    message: str
    fields: tuple[FormField, ...] = ()
    schema: Mapping[str, Any] = field(default_factory=dict)  # as the server sent it

    def defaults(self) -> dict[str, Value]:
        """The fields' defaults: what `--accept-defaults` and an untouched form send."""
        return {f.name: f.default for f in self.fields if f.default is not None}

    def missing(self, values: Mapping[str, Any]) -> list[str]:
        """The labels of required fields without a value."""
        return [f.label for f in self.fields if f.required and values.get(f.name) is None]


class ElicitAnswer(NamedTuple):
    """The person's answer: accept with `content`, decline, or cancel (dismissed)."""

    action: Action
    content: dict[str, Value] = {}  # noqa: RUF012 (a NamedTuple's default, never changed)


DECLINE = ElicitAnswer("decline")
CANCEL = ElicitAnswer("cancel")

Elicit = Callable[[Elicitation], Awaitable[ElicitAnswer]]
"""Who answers a form: the person through a front end, or a rule (decline, defaults)."""


def form_of(server: str, message: str, schema: Mapping[str, Any]) -> Elicitation:
    """The form a request's `requestedSchema` describes (properties it cannot show are
    left out; a required one of those makes the form unanswerable, said by `fields`)."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    fields = []
    for name, spec in properties.items():
        if isinstance(spec, Mapping):
            made = _field(str(name), spec, name in required)
            if made is not None:
                fields.append(made)
    return Elicitation(server, message, tuple(fields), dict(schema))


def _field(name: str, spec: Mapping[str, Any], required: bool) -> FormField | None:
    kind = spec.get("type")
    options: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    if isinstance(spec.get("enum"), list):
        options = tuple(str(v) for v in spec["enum"])
        names = spec.get("enumNames")
        if isinstance(names, list) and len(names) == len(options):
            labels = tuple(str(n) for n in names)
    elif isinstance(spec.get("oneOf"), list):  # titled choices: [{const, title}]
        pairs = [(str(o.get("const")), str(o.get("title") or o.get("const")))
                 for o in spec["oneOf"] if isinstance(o, Mapping) and "const" in o]  # fmt: skip
        options, labels = tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    if options:
        kind = "choice"
    elif kind not in KINDS:
        return None
    default = spec.get("default")
    if default is not None and not isinstance(default, str | int | float | bool):
        default = None
    return FormField(
        name,
        str(kind),
        title=str(spec.get("title") or ""),
        description=str(spec.get("description") or ""),
        required=required,
        default=default,
        options=options,
        labels=labels,
    )
