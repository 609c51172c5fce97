"""An MCP server's form request (elicitation), as plain data every front end can show.

A server asks for a flat object: each property a string, number, integer,
boolean, a choice of strings (`enum`; titled by `oneOf` [{const, title}] or the
legacy `enumNames`) or several choices (an array whose `items` are an `enum` or
`anyOf` titled options, with `minItems`/`maxItems`); the spec allows nothing nested. The form is
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
    kind: str  # "string", "number", "integer", "boolean", "choice" (an enum), "choices" (several)
    title: str = ""
    description: str = ""
    required: bool = False
    default: Value | None = None
    options: tuple[str, ...] = ()  # a choice's values
    labels: tuple[str, ...] = ()  # a choice's titles, when the schema gives them
    min_items: int = 0  # of "choices": how many at least and at most (None: any number)
    max_items: int | None = None

    @property
    def label(self) -> str:
        return self.title or self.name

    def shown(self, value: Value | None) -> str:
        """A value as text in the form (a choice by its title)."""
        if value is None:
            return ""
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, list):
            return ", ".join(self.title_of(v) for v in value)
        if self.kind == "choice":
            return self.title_of(str(value))
        return str(value)

    def title_of(self, option: str) -> str:
        """A choice's title (its value where the schema gives none)."""
        if option in self.options and self.labels:
            return self.labels[self.options.index(option)]
        return option

    def choose(self, chosen: list[str]) -> list[str]:
        """Several choices, as many as the field allows; ValueError says how many it does."""
        count, least, most = len(chosen), self.min_items, self.max_items
        if count < least or (most is not None and count > most):
            if most is None:
                wanted = f"at least {least}"
            elif least == most:
                wanted = f"exactly {least}"
            else:
                wanted = f"{least} to {most}" if least else f"at most {most}"
            raise ValueError(f"{self.label}: choose {wanted} (of {', '.join(self._titles())})")
        return chosen

    def _titles(self) -> tuple[str, ...]:
        return self.labels or self.options

    def _option(self, text: str) -> str:
        """The option `text` names: its value, its title (any case) or its number."""
        for value, label in zip(self.options, self._titles(), strict=True):
            if text in (value, label) or text.lower() in (value.lower(), label.lower()):
                return value
        if text.isdigit() and 1 <= int(text) <= len(self.options):
            return self.options[int(text) - 1]
        raise ValueError(f"{self.label}: one of {', '.join(self._titles())}")

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
            return self._option(text)
        if self.kind == "choices":  # "a, b" or "1, 3": each named as a choice is
            chosen: list[str] = []
            for part in (p.strip() for p in text.split(",")):
                if part and (option := self._option(part)) not in chosen:
                    chosen.append(option)
            return self.choose(chosen)
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


def _choices(spec: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The options a schema offers, and their titles (none where it gives none)."""
    if isinstance(spec.get("enum"), list):
        options = tuple(str(v) for v in spec["enum"])
        names = spec.get("enumNames")  # the legacy titles
        if isinstance(names, list) and len(names) == len(options):
            return options, tuple(str(n) for n in names)
        return options, ()
    listed = spec.get("oneOf") if isinstance(spec.get("oneOf"), list) else spec.get("anyOf")
    if isinstance(listed, list):  # titled choices: [{const, title}]
        pairs = [(str(o.get("const")), str(o.get("title") or o.get("const")))
                 for o in listed if isinstance(o, Mapping) and "const" in o]  # fmt: skip
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    return (), ()


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _field(name: str, spec: Mapping[str, Any], required: bool) -> FormField | None:
    kind = spec.get("type")
    items = spec.get("items")
    least, most = 0, None
    if kind == "array":  # several choices: the items' options
        options, labels = _choices(items) if isinstance(items, Mapping) else ((), ())
        if not options:
            return None  # a list of free text is nothing the spec allows
        kind = "choices"
        least, most = _count(spec.get("minItems")) or 0, _count(spec.get("maxItems"))
    else:
        options, labels = _choices(spec)
        if options:
            kind = "choice"
        elif kind not in KINDS:
            return None
    default = spec.get("default")
    if kind == "choices":  # the default options it names, as many as fit
        picked = [str(v) for v in default if str(v) in options] if isinstance(default, list) else []
        default = picked[:most] if picked else None
    elif kind == "choice":
        default = str(default) if default is not None and str(default) in options else None
    elif not isinstance(default, str | int | float | bool):
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
        min_items=least,
        max_items=most,
    )
