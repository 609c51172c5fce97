"""The command line: flags → Settings → wiring → a front end → an exit code.

Startup is lazy on purpose: `agent --version` imports nothing but this
module, `--help` only Typer, and a command imports what it uses when it runs.
"""

from __future__ import annotations

import sys
from typing import NoReturn

from agent_cli import __version__

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def main() -> None:
    _leave(run(sys.argv[1:]))


def run(argv: list[str]) -> str | int | None:
    """The CLI on `argv`, to its end; what the process exits with (as `SystemExit.code`).

    `main` is this and a quick exit; the tests call it in their own process.
    """
    if argv in (["--version"], ["-V"]):  # the fast path: no Typer, no imports
        print(f"agent {__version__}")
        return EXIT_OK
    # httpx imports its own command-line client whenever click and rich are installed
    # (they are: Typer and the TUI), which costs ~90 ms at start; nothing here uses it.
    # (None in sys.modules makes an import of it fail: typeshed allows only modules there.)
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    if not argv:  # `agent` alone, the usual start: the front end without Typer (~50 ms)
        from agent_cli.commands.opening import start_bare

        return start_bare()
    app = _app(argv)
    try:
        app(args=argv, prog_name="agent", standalone_mode=True)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except SystemExit as e:
        return e.code
    return EXIT_OK


def _leave(code: str | int | None) -> NoReturn:
    """Exit without Python's teardown, once nothing is left to do.

    Freeing every module and object at exit takes 50-70 ms — a sixth of a
    one-shot run — and serves nothing once the exit handlers have run (they
    close the log) and the standard streams are flushed. Only when the main
    thread is the last one and the code is a number; else the usual way.
    """
    threading = sys.modules.get("threading")
    if not isinstance(code, int | None) or (threading and threading.active_count() > 1):
        sys.exit(code)
    import atexit
    import contextlib
    import os

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(code or EXIT_OK)


def _app(argv: list[str]):  # -> typer.Typer; built on demand: `--version` skips Typer
    import typer

    from agent_cli.commands import register

    app = typer.Typer(
        name="agent",
        help='A terminal coding agent. Run `agent run "..."` for a one-shot answer.',
        epilog="Examples: agent · agent --plain · agent --agent opencode · "
        'agent run "why does the test fail?" · cat log.txt | agent run "explain this error"',
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        add_completion=False,
        no_args_is_help=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    register(app, argv)
    return app
