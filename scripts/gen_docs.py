"""Regenerate the shell completions and the man page from the CLI.

    python scripts/gen_docs.py            # write completions/agent.{bash,zsh,fish}, man/agent.1
    python scripts/gen_docs.py --check    # exit 1 when a committed file is out of date
    python scripts/gen_docs.py --out DIR  # write them under DIR instead (tests use it)

Run it after changing any command, option or help text; tests/test_docs_gen.py
fails until the committed files match.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's package, whatever is installed
sys.path.insert(0, str(ROOT / "scripts"))  # docs_gen: build-time code, not shipped

from docs_gen import Command, describe, render_all  # noqa: E402

from agent_cli import __version__  # noqa: E402
from agent_cli.commands import SUMMARIES  # noqa: E402


def full_tree() -> Command:
    """`agent` with every command registered for real, as each is when it is invoked.

    The CLI builds only the command on the line (start-up time), so each
    command's app is built on its own and their commands put under one root.
    """
    import typer.main

    from agent_cli import cli

    root = typer.main.get_command(cli._app([]))
    commands = {}
    for name in SUMMARIES:
        try:
            app = cli._app([name])
        except ModuleNotFoundError as e:
            if e.name != f"agent_cli.commands.{name}":
                raise
            print(f"gen_docs: skipped `agent {name}`: its module is not there yet", file=sys.stderr)
            continue
        commands[name] = typer.main.get_command(app).commands[name]
    root.commands = commands
    return describe(root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT, help="write under this folder")
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 if stale")
    args = parser.parse_args(argv)
    files = render_all(full_tree(), __version__)
    stale = []
    for name, text in files.items():
        path = args.out / name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(name)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print(f"out of date: {', '.join(stale)} — run python scripts/gen_docs.py", file=sys.stderr)
        return 1
    if not args.check:
        print(f"wrote {', '.join(stale) or 'nothing (all current)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
