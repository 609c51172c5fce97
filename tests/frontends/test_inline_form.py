"""An MCP server's form asked inline (the line REPL), typed through prompt-toolkit's pipe."""

from __future__ import annotations

import asyncio

from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from agent_cli.engine.elicitation import ElicitationRequest
from agent_cli.frontends.inline_form import ask_form
from agent_cli.tools.mcp_forms import ElicitAnswer, form_of

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Your name"},
        "age": {"type": "integer", "default": 30},
        "colour": {"type": "string", "enum": ["red", "green"], "default": "green"},
    },
    "required": ["name"],
}


async def answered(typed: str, schema: dict = SCHEMA) -> ElicitAnswer:
    request = ElicitationRequest(form_of("people", "Who are you?", schema))
    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        keys.send_text(typed)
        return await asyncio.wait_for(ask_form(request), 10)


async def test_defaults_are_filled_in_and_typed_values_checked(capfd):
    # name; age: "x" is refused, then Enter keeps 30 (typed over: erase it first); colour kept
    answer = await answered("Ann\r\x08\x08x\r\r\ra\r")
    assert answer == ElicitAnswer("accept", {"name": "Ann", "age": 30, "colour": "green"})
    told = capfd.readouterr().err
    assert "The MCP server 'people' asks" in told and "Who are you?" in told
    assert "age: a whole number is wanted." in told


async def test_a_required_field_left_empty_is_asked_again_before_accepting(capfd):
    answer = await answered("\r\r\ra\rBo\ra\r")
    assert answer == ElicitAnswer("accept", {"name": "Bo", "age": 30, "colour": "green"})
    assert "Still wanted: name." in capfd.readouterr().err


async def test_decline_and_cancel():
    assert await answered("\r\r\rd\r") == ElicitAnswer("decline")
    assert await answered("\r\r\rc\r") == ElicitAnswer("cancel")
    assert await answered("\x03") == ElicitAnswer("cancel")  # Ctrl-C


async def test_several_choices_are_typed_with_commas_and_too_many_are_asked_again(capfd):
    from tests.support.mcp_servers.server import PIZZA

    # toppings: "cheese" is typed in; three are refused, then two; size: Large kept;
    # sides: a title and a number
    erase = "\x08" * len("cheese")
    typed = f"{erase}1, 2, 3\r{erase}ham, Olives\r\rGreen salad, 1\ra\r"
    answer = await answered(typed, PIZZA)
    assert answer == ElicitAnswer(
        "accept", {"toppings": ["ham", "olives"], "size": "l", "sides": ["salad", "fries"]}
    )
    told = capfd.readouterr().err
    assert "Toppings: choose 1 to 2 (of cheese, ham, olives)." in told
