"""A configurable MCP server for the tests, written with the official SDK.

    python server.py [--name N] [--pids FILE] [--slow SECONDS] [--child] [--garbage]
                     [--faults] [--shell] [--http PORT] [--sse PORT]

--pids writes the server's pid to FILE first thing (JSON); --slow then sleeps
(a server too slow to start); --child starts a `sleep` in the server's process
group and adds its pid to FILE (to see that a close ends the whole group);
--garbage writes a line that is not JSON-RPC to stdout before serving;
--faults adds tools that break the transport (`garbage`, `freeze`; off by
default so the usual listing stays as it is);
--shell adds `sh`, which runs a command and answers with its output and exit
code (to see what a sandboxed server can reach);
--http serves Streamable HTTP on 127.0.0.1:PORT instead of stdio; --sse, the legacy
HTTP+SSE transport (`/sse`, `/messages/`).

--starts FILE adds a line to FILE each time the server starts (to count restarts);
--meta FILE adds tools `noted_read` (readOnlyHint), `noted_write` and `noted_once`
(which ends the process the first time it is called) that record each call's
`_meta` as a JSON line in FILE.

--client adds tools that use what a client answers: `roots` (the client's roots),
`ask` (a form: name, age, colour, subscribe, with defaults; says what came back),
`ask_many` (the same for a form of several choices, `PIZZA`),
`steps` (reports progress three times), `picture` (a real PNG), `weather`
(structured content), `grow` (adds a tool `grown` and says the tools changed);
resources `note://hello`, `pic://red` (a PNG), `blob://data` (1 KiB of binary data),
`note://long` (5000 lines) and the template `greeting://{name}`;
the prompts `review(file, focus="bugs")`, `pair(topic)` (three messages, one the
assistant's) and `look` (a text, an image, an embedded resource); `grow_prompt` adds a
prompt `later` and says the prompts changed, `grow_resource` a resource `note://later`
and says the resources changed. With
--naps, `nap` also writes "cancelled" to FILE when the client cancels it. With --client
the server speaks the 2025 protocol (see add_client_tools).

--prompt-pages N answers `prompts/list` N prompts a page (its cursor the offset), and with
`--prompt-pages forever` one prompt a page with a next cursor always (a server that pages
forever).

--wait-for FILE holds the start (after --pids, --slow) until FILE exists, so a
test decides when a server may go on starting; --naps FILE has `nap` add a line
to FILE as each nap begins (to see that a call is under way).
"""

# No `from __future__ import annotations`: the SDK reads the tools' hints, which name
# classes imported inside build().
import argparse
import base64
import json
import os
import signal
import subprocess
import sys
import time

# `ask_many`'s form (MCP 2025-11-25): several choices untitled (an `enum` of items, 1 to 2
# of them) and titled (`anyOf`), one titled choice (`oneOf`), defaults for two.
PIZZA = {
    "type": "object",
    "properties": {
        "toppings": {
            "type": "array",
            "title": "Toppings",
            "items": {"type": "string", "enum": ["cheese", "ham", "olives"]},
            "minItems": 1,
            "maxItems": 2,
            "default": ["cheese"],
        },
        "size": {
            "type": "string",
            "title": "Size",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            "default": "l",
        },
        "sides": {
            "type": "array",
            "title": "Sides",
            "items": {
                "anyOf": [
                    {"const": "fries", "title": "French fries"},
                    {"const": "salad", "title": "Green salad"},
                ]
            },
        },
    },
    "required": ["toppings"],
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="test")
    parser.add_argument("--pids", default="")
    parser.add_argument("--slow", type=float, default=0.0)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--garbage", action="store_true")
    parser.add_argument("--faults", action="store_true")
    parser.add_argument("--shell", action="store_true")
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--sse", type=int, default=0)
    parser.add_argument("--wait-for", default="")
    parser.add_argument("--naps", default="")
    parser.add_argument("--starts", default="")
    parser.add_argument("--meta", default="")
    parser.add_argument("--client", action="store_true")
    parser.add_argument("--prompt-pages", default="")
    options = parser.parse_args()
    if options.starts:
        with open(options.starts, "a") as out:
            out.write(f"{os.getpid()}\n")
    pids = {"server": os.getpid()}
    if options.pids:
        write(options.pids, pids)
    if options.slow:
        time.sleep(options.slow)
    while options.wait_for and not os.path.exists(options.wait_for):
        time.sleep(0.01)
    if options.child:
        child = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL)
        write(options.pids, {**pids, "child": child.pid})
    if options.garbage:
        os.write(1, GARBAGE)
    server = build(options.name, options.naps)
    if options.faults:
        # The SDK points fd 1 at stderr while it serves (prints cannot break the protocol);
        # a copy of the pipe taken now lets `garbage` write to the wire all the same.
        add_fault_tools(server, os.dup(1))
    if options.meta:
        add_meta_tools(server, options.meta)
    if options.client:
        add_client_tools(server)
    if options.prompt_pages:
        page_prompts(server, options.prompt_pages)
    if options.shell:

        @server.tool()
        def sh(command: str) -> str:
            done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True)
            return f"{done.stdout}{done.stderr}[exit {done.returncode}]"

    if options.http:
        server.run("streamable-http", host="127.0.0.1", port=options.http)
    elif options.sse:
        server.run("sse", host="127.0.0.1", port=options.sse)
    else:
        server.run()


GARBAGE = b"this is not JSON-RPC \xff\xfe {{{\n"


def _png(width: int, height: int) -> bytes:
    """A real red PNG (tests/support/images.py makes the same; this file runs on its own)."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = (b"\x00" + bytes((200, 30, 30)) * width) * height
    signature = b"\x89PNG\r\n\x1a\n"
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return signature + body


PNG_4X3 = _png(4, 3)


def write(path: str, pids: dict) -> None:
    with open(path + ".tmp", "w") as out:
        json.dump(pids, out)
    os.replace(path + ".tmp", path)


def build(name: str, naps: str = ""):
    import anyio
    from mcp.server.mcpserver import Context, MCPServer
    from mcp_types import (
        AudioContent,
        BlobResourceContents,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        TextResourceContents,
        ToolAnnotations,
    )

    server = MCPServer(name, log_level="WARNING")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        """Say the text back.

        A second line the listing does not show."""
        return text

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two whole numbers."""
        return str(a + b)

    @server.tool()
    def fail(message: str) -> str:
        """Always fails with the message."""
        raise ValueError(message)

    @server.tool()
    async def nap(seconds: float) -> str:
        """Sleep, then say so."""
        if naps:
            with open(naps, "a") as out:
                out.write(f"{seconds}\n")
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            if naps:
                with open(naps, "a") as out:
                    out.write("cancelled\n")
            raise
        return f"slept {seconds}"

    @server.tool()
    def crash() -> str:
        """End the server's process in the middle of the call."""
        sys.stderr.write("crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool()
    def whoami() -> str:
        """The server's pid, folder and a few environment variables."""
        names = ("AGENT_TEST_VISIBLE", "AGENT_TEST_API_KEY", "FROM_ENTRY")
        return json.dumps(
            {"pid": os.getpid(), "cwd": os.getcwd(), "env": {n: os.environ.get(n) for n in names}}
        )

    @server.tool()
    def media() -> list:
        """One part of each content type."""
        data = base64.b64encode(b"\x89PNG" + bytes(2044)).decode()
        return [
            TextContent(type="text", text="here you are"),
            ImageContent(type="image", data=data, mime_type="image/png"),
            AudioContent(type="audio", data=data, mime_type="audio/wav"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri="file:///notes.txt", mime_type="text/plain", text="note text"
                ),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="file:///blob.bin", mime_type="application/octet-stream", blob=data
                ),
            ),
            ResourceLink(
                type="resource_link",
                name="report",
                uri="file:///report.pdf",
                mime_type="application/pdf",
                description="the full report",
            ),
        ]

    @server.tool()
    def header(name: str, ctx: Context) -> str:
        """A header of the HTTP request that carried this call."""
        return (ctx.headers or {}).get(name, "")

    @server.tool(name="do.thing/x")
    def odd_name() -> str:
        """A tool whose name needs cleaning."""
        return "done"

    return server


def add_fault_tools(server, wire: int) -> None:
    """Tools that break the transport itself, for the fault tests."""

    @server.tool()
    def garbage(lines: int = 1) -> str:
        """Write lines that are not JSON-RPC to stdout in the middle of the call, then answer."""
        os.write(wire, GARBAGE * lines)
        return "answered after the garbage"

    @server.tool()
    def freeze() -> str:
        """Stop the server's process (SIGSTOP) in the middle of the call: a hung server."""
        os.kill(os.getpid(), signal.SIGSTOP)
        return "thawed"


def add_client_tools(server) -> None:
    """Tools that ask the client: its roots, a form, progress, a changed listing.

    The server then answers as a 2025-era server does (no `server/discover`), as the
    servers people run do: it asks the client through requests of its own.
    """
    import mcp.server.runner

    # Every first request opens a 2025 connection: the client's probe is refused and it
    # falls back to the handshake (the SDK has no switch for a server of the older era).
    mcp.server.runner._has_modern_envelope = lambda params: False
    from typing import Literal

    from mcp.server.mcpserver import Context
    from pydantic import BaseModel, Field

    @server.tool()
    async def roots(ctx: Context) -> str:
        """The client's roots, one URI a line."""
        listed = await ctx.request_context.session.list_roots()
        return "\n".join(str(root.uri) for root in listed.roots) or "(no roots)"

    class Person(BaseModel):
        name: str = Field(description="Your name")
        age: int = Field(default=30, description="Your age")
        colour: Literal["red", "green", "blue"] = Field(default="green", title="Colour")
        subscribe: bool = Field(default=True)

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Ask the person who they are."""
        answer = await ctx.elicit("Who are you?", Person)
        if answer.action != "accept":
            return answer.action
        return "accept " + json.dumps(answer.data.model_dump(), sort_keys=True)

    @server.tool()
    async def ask_many(ctx: Context) -> str:
        """Ask for a pizza: the spec's multi-select and titled single-select fields."""
        answer = await ctx.request_context.session.elicit_form(
            message="Which pizza?", requested_schema=PIZZA
        )
        if answer.action != "accept":
            return answer.action
        return "accept " + json.dumps(answer.content, sort_keys=True)

    @server.tool()
    async def steps(ctx: Context) -> str:
        """Report progress three times, then answer."""
        for done in (1, 2, 3):
            await ctx.report_progress(done, 3, f"step {done}")
        return "stepped"

    @server.resource("note://hello", name="hello", description="A note.", mime_type="text/plain")
    def hello_note() -> str:
        return "hello from a resource"

    @server.resource("pic://red", name="red", mime_type="image/png")
    def red_picture() -> bytes:
        return PNG_4X3

    @server.resource("blob://data", name="data", mime_type="application/octet-stream")
    def binary_data() -> bytes:
        return bytes(range(256)) * 4

    @server.resource("note://long", name="long", mime_type="text/plain")
    def long_note() -> str:
        return "".join(f"line {n} of a long note\n" for n in range(5000))

    @server.resource("greeting://{name}", name="greeting", description="Greets by name.")
    def greeting(name: str) -> str:
        return f"Hello, {name}!"

    @server.prompt(name="review", description="Review a file.")
    def review(file: str, focus: str = "bugs") -> str:
        return f"Review {file}, looking for {focus}."

    @server.prompt(name="pair", description="A conversation in three messages.")
    def pair(topic: str) -> list:
        from mcp.server.mcpserver.prompts.base import AssistantMessage, UserMessage

        return [
            UserMessage(f"Explain {topic}."),
            AssistantMessage("Which part of it?"),
            UserMessage("All of it, briefly."),
        ]

    @server.prompt(name="look", description="A picture and a note to look at.")
    def look() -> list:
        from mcp.server.mcpserver.prompts.base import UserMessage
        from mcp_types import EmbeddedResource, ImageContent, TextResourceContents

        picture = base64.b64encode(PNG_4X3).decode()
        note = TextResourceContents(uri="note://hello", text="a red square", mime_type="text/plain")
        return [
            UserMessage("What is in this picture?"),
            UserMessage(ImageContent(type="image", data=picture, mime_type="image/png")),
            UserMessage(EmbeddedResource(type="resource", resource=note)),
        ]

    @server.tool()
    async def grow_prompt(ctx: Context) -> str:
        """Add a prompt `later` and tell the client its prompts changed."""
        from mcp.server.mcpserver.prompts.base import Prompt

        def later() -> str:
            return "A prompt added later."

        server.add_prompt(Prompt.from_function(later, name="later", description="Added later."))
        await ctx.request_context.session.send_prompt_list_changed()
        return "grew a prompt"

    @server.tool()
    async def grow_resource(ctx: Context) -> str:
        """Add a resource `note://later` and tell the client its resources changed."""
        from mcp.server.mcpserver.resources import TextResource

        later = TextResource(uri="note://later", name="later", text="a note added later")
        server.add_resource(later)
        await ctx.request_context.session.send_resource_list_changed()
        return "grew a resource"

    @server.tool()
    def picture() -> list:
        """A real 4×3 PNG and a line of text."""
        from mcp_types import ImageContent, TextContent

        data = base64.b64encode(PNG_4X3).decode()
        return [
            TextContent(type="text", text="a red picture"),
            ImageContent(type="image", data=data, mime_type="image/png"),
        ]

    class Weather(BaseModel):
        city: str
        degrees: int

    @server.tool()
    def weather(city: str) -> Weather:
        """Structured content (the SDK also sends it as JSON text)."""
        return Weather(city=city, degrees=21)

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add a tool `grown` and tell the client its tools changed."""

        def grown() -> str:
            return "grown here"

        server.add_tool(grown, name="grown", description="A tool added by grow.")
        await ctx.request_context.session.send_tool_list_changed()
        return "grew"


def page_prompts(server, size: str) -> None:
    """`prompts/list` answered a few prompts a page (or one a page, forever)."""
    from mcp_types import ListPromptsResult, PaginatedRequestParams

    forever = size == "forever"
    count = 1 if forever else int(size)

    async def listed(_ctx, params: PaginatedRequestParams) -> ListPromptsResult:
        every = await server.list_prompts()
        start = int(params.cursor or 0)
        end = start + count
        if forever:
            return ListPromptsResult(prompts=every[:1], next_cursor=str(end))
        more = str(end) if end < len(every) else None
        return ListPromptsResult(prompts=every[start:end], next_cursor=more)

    server._lowlevel_server.add_request_handler("prompts/list", PaginatedRequestParams, listed)


def add_meta_tools(server, record: str) -> None:
    """Tools that write down the `_meta` of each call they get (one JSON line each)."""
    from mcp.server.mcpserver import Context
    from mcp_types import ToolAnnotations

    def note(tool: str, ctx: Context) -> None:
        meta = ctx.request_context.meta or {}
        with open(record, "a") as out:
            out.write(json.dumps({"tool": tool, "meta": dict(meta)}) + "\n")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def noted_read(text: str, ctx: Context) -> str:
        """Read something (says it is read-only)."""
        note("noted_read", ctx)
        return text

    @server.tool()
    def noted_write(text: str, ctx: Context) -> str:
        """Change something."""
        note("noted_write", ctx)
        return text

    @server.tool()
    def noted_once(text: str, ctx: Context) -> str:
        """Change something; the first delivery ends the server before it answers."""
        note("noted_once", ctx)
        marker = record + ".once"
        if not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(3)
        return text


if __name__ == "__main__":
    main()
