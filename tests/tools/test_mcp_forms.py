"""An MCP server's form, read from its schema, and what a person types checked against it."""

from __future__ import annotations

import pytest

from agent_cli.tools.mcp_forms import form_of

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "Your name"},
        "age": {"type": "integer", "default": 30},
        "ratio": {"type": "number"},
        "ok": {"type": "boolean", "default": False},
        "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
        "tone": {"type": "string", "oneOf": [{"const": "calm", "title": "Calm"}]},
        "nested": {"type": "object"},
    },
    "required": ["name", "size"],
}


def test_fields_come_from_the_schema_and_what_cannot_be_shown_is_left_out():
    form = form_of("s", "Tell me", SCHEMA)
    assert [(f.name, f.kind, f.required) for f in form.fields] == [
        ("name", "string", True),
        ("age", "integer", False),
        ("ratio", "number", False),
        ("ok", "boolean", False),
        ("size", "choice", True),
        ("tone", "choice", False),
    ]
    assert form.defaults() == {"age": 30, "ok": False}
    assert form.missing({"name": "x"}) == ["size"]
    size = form.fields[4]
    assert (size.options, size.labels, size.shown("m")) == (
        ("s", "m"),
        ("Small", "Medium"),
        "Medium",
    )
    assert form.fields[0].label == "Name" and form.fields[1].label == "age"


@pytest.mark.parametrize(
    ("name", "typed", "value"),
    [
        ("age", "41", 41),
        ("ratio", "0.5", 0.5),
        ("ok", "yes", True),
        ("ok", "n", False),
        ("size", "Medium", "m"),
        ("size", "s", "s"),
        ("size", "2", "m"),
        ("tone", "calm", "calm"),
        ("name", "  Ann ", "Ann"),
        ("name", "", None),
    ],
)
def test_typed_values_become_the_fields_types(name: str, typed: str, value: object):
    field = {f.name: f for f in form_of("s", "", SCHEMA).fields}[name]
    assert field.parse(typed) == value


@pytest.mark.parametrize(
    ("name", "typed", "said"),
    [
        ("age", "forty", "age: a whole number is wanted"),
        ("ratio", "half", "ratio: a number is wanted"),
        ("ok", "maybe", "ok: answer yes or no"),
        ("size", "huge", "size: one of Small, Medium"),
    ],
)
def test_a_value_that_does_not_fit_says_what_would(name: str, typed: str, said: str):
    field = {f.name: f for f in form_of("s", "", SCHEMA).fields}[name]
    with pytest.raises(ValueError, match=said):
        field.parse(typed)
