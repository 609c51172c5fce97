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


def test_several_choices_titled_or_not_and_a_titled_choice_come_from_the_spec_schemas():
    from tests.support.mcp_servers.server import PIZZA

    toppings, size, sides = form_of("p", "Which pizza?", PIZZA).fields
    assert (toppings.kind, toppings.options, toppings.labels) == (
        "choices", ("cheese", "ham", "olives"), ()
    )  # fmt: skip
    assert (toppings.min_items, toppings.max_items, toppings.default) == (1, 2, ["cheese"])
    assert toppings.required and not sides.required
    assert (size.kind, size.options, size.labels, size.default) == (
        "choice", ("s", "l"), ("Small", "Large"), "l"
    )  # fmt: skip
    assert (sides.kind, sides.labels, sides.max_items) == (
        "choices", ("French fries", "Green salad"), None
    )  # fmt: skip
    assert (
        size.shown("l") == "Large"
        and sides.shown(["fries", "salad"]) == "French fries, Green salad"
    )
    legacy = form_of("p", "", {"properties": {"c": {"enum": ["a", "b"], "enumNames": ["A", "B"]}}})
    assert legacy.fields[0].labels == ("A", "B")


def test_several_choices_are_typed_with_commas_and_their_count_is_checked():
    from tests.support.mcp_servers.server import PIZZA

    toppings, _, sides = form_of("p", "", PIZZA).fields
    assert toppings.parse("Ham, 3") == ["ham", "olives"]  # a value or a number
    assert sides.parse("green salad,french fries, salad") == ["salad", "fries"]  # titles, once
    with pytest.raises(ValueError, match=r"Toppings: choose 1 to 2 \(of cheese, ham, olives\)"):
        toppings.parse("cheese, ham, olives")
    with pytest.raises(ValueError, match="Sides: one of French fries, Green salad"):
        sides.parse("fries, chips")
    assert toppings.parse(" ") is None  # nothing: a required field is still wanted
    spec = {**PIZZA["properties"]["toppings"], "default": ["ham", "cheese", "olives", "no"]}
    many = form_of("p", "", {"properties": {"x": spec}})
    assert many.fields[0].default == ["ham", "cheese"]  # known options, as many as fit
