"""errors.py's tree is the package's whole set of user-facing errors, pinned as httpx
pins its public surface: a new error class fails here until it is drawn in the tree."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import pytest

from agent_cli import errors

PACKAGE = Path(errors.__file__).resolve().parent
# Exceptions that never reach a person: what the model is told, or what is caught
# inside one module and said in other words there.
INTERNAL = {
    "ArgumentError": "tools: bad arguments are a tool result for the model",
    "OutsideWorkspace": "tools: a path outside the workspace is a tool result for the model",
    "FrontMatterError": "skills: a bad SKILL.md becomes a warning naming the file",
}
BUILTIN_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


def drawn_tree() -> dict[str, str]:
    """{class: parent} as errors.py's docstring draws it."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        match = re.match(r"^(?P<lead>[\s│├└─]*?)(?P<name>[A-Z]\w*)(\s|$)", line)
        if not match or not ("──" in match["lead"] or match["name"] == "AgentError"):
            continue
        depth = len(match["lead"])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[match["name"]] = stack[-1][1] if stack else ""
        stack.append((depth, match["name"]))
    return parents


def exception_classes() -> dict[str, str]:
    """{public exception class defined anywhere in the package: its module's path}."""
    classes: list[tuple[str, list[str], str]] = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(base).split(".")[-1] for base in node.bases]
                classes.append((node.name, bases, str(path.relative_to(PACKAGE))))
    known = set(BUILTIN_EXCEPTIONS)
    found: dict[str, str] = {}
    grew = True
    while grew:  # a class is an exception when one of its bases is
        grew = False
        for name, bases, where in classes:
            if (name, where) not in found.items() and known.intersection(bases):
                known.add(name)
                grew = grew or name not in found
                found[name] = where
    return {name: where for name, where in found.items() if not name.startswith("_")}


def test_the_tree_is_drawn_as_the_classes_are():
    drawn = drawn_tree()
    assert drawn["AgentError"] == "" and len(drawn) > 10, drawn
    for name, parent in drawn.items():
        cls = getattr(errors, name, None)
        assert isinstance(cls, type), f"errors.py draws {name}, which it does not define"
        if parent:
            assert cls.__bases__ == (getattr(errors, parent),), f"{name} is drawn under {parent}"


def test_every_user_facing_error_is_in_the_tree_and_defined_there():
    drawn = drawn_tree()
    defined_here = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, errors.AgentError)
    }
    assert defined_here == set(drawn), "errors.py's classes and its drawn tree differ"
    elsewhere = {
        name: where
        for name, where in exception_classes().items()
        if where != "errors.py" and name not in INTERNAL
    }
    assert not elsewhere, (
        f"exception classes outside errors.py: {elsewhere} — a user-facing one belongs in "
        "errors.py's tree; one that never reaches a person goes in INTERNAL with why"
    )


def test_the_internal_list_names_only_classes_that_exist():
    assert set(INTERNAL) <= set(exception_classes())


@pytest.mark.parametrize(
    ("doc", "tree"),
    [
        (
            "    AgentError\n    ├── A\n    │   └── B\n    └── C\n",
            {"AgentError": "", "A": "AgentError", "B": "A", "C": "AgentError"},
        ),
        (
            "    AgentError   exit 1\n    └── A   words Like These\n",
            {"AgentError": "", "A": "AgentError"},
        ),
    ],
)
def test_the_tree_reader_reads_parents_from_the_drawing(monkeypatch, doc, tree):
    monkeypatch.setattr(errors, "__doc__", doc)
    assert drawn_tree() == tree
