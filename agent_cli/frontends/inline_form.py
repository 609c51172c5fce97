"""An MCP server's form asked inline on the terminal: the line REPL (`agent --plain`).

The form's message and where it comes from are drawn with Rich on stderr; each
field is then asked with prompt-toolkit, its default already typed in (Enter
keeps it); several choices are typed with commas between them (titles or
numbers). A value that does not fit the field is said and asked again. Last:
accept (send the values), decline, or cancel; Ctrl-C or Ctrl-D cancels.
"""

from __future__ import annotations

import sys
from typing import Any

from agent_cli.engine.elicitation import ElicitationRequest
from agent_cli.tools.mcp_forms import CANCEL, ElicitAnswer, FormField, Value


async def ask_form(request: ElicitationRequest) -> ElicitAnswer:
    """Ask the person; never raises (a form that cannot be asked is cancelled)."""
    try:
        return await _ask(request)
    except (KeyboardInterrupt, EOFError):
        return CANCEL
    except Exception as exc:  # an unanswered form would hold the call until its timeout
        print(f"agent: the form could not be shown ({exc}); it is cancelled.", file=sys.stderr)
        return CANCEL


async def _ask(request: ElicitationRequest) -> ElicitAnswer:
    form = request.form
    _show(form.server, form.message)
    values: dict[str, Value] = {}
    for field in form.fields:
        value = await _field(field)
        if value is not None:
            values[field.name] = value
    while True:
        answer = (await _prompt("Send it? [a]ccept  [d]ecline  [c]ancel: ")).strip().lower()[:1]
        if answer == "a":
            missing = form.missing(values)
            if not missing:
                return ElicitAnswer("accept", values)
            print(f"Still wanted: {', '.join(missing)}.", file=sys.stderr)
            for field in form.fields:
                if field.label in missing:
                    value = await _field(field)
                    if value is not None:
                        values[field.name] = value
        elif answer == "d":
            return ElicitAnswer("decline")
        elif answer == "c":
            return CANCEL


async def _field(field: FormField) -> Value | None:
    """One field's value: typed, or its default kept; asked again until it fits."""
    about = f" — {field.description}" if field.description else ""
    choices = f" ({' / '.join(field.labels or field.options)})" if field.options else ""
    if field.kind == "choices":  # several: typed with commas between them
        choices = f" ({_how_many(field)}, with commas: {' / '.join(field.labels or field.options)})"
    if field.kind == "boolean":
        choices = " (yes / no)"
    mark = " *" if field.required else ""
    while True:
        typed = await _prompt(f"{field.label}{mark}{choices}{about}: ", field.shown(field.default))
        try:
            return field.parse(typed)
        except ValueError as exc:
            print(f"{exc}.", file=sys.stderr)


def _how_many(field: FormField) -> str:
    least, most = field.min_items, field.max_items
    if most is None:
        return f"at least {least}" if least else "any of"
    if least == most:
        return f"exactly {least}"
    return f"{least} to {most}" if least else f"up to {most}"


def _show(server: str, message: str) -> None:
    from rich.console import Console
    from rich.panel import Panel
    from rich.text import Text

    console = Console(file=sys.stderr, highlight=False)
    body = Text(message.strip() or "(no message)")
    body.append("\n* is a required field; Enter keeps what is filled in.", style="dim")
    title = f"The MCP server {server!r} asks"
    console.print(Panel(body, title=title, title_align="left", border_style="cyan"))


async def _prompt(message: str, default: str = "") -> Any:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.output import create_output

    session: PromptSession[str] = PromptSession(output=create_output(stdout=sys.stderr))
    # handle_sigint=False: as the approval card, so Ctrl-C still reaches the REPL's stop.
    return await session.prompt_async(message, default=default, handle_sigint=False)
