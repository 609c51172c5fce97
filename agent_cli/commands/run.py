"""`agent run`: a one-shot conversation for scripts and CI (SPEC §1)."""

from __future__ import annotations

import codecs
import sys
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from agent_cli.commands.common import (
    SANDBOX_HELP,
    Mode,
    SandboxMode,
    guarded,
    start_debug_log,
    workspace_from,
)
from agent_cli.errors import UsageError
from agent_cli.policy.modes import MODES_TEXT

if TYPE_CHECKING:
    from agent_cli.media import Image, Prompt
    from agent_cli.settings import Flags
    from agent_cli.wiring import McpTools, Opening

STDIN_CAP = 256 * 1024


class Output(StrEnum):
    text = "text"
    json = "json"
    stream_json = "stream-json"


class InputFormat(StrEnum):
    text = "text"
    stream_json = "stream-json"


def register(app: typer.Typer) -> None:
    app.command(
        "run",
        epilog='Examples: agent run "fix the failing test" · cat log | agent run "why?" · '
        'echo "prompt" | agent run · agent run --continue "and now?" · '
        'agent run --output stream-json "..." | jq · agent run --agent opencode "..."',
    )(run)


def run(
    prompt: Annotated[
        str | None,
        typer.Argument(help="The request. `-` (or none, with a pipe) reads it from stdin."),
    ] = None,
    model: Annotated[str | None, typer.Option(help="The model to use.")] = None,
    provider: Annotated[str | None, typer.Option(help="The provider (a config entry).")] = None,
    mode: Annotated[
        Mode | None,
        typer.Option(
            help=f"{MODES_TEXT}. Default: ask on a terminal, else read-only. plan: reads, "
            "then prints the plan."
        ),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Allow every change (mode full).")
    ] = False,
    output: Annotated[Output, typer.Option("--output", "-o", help="text, json or stream-json.")] = (
        Output.text
    ),
    input_format: Annotated[
        InputFormat,
        typer.Option(
            "--input-format",
            help='text, or stream-json: messages as JSON lines on stdin ({"type": "user", '
            '"text": "..."}), each steered into the run going on; with --output stream-json.',
        ),
    ] = InputFormat.text,
    max_rounds: Annotated[
        int | None, typer.Option(min=1, help="Round limit for this message (default 30).")
    ] = None,
    continue_last: Annotated[
        bool, typer.Option("--continue", "-c", help="Go on with the last conversation here.")
    ] = False,
    resume: Annotated[str | None, typer.Option(help="Go on with conversation ID.")] = None,
    no_save: Annotated[bool, typer.Option("--no-save", help="Do not store the conversation.")] = (
        False
    ),
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the answer.")] = False,
    compact: Annotated[
        bool,
        typer.Option(
            "--compact", help="First summarise the conversation's older items (with --continue)."
        ),
    ] = False,
    debug: Annotated[
        bool, typer.Option("--debug", help="Write a debug log; show tracebacks.")
    ] = False,
    agent: Annotated[
        str | None,
        typer.Option(help="Another coding agent (see `agent agents`) instead of the built-in one."),
    ] = None,
    cwd: Annotated[Path | None, typer.Option(help="Work in this folder.")] = None,
    sandbox: Annotated[SandboxMode | None, typer.Option(help=SANDBOX_HELP)] = None,
    image: Annotated[
        list[Path] | None,
        typer.Option(
            "--image",
            help="Attach an image (PNG, JPEG, GIF or WebP) to the message; repeatable.",
        ),
    ] = None,
) -> None:
    """Run one request to its end and print the answer (for scripts and CI)."""

    def action() -> int:
        from agent_cli.settings import Flags
        from agent_cli.wiring import Opening

        if debug:
            start_debug_log()
        if continue_last and resume is not None:
            raise UsageError("Give --continue or --resume ID, not both.")
        streamed = input_format is InputFormat.stream_json
        if streamed and output is not Output.stream_json:
            raise UsageError("--input-format stream-json goes with --output stream-json.")
        if streamed and (sys.stdin is None or sys.stdin.isatty()):
            raise UsageError("--input-format stream-json reads JSON lines from a pipe on stdin.")
        if image and streamed:
            raise UsageError(
                "--image goes with a prompt, not with --input-format stream-json — "
                "give the prompt as an argument."
            )
        options = RunOptions(
            prompt=(prompt or "") if streamed else read_prompt(prompt, optional=compact),
            images=_images(image or []),
            mode="full" if yes else mode.value if mode else None,
            output=output.value,
            quiet=quiet,
            compact=compact,
            opening=Opening(resume=resume, continue_last=continue_last, save=not no_save),
            flags=Flags(
                model=model,
                provider=provider,
                max_rounds=max_rounds,
                debug=debug,
                sandbox=sandbox.value if sandbox else None,
            ),
            cwd=cwd,
            agent=agent,
            streamed=streamed,
        )
        return _run(options)

    raise typer.Exit(guarded(debug, action))


def read_prompt(prompt: str | None, optional: bool = False) -> str:
    """The prompt from the argument and/or stdin (SPEC §1); "" only when `optional`."""
    stdin = sys.stdin
    piped = stdin is not None and not stdin.isatty()
    if prompt is None and optional and not piped:
        return ""
    if prompt is None or prompt == "-":
        if not piped:
            raise UsageError('Give a request: agent run "your request", or pipe one in.')
        text = _read_capped(stdin)
        if not text.strip() and optional:
            return ""
        if not text.strip():
            raise UsageError('stdin was empty — give a request: agent run "your request".')
        return text.strip()
    if piped:
        data = _read_capped(stdin)
        if data.strip():
            return f"{prompt}\n\n{_fenced(data)}"
    return prompt


def _read_capped(stream: TextIO) -> str:
    """At most STDIN_CAP bytes of `stream` as text, saying so on stderr when there was more.

    The rest is read and counted, not kept: the writer then ends normally instead of
    on a broken pipe (which fails a `set -o pipefail` script).
    """
    buffer = stream.buffer
    data = buffer.read(STDIN_CAP)
    total = len(data)
    while chunk := buffer.read(1 << 16):
        total += len(chunk)
    if total > STDIN_CAP:
        print(
            f"agent: stdin was {total:,} bytes; only the first {STDIN_CAP:,} bytes were included.",
            file=sys.stderr,
        )
    # Not final when cut: a character split by the cap is dropped, not shown as "�".
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    return decoder.decode(data, final=total <= STDIN_CAP)


def _fenced(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip()}\n{fence}"


def _images(paths: list[Path]) -> tuple[Image, ...]:
    """The images of `--image`, each read now: a bad one stops the run before it starts."""
    from agent_cli.media import load_image

    return tuple(load_image(path, path.name) for path in paths)


@dataclass(frozen=True)
class RunOptions:
    prompt: str
    images: tuple[Image, ...]
    mode: str | None
    output: str
    quiet: bool
    compact: bool
    opening: Opening
    flags: Flags
    cwd: Path | None
    agent: str | None = None
    streamed: bool = False  # --input-format stream-json


async def _expanded(prompt: str, workspace: Path, mcp: McpTools) -> str | Prompt:
    """`/NAME args` as the message of the prompt command NAME (a command file, a skill, or
    an MCP server's prompt `/server:prompt`, its servers started for it); any other prompt
    as it is. Problems with the command files go to stderr."""
    from agent_cli import wiring
    from agent_cli.frontends.prompt_commands import expand_text, line_of

    if not prompt.startswith("/"):
        return prompt
    commands = wiring.prompt_commands(workspace, mcp)
    name = (line_of(prompt) or ("", ""))[0]
    if commands.get(name) is None and ":" in name:
        await commands.load(start=True)
    for warning in commands.take_warnings():
        print(f"agent: {warning}", file=sys.stderr)
    return await expand_text(commands, prompt)


def _run(options: RunOptions) -> int:
    import asyncio

    from agent_cli import wiring
    from agent_cli.frontends.run import run_once
    from agent_cli.media import Prompt
    from agent_cli.settings import load_settings

    workspace = workspace_from(options.cwd)
    settings = load_settings(workspace, replace(options.flags, mode=options.mode))
    for warning in settings.warnings:
        print(f"agent: {warning}", file=sys.stderr)
    terminal = sys.stdin is not None and sys.stdin.isatty() and not options.streamed
    run_mode = settings.mode or ("ask" if terminal else "read-only")
    if options.agent is not None:
        wiring.check_agent(settings, options.agent)
    store = wiring.make_store()
    conversation = wiring.open_conversation(settings, store, options.opening, run_mode)
    if (options.agent or conversation.agent) == "builtin":
        settings.require_provider()  # said before anything runs

    async def go() -> int:
        route = wiring.Route(settings)
        mcp: McpTools | None = None  # the session's MCP servers, and its prompts'
        try:
            if (options.agent or conversation.agent) == "builtin":
                await route.get()
            saving = store if options.opening.save else None
            ask_trust: wiring.AskTrust | None = None
            if terminal:
                from agent_cli.commands.trust import ask_trust_inline_async as ask_trust
            mcp = wiring.McpTools(
                workspace, ask_trust, settings.shell_environment, wiring.sandbox_of(settings)
            )
            session = wiring.routed_session(
                settings, conversation, saving, route, ask_trust, mcp=mcp
            )
            if options.agent is not None:
                await session.switch_agent(options.agent)
            approver = None
            if terminal:
                from agent_cli.frontends.inline_approval import InlineApprover

                approver = InlineApprover(session.set_mode, session.stop)
            messages = None
            if options.streamed:
                from agent_cli.frontends.stream_input import stdin_messages

                def said(text: str) -> None:
                    print(f"agent: {text}", file=sys.stderr, flush=True)

                messages = stdin_messages(sys.stdin.buffer, said)
            text = await _expanded(options.prompt, workspace, mcp)
            if isinstance(text, Prompt):  # an MCP prompt's images, then the command line's
                text = replace(text, images=(*text.images, *options.images))
            return await run_once(
                session,
                Prompt(text, options.images) if options.images and isinstance(text, str) else text,
                options.output,
                options.quiet,
                approver,
                options.compact,
                messages,
            )
        finally:
            if mcp is not None:
                await mcp.aclose()
            await route.aclose()

    return asyncio.run(go())
