"""Tool plumbing: the model's 12 KiB view of a result, schemas from typed parameters,
argument checking, and the side effect every built-in tool declares (SPEC §7)."""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

import pytest

from agent_cli.tools.base import (
    MODEL_RESULT_CAP,
    ArgumentError,
    Effect,
    ToolContext,
    ToolResult,
    cap_for_model,
    schema_of_function,
    tool,
)
from agent_cli.tools.builtin import builtin_tools

# llama.cpp's names (SPEC §7), then ours: the plan, and reading and ending background commands.
BUILTIN_TOOLS = {
    "read_file": Effect.READ,
    "file_glob_search": Effect.READ,
    "grep_search": Effect.READ,
    "get_info": Effect.READ,
    "update_plan": Effect.READ,
    "write_file": Effect.WRITE,
    "edit_file": Effect.WRITE,
    "exec_shell_command": Effect.EXEC,
    "shell_output": Effect.READ,
    "shell_kill": Effect.READ,
}


def test_a_result_within_the_cap_reaches_the_model_unchanged() -> None:
    text = "é" * (MODEL_RESULT_CAP // 2)  # exactly the cap in UTF-8 bytes
    assert cap_for_model(text) == text


@pytest.mark.parametrize("char", ["a", "é", "€", "😀"])  # 1 to 4 bytes in UTF-8
def test_a_long_result_keeps_head_and_tail_whole_characters_and_says_what_was_cut(
    char: str,
) -> None:
    lines = [f"{n:05d} {char * 40}" for n in range(5000)]
    text = "\n".join(lines)
    capped = cap_for_model(text)
    assert len(capped.encode("utf-8")) <= MODEL_RESULT_CAP
    head, rest = capped.split("\n[... ", 1)
    note, tail = rest.split(" ...]\n", 1)
    assert text.startswith(head) and text.endswith(tail)  # no character broken or replaced
    assert "\ufffd" not in capped
    assert head.startswith("00000 ") and tail.endswith(f"04999 {char * 40}")
    cut = len(text.encode()) - len(head.encode()) - len(tail.encode())
    assert note.startswith(f"{cut} bytes (") and "lines) cut here" in note
    assert "the person sees the whole result" in note


def test_a_tiny_cap_still_gives_a_short_answer() -> None:
    capped = cap_for_model("x" * 10_000, limit=100)
    assert "cut here" in capped and len(capped) < 300


def test_the_builtin_tools_have_llama_cpp_names_in_order_and_declare_their_effect() -> None:
    tools = builtin_tools()
    assert tools.names() == list(BUILTIN_TOOLS)
    for t in tools:
        assert t.effect is BUILTIN_TOOLS[t.name], t.name
        assert t.parameters["type"] == "object" and t.description, t.name
        assert t.spec.parameters is t.parameters  # one schema, sent as is


class Pair(TypedDict):
    left: str
    right: Annotated[int, "how many"]


async def _sample(
    ctx: ToolContext,
    name: Annotated[str, "a name"],
    kind: Literal["file", "dir"] = "file",
    pairs: list[Pair] | None = None,
    depth: int = 3,
    loud: bool = False,
) -> ToolResult:
    """A sample tool."""
    return ToolResult(f"{name} {kind} {pairs} {depth} {loud}")


def test_the_schema_comes_from_the_typed_parameters() -> None:
    assert schema_of_function(_sample) == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "a name"},
            "kind": {"type": "string", "enum": ["file", "dir"], "default": "file"},
            "pairs": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "left": {"type": "string"},
                        "right": {"type": "integer", "description": "how many"},
                    },
                    "required": ["left", "right"],
                },
            },
            "depth": {"type": "integer", "default": 3},
            "loud": {"type": "boolean", "default": False},
        },
        "required": ["name"],
    }


def test_an_unsupported_parameter_type_is_refused_when_the_tool_is_made() -> None:
    async def bad(ctx: ToolContext, when: bytes) -> ToolResult:
        return ToolResult("")

    with pytest.raises(TypeError, match="unsupported tool parameter type"):
        tool("bad", Effect.READ)(bad)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "lack the required parameter(s) 'name'"),
        ({"name": 3}, "'name' must be a string"),
        ({"name": "x", "kind": "link"}, "must be one of 'file', 'dir'"),
        ({"name": "x", "depth": "deep"}, "'depth' must be an integer"),
        ({"name": "x", "loud": "maybe"}, "'loud' must be true or false"),
        ({"name": "x", "pairs": {"left": "a"}}, "'pairs' must be a JSON array"),
        ({"name": "x", "pairs": [{"left": "a"}]}, "lack the required parameter(s) 'right'"),
        ([1, 2], "arguments must be a JSON object"),
    ],
)
def test_bad_arguments_are_refused_with_what_is_wrong(arguments: object, message: str) -> None:
    sample = tool("sample", Effect.READ)(_sample)
    with pytest.raises(ArgumentError) as caught:
        sample.check(arguments)  # type: ignore[arg-type]
    assert message in str(caught.value)


async def test_arguments_get_defaults_and_unambiguous_strings_are_accepted(tmp_path) -> None:
    sample = tool("sample", Effect.READ)(_sample)
    checked = sample.check({"name": "x", "depth": "7", "loud": "true", "extra": 1})
    assert checked == {"name": "x", "depth": 7, "loud": True}  # unknown keys are dropped
    result = await sample.run(ToolContext(workspace=None), {"name": "x"})
    assert result.text == "x file None 3 False"
