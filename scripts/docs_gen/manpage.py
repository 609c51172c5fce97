"""`man/agent.1`: the man page, in roff (man macros), from the `Command` tree.

Every command and subcommand with its options comes from the tree; the
files are named from `agent_cli.paths` (their folders as platformdirs puts
them on Linux and macOS). The text is plain ASCII roff: other characters
become roff escapes, so `man`, groff and mandoc all read it the same.
"""

from __future__ import annotations

from pathlib import Path

from agent_cli import mcp_config, paths
from docs_gen import Command, Option

SPECIAL = {
    "\u2014": r"\(em",
    "\u2013": r"\(en",
    "\u2018": r"\(oq",
    "\u2019": r"\(cq",
    "\u201c": r"\(lq",
    "\u201d": r"\(rq",
    "\u2026": "...",
    "\u00b7": r"\(pc",
    "\u2192": r"\(->",
    "\u2265": r"\(>=",
    "\u2264": r"\(<=",
    "\u00a0": r"\ ",
}

ENVIRONMENT = (
    (
        "OPENAI_BASE_URL",
        "The address of an OpenAI-compatible server (for example "
        "http://127.0.0.1:8080/v1 for llama.cpp); with it set, no config file is needed.",
    ),
    ("OPENAI_API_KEY", "The key for OpenAI, or for the server OPENAI_BASE_URL names."),
    ("ANTHROPIC_API_KEY", "The key for Anthropic."),
    ("AGENT_MODEL", "The model to use (a --model flag wins)."),
    ("AGENT_PROVIDER", "The provider to use: a config entry or a preset (a --provider flag wins)."),
    ("VISUAL, EDITOR", "The editor agent config edit opens (VISUAL first)."),
    ("NO_COLOR", "When set, no colours are printed."),
    ("TERM", "With TERM=dumb (or no capable terminal), agent opens the line REPL, not the TUI."),
    (
        "XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME",
        "Move the config, data and log folders (on Linux).",
    ),
)

EXIT_STATUS = (
    ("0", "The request was answered (or the command did what it was asked)."),
    (
        "1",
        "The run ended in an error: the model service failed, a limit was reached, a "
        "conversation could not be read or written.",
    ),
    (
        "2",
        "A usage or configuration error: a bad flag or argument, no provider configured, "
        "a bad config file.",
    ),
    ("130", "Interrupted (Ctrl+C)."),
)

EXAMPLES = (
    ("agent", "Open the TUI in this folder."),
    ('agent run "why does the test fail?"', "One answer, printed; for scripts."),
    ('cat log.txt | agent run "explain this error"', "Standard input is added to the prompt."),
    (
        'agent run --mode full --output stream-json "fix the lint errors" | jq -c .',
        "In CI: every change allowed, one JSON event per line.",
    ),
    ('agent run --continue "and now the docs"', "Go on with the last conversation here."),
    ("agent sessions show 2025", "Print a stored conversation (an id prefix is enough)."),
    ("agent config show", "Every setting, and where its value comes from."),
    ("agent providers add openrouter", "Add a model service; the key is asked, never echoed."),
    ("agent run --debug hi", "Write a debug log (its path is printed; secrets redacted)."),
)


def escape(text: str) -> str:
    """Roff-safe text: backslashes, hyphens kept literal, non-ASCII as escapes."""
    out = text.replace("\\", r"\e").replace("-", r"\-")
    out = "".join(SPECIAL.get(c) or (c if ord(c) < 128 else rf"\[u{ord(c):04X}]") for c in out)
    return out


def _line(text: str) -> str:
    """One line of body text: a leading dot or quote would be read as a request."""
    body = escape(text)
    return rf"\&{body}" if body[:1] in (".", "'") else body


def _paragraphs(text: str) -> list[str]:
    """Help text as roff: paragraphs; an indented block (examples) kept as it is."""
    out = []
    for block in text.strip().split("\n\n"):
        lines = block.splitlines()
        if lines and all(line.startswith("  ") for line in lines if line.strip()):
            out += [".RS 2", ".nf", *(_line(line.strip()) for line in lines), ".fi", ".RE"]
        else:
            out += [".PP", _line(" ".join(block.split()))]
    return out


def _option(option: Option) -> list[str]:
    names = r", ".join(rf"\fB{escape(name)}\fR" for name in option.names)
    if option.takes_value:
        value = "|".join(option.choices) if option.choices else option.metavar
        names += rf" \fI{escape(value)}\fR"
    return [".TP", names, _line(option.help or "")]


def _examples(epilog: str) -> list[str]:
    """An epilog "Examples: a · b · c" as one example a line."""
    text = " ".join(epilog.split())
    if not text.startswith("Examples:"):
        return _paragraphs(epilog) if epilog else []
    items = [item.strip() for item in text.removeprefix("Examples:").split(" · ") if item.strip()]
    return [".PP", "Examples:", ".RS 2", ".nf", *(_line(item) for item in items), ".fi", ".RE"]


def _usage(command: Command) -> str:
    words = [rf"\fB{escape(command.name)}\fR", r"[\fIOPTIONS\fR]"]
    if command.subcommands:
        words.append(r"[\fICOMMAND\fR]" if command.runs_alone else r"\fICOMMAND\fR")
    for argument in command.arguments:
        name = rf"\fI{escape(argument.name)}\fR" + ("..." if argument.many else "")
        words.append(name if argument.required else f"[{name}]")
    return " ".join(words)


def _command(command: Command) -> list[str]:
    out = [f'.SS "{escape(command.name)}"', _usage(command), ".br"]
    out += _paragraphs(command.help)
    for argument in command.arguments:
        out += [".TP", rf"\fI{escape(argument.name)}\fR", _line(argument.help)]
    for option in command.options:
        out += _option(option)
    out += _examples(command.epilog)
    return out


def _files() -> list[str]:
    """The files agent reads and writes, named from `paths` (folders per platform)."""
    config = paths.user_config_file().relative_to(paths.config_dir())
    conversations = paths.conversations_dir().relative_to(paths.data_dir())
    credentials = paths.credentials_file().relative_to(paths.data_dir())
    project = paths.project_config_file(Path("WORKSPACE")).relative_to("WORKSPACE")
    app = paths.APP_NAME
    entries = (
        (
            f"~/.config/{app}/{config}",
            f"The user config file (in $XDG_CONFIG_HOME/{app} when set; on macOS in "
            f"~/Library/Application Support/{app}). agent config edit opens it.",
        ),
        (
            f"{project}",
            "The project config file, in the workspace. It cannot set mode, "
            "providers, rules.allow or agents: a cloned repository must not raise its own "
            "permissions.",
        ),
        (
            f"~/.config/{app}/{mcp_config.FILE_NAME}, .agent/{mcp_config.FILE_NAME}",
            "MCP servers, the user's and the workspace's (asked about once before they start).",
        ),
        (
            f"~/.local/share/{app}/{conversations}/",
            f"Stored conversations, one JSON file each (in $XDG_DATA_HOME/{app} when set; on "
            f"macOS in ~/Library/Application Support/{app}). See agent sessions.",
        ),
        (
            f"~/.local/share/{app}/{credentials}",
            "API keys by provider name, mode 0600, written by agent providers add.",
        ),
        (
            f"~/.local/state/{app}/log/",
            f"Debug logs written with --debug, secrets redacted (in $XDG_STATE_HOME/{app}/log "
            f"when set; on macOS in ~/Library/Logs/{app}).",
        ),
        ("AGENTS.md", "Instructions for the model, at the workspace's root."),
    )
    out = []
    for name, text in entries:
        out += [".TP", rf"\fI{escape(name)}\fR", _line(text)]
    return out


def _pairs(entries: tuple[tuple[str, str], ...], style: str = "B") -> list[str]:
    out = []
    for name, text in entries:
        out += [".TP", rf"\f{style}{escape(name)}\fR", _line(text)]
    return out


def render(tree: Command, version: str) -> str:
    commands = [c for c in tree.walk() if c.path]
    lines = [
        '.\\" The man page of agent: generated by python scripts/gen_docs.py; do not edit.',
        f'.TH AGENT 1 "" "agent {escape(version)}" "User Commands"',
        ".nh",  # no hyphenation: option names and paths must stay whole
        ".ad l",
        ".SH NAME",
        r"agent \- a terminal coding agent",
        ".SH SYNOPSIS",
        _usage(tree),
        ".br",
        r"\fBagent run\fR [\fIOPTIONS\fR] [\fIPROMPT\fR]",
        ".br",
        r"\fBagent\fR \fICOMMAND\fR [\fIOPTIONS\fR] [\fIARGS\fR]...",
        ".SH DESCRIPTION",
        *_paragraphs(tree.help),
        ".PP",
        _line(
            "In a project folder (the workspace), agent talks to a language model, reads and "
            "changes the folder's files, runs commands, uses MCP servers and skills, and asks "
            "before anything changes unless told otherwise. With no command it opens a "
            "full-screen TUI (or a line REPL with --plain or on a dumb terminal); agent run "
            "answers one request and exits, for scripts and CI."
        ),
        ".SH COMMANDS",
    ]
    for command in commands:
        lines += _command(command)
    lines += [".SH OPTIONS", *(x for o in tree.options for x in _option(o))]
    lines += [".SH FILES", *_files()]
    lines += [".SH ENVIRONMENT", *_pairs(ENVIRONMENT)]
    lines += [".SH EXIT STATUS", *_pairs(EXIT_STATUS)]
    lines += [".SH EXAMPLES"]
    for example, text in EXAMPLES:
        lines += [".TP", rf"\fB{escape(example)}\fR", _line(text)]
    lines += [".SH SEE ALSO", r"\fBgit\fR(1); the README of agent for the config reference."]
    return "\n".join(lines) + "\n"
