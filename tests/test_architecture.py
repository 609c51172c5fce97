"""The dependency direction of ARCHITECTURE.md, read from the imports.

Every part of the package (a top-level module or folder of `agent_cli`) has a
place in one ordered table; a part imports only parts in layers below its own,
so two parts can never import each other, and a new part fails the test until
it is given a place.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "agent_cli"
UI_LIBRARIES = ("textual", "rich", "prompt_toolkit")

# Top to bottom. Parts in one layer are peers: neither imports the other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__main__",),
    ("cli",),
    ("commands",),  # one module per command group, and the scheduled-task runner
    ("wiring",),  # the composition root
    ("frontends", "backends"),
    ("engine",),  # the Session and the types everyone shares
    ("settings", "mcp_config"),  # configuration files, read into typed settings
    ("policy",),
    ("tools", "git", "tasks", "credentials"),
    ("lsp", "providers"),
    ("sandbox",),
    ("media",),  # images and the person's attachments: the type everyone passes on
    ("errors", "paths", "logs", "durable", "__init__"),
)
# The engine's parts and what they stand on render nothing.
CORE = ("engine", "backends", "providers", "tools", "policy", "sandbox", "lsp", "media")
RANK = {part: rank for rank, layer in enumerate(LAYERS) for part in layer}


def part_of(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def package_parts() -> set[str]:
    return {part_of(path) for path in PACKAGE.rglob("*.py")}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            if node.module == "agent_cli":  # `from agent_cli import wiring` names a module
                names.update(f"agent_cli.{a.name}" for a in node.names if a.name != "__version__")
    return names


def part_imports() -> dict[str, set[str]]:
    """Which other parts each part imports (at any depth of its modules)."""
    found: dict[str, set[str]] = {part: set() for part in package_parts()}
    for path in PACKAGE.rglob("*.py"):
        source = part_of(path)
        for name in imports_of(path):
            if name.startswith("agent_cli."):
                target = name.split(".")[1]
                if target != source:
                    found[source].add(target)
    return found


def test_every_part_has_a_place_in_the_table():
    missing = sorted(package_parts() - RANK.keys())
    assert not missing, f"parts of agent_cli missing from LAYERS (give each a layer): {missing}"


def test_each_part_imports_only_parts_below_it():
    bad = [
        f"{source} (layer {RANK[source]}) imports {target} (layer {RANK.get(target, '?')})"
        for source, targets in part_imports().items()
        for target in targets
        if source in RANK and RANK.get(target, -1) <= RANK[source]
    ]
    assert not bad, "imports against ARCHITECTURE.md's direction: " + "; ".join(sorted(bad))


def find_cycle(edges: dict[str, set[str]]) -> list[str]:
    """One cycle in the graph as a path that ends where it began; [] when there is none."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str]:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return []
        for target in sorted(edges.get(node, ())):
            if cycle := visit(target, [*path, node]):
                return cycle
        done.add(node)
        return []

    for node in sorted(edges):
        if cycle := visit(node, []):
            return cycle
    return []


def test_no_import_cycle_between_parts():
    cycle = find_cycle(part_imports())
    assert not cycle, "parts import each other in a cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize(
    ("edges", "cycle"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
        ({"x": {"y"}, "y": {"y"}}, ["y", "y"]),
        ({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}, []),
    ],
)
def test_the_cycle_finder_finds_cycles_and_only_cycles(edges, cycle):
    assert find_cycle(edges) == cycle


def modules(part: str) -> list[Path]:
    folder = PACKAGE / part
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [PACKAGE / f"{part}.py"]


def test_core_never_imports_a_ui_library():
    bad = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for part in CORE
        if (PACKAGE / part).exists()
        for path in modules(part)
        for name in imports_of(path)
        if name.split(".")[0] in UI_LIBRARIES
    ]
    assert not bad, "core modules must not import UI libraries: " + "; ".join(bad)


def test_nothing_imports_the_cli():
    bad = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name not in ("__main__.py",) and "agent_cli.cli" in imports_of(path)
    ]
    assert not bad, f"only __main__ may import agent_cli.cli: {bad}"


def test_front_ends_reach_only_the_session_and_what_wiring_hands_them():
    """Front ends never import the parts behind the Session (ARCHITECTURE.md)."""
    behind = {"git", "tasks", "mcp_config", "wiring", "backends", "credentials", "sandbox"}
    bad = sorted(part_imports()["frontends"] & behind)
    assert not bad, f"frontends import {bad}: give the Session or wiring's Bench what they need"


def private_imports() -> list[str]:
    """`from agent_cli.x import _name`: another module's private name."""
    bad = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agent_cli"):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        bad.append(f"{path.relative_to(PACKAGE)}: {node.module}.{alias.name}")
    return bad


def test_no_module_imports_another_modules_private_names():
    bad = private_imports()
    assert not bad, "make shared names public instead: " + "; ".join(bad)
