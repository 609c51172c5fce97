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


async def answered(typed: str) -> ElicitAnswer:
    request = ElicitationRequest(form_of("people", "Who are you?", SCHEMA))
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
