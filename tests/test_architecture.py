"""The dependency direction of ARCHITECTURE.md, read from the imports."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "agent_cli"
UI_LIBRARIES = ("textual", "rich", "prompt_toolkit")
CORE = ("engine", "backends", "providers", "tools", "policy", "sandbox")
# What each part may import from the package (besides itself).
ALLOWED = {
    "engine": {"engine", "policy", "settings", "tools", "providers", "sandbox", "errors", "paths"},
    "policy": {"policy", "tools", "providers", "sandbox", "errors", "paths", "settings"},
    "providers": {"providers", "errors", "paths"},
    "tools": {"tools", "providers", "sandbox", "errors", "paths"},
    "sandbox": {"sandbox", "errors", "paths", "logs"},
    # Scheduled tasks sit beside the commands: they drive a headless run through wiring.
    "tasks": {"tasks", "wiring", "frontends", "engine", "settings", "errors", "paths"},
    "backends": {
        "backends",
        "engine",
        "policy",
        "settings",
        "tools",
        "providers",
        "sandbox",
        "errors",
        "paths",
    },
}


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


def modules(part: str) -> list[Path]:
    return sorted((PACKAGE / part).rglob("*.py"))


def test_core_never_imports_a_ui_library():
    bad = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for part in CORE
        for path in modules(part)
        for name in imports_of(path)
        if name.split(".")[0] in UI_LIBRARIES
    ]
    assert not bad, "core modules must not import UI libraries: " + "; ".join(bad)


def test_each_part_imports_only_what_is_below_it():
    bad = []
    for part, allowed in ALLOWED.items():
        for path in modules(part):
            for name in imports_of(path):
                if name.startswith("agent_cli."):
                    target = name.split(".")[1]
                    if target not in allowed:
                        bad.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert not bad, "imports against ARCHITECTURE.md's direction: " + "; ".join(bad)


def test_nothing_imports_the_cli():
    bad = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name not in ("__main__.py",) and "agent_cli.cli" in imports_of(path)
    ]
    assert not bad, f"only __main__ may import agent_cli.cli: {bad}"
