"""A real ACP agent written with the SDK's agent side, scripted, for the tests.

Run as `python acp_agent.py SCRIPT.json`. The script (a JSON object) says:

- `load_session` (bool): advertise `session/load`; `load_fails`: answer it with an error;
  `replay`: steps sent (as history) while a session loads; `images` (bool): take images;
- `record`: a file where every request it gets and every answer it hears is appended
  as one JSON line (`records()` reads it back);
- `turns`: `[{"when": TEXT, "steps": [...], "stop": "end_turn", "usage": {...}}]`; a
  prompt runs the first turn whose `when` is in its last paragraph (the user's own
  message: a hand-off transcript comes before it), or one without `when`.

Steps are objects with an `op`: text, thought, user, tool, update, permission, read,
write, plan, commands, sleep, spawn (`argv`: a child in its group), wait_cancel
(`ignore`: keep going as if not told), crash (`code`, `stderr`), edit_directly (change
a file itself, as pi does), stderr, burst (`count` chunks of `text`), garbage (a `line`
that is not JSON-RPC written to stdout, the protocol's channel; by default not even
UTF-8). See `Fixture._step` for each one's fields.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_cli.backends.catalog import AgentSpec

FIXTURE = Path(__file__).resolve()
GARBAGE = b"this is not JSON-RPC \xff\xfe {{{"
DEFAULT_OPTIONS = [
    ("allow-once", "Allow once", "allow_once"),
    ("allow-always", "Always allow", "allow_always"),
    ("reject-once", "Reject", "reject_once"),
    ("reject-always", "Always reject", "reject_always"),
]


# -- used by the tests -----------------------------------------------------------------


def fixture_spec(
    script: dict[str, Any], folder: Path, *, gated: bool = True, name: str = "Fixture"
) -> AgentSpec:
    """A catalog entry that starts this agent with `script` (written under `folder`)."""
    from agent_cli.backends.catalog import AgentSpec

    folder.mkdir(parents=True, exist_ok=True)
    script = {"record": str(folder / "record.jsonl"), **script}
    path = folder / "script.json"
    path.write_text(json.dumps(script))
    return AgentSpec(
        id="fixture",
        name=name,
        command=sys.executable,
        args=(str(FIXTURE), str(path)),
        install="it is the tests' own fixture",
        gated=gated,
    )


def add_to_user_config(script: dict[str, Any], folder: Path) -> None:
    """This agent, running `script` (written under `folder`), as `[agents.fixture]` in the
    user's config file: how a person adds an agent, for tests of the real CLI."""
    from agent_cli import paths

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "script.json"
    path.write_text(json.dumps({"record": str(folder / "record.jsonl"), **script}))
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        "[agents.fixture]\n"
        'name = "Fixture"\n'
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(FIXTURE))}, {json.dumps(str(path))}]\n"
    )


def records(folder: Path, event: str | None = None) -> list[dict[str, Any]]:
    """What the agent recorded (optionally only one kind of event), in order."""
    path = folder / "record.jsonl"
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in lines if event is None or r["event"] == event]


# -- the agent ---------------------------------------------------------------------------


class Fixture:
    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.conn: Any = None
        self.cancels: dict[str, asyncio.Event] = {}
        self.sessions = 0
        self.children: list[Any] = []
        self.untimed = True

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    def record(self, event: str, **values: Any) -> None:
        path = self.script.get("record")
        if path:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"event": event, "pid": os.getpid(), **values}) + "\n")

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, **_: Any):
        from acp import PROTOCOL_VERSION, InitializeResponse
        from acp.schema import AgentCapabilities, PromptCapabilities

        fs = client_capabilities.fs if client_capabilities else None
        self.record(
            "initialize",
            read=bool(fs and fs.read_text_file),
            write=bool(fs and fs.write_text_file),
            terminal=bool(client_capabilities and client_capabilities.terminal),
        )
        loads = bool(self.script.get("load_session"))
        prompts = PromptCapabilities(image=bool(self.script.get("images")))
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=loads, prompt_capabilities=prompts),
        )

    async def new_session(self, cwd: str, **_: Any):
        from acp import NewSessionResponse

        self.sessions += 1
        session = f"s-{os.getpid()}-{self.sessions}"
        self.record("new_session", session=session, cwd=cwd)
        return NewSessionResponse(session_id=session)

    async def load_session(self, cwd: str, session_id: str, **_: Any):
        from acp import LoadSessionResponse, RequestError

        self.record("load_session", session=session_id, cwd=cwd)
        if self.script.get("load_fails"):
            raise RequestError(-32002, "Resource not found", {"details": "no such session"})
        for step in self.script.get("replay", []):
            await self._step(session_id, step, asyncio.Event(), time.perf_counter())
        return LoadSessionResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any):
        from acp import PromptResponse
        from acp.schema import Usage

        received = time.perf_counter()
        text = "".join(getattr(block, "text", "") for block in prompt)
        images = [
            {"mime": block.mime_type, "data": block.data}
            for block in prompt
            if getattr(block, "type", "") == "image"
        ]
        self.record("prompt", session=session_id, text=text, images=images)
        turn = self._turn(text)
        self.untimed = True
        cancel = self.cancels[session_id] = asyncio.Event()
        for step in turn.get("steps", [{"op": "text", "text": "ok"}]):
            if await self._step(session_id, step, cancel, received) == "cancelled":
                return PromptResponse(stop_reason="cancelled")
        usage = turn.get("usage")
        if usage:
            tokens = Usage(
                total_tokens=usage["input"] + usage["output"],
                input_tokens=usage["input"],
                output_tokens=usage["output"],
                cached_read_tokens=usage.get("cached"),
            )
            return PromptResponse(stop_reason=turn.get("stop", "end_turn"), usage=tokens)
        return PromptResponse(stop_reason=turn.get("stop", "end_turn"))

    async def cancel(self, session_id: str, **_: Any) -> None:
        self.record("cancel", session=session_id)
        event = self.cancels.get(session_id)
        if event is not None:
            event.set()

    async def authenticate(self, method_id: str, **_: Any) -> None:
        return None

    def _turn(self, text: str) -> dict[str, Any]:
        message = text.rsplit("\n\n", 1)[-1]
        for turn in self.script.get("turns", []):
            if "when" not in turn or turn["when"] in message:
                return turn
        return {}

    async def _step(
        self, session: str, step: dict[str, Any], cancel: asyncio.Event, received: float
    ) -> str | None:
        import acp
        from acp.helpers import update_available_commands
        from acp.schema import AvailableCommand, PermissionOption, ToolCallUpdate

        op, conn = step["op"], self.conn
        if op in ("text", "thought"):
            if op == "text" and self.untimed:
                self.untimed = False  # the agent's own time from the prompt to its first chunk
                self.record("first_chunk", seconds=time.perf_counter() - received)
            make = acp.update_agent_message_text if op == "text" else acp.update_agent_thought_text
            await conn.session_update(session_id=session, update=make(step["text"]))
        elif op == "burst":
            for _ in range(step["count"]):
                update = acp.update_agent_message_text(step["text"])
                await conn.session_update(session_id=session, update=update)
        elif op == "user":
            update = acp.update_user_message_text(step["text"])
            await conn.session_update(session_id=session, update=update)
        elif op in ("tool", "update"):
            fields = _tool_fields(step)
            if op == "tool":
                update = acp.start_tool_call(step["id"], step.get("title", "a tool"), **fields)
            else:
                update = acp.update_tool_call(step["id"], title=step.get("title"), **fields)
            await conn.session_update(session_id=session, update=update)
        elif op == "permission":
            call = ToolCallUpdate(
                tool_call_id=step["id"], title=step.get("title"), **_tool_fields(step)
            )
            options = [
                PermissionOption(option_id=o, name=n, kind=k)
                for o, n, k in DEFAULT_OPTIONS
                if k in step.get("kinds", [k for _, _, k in DEFAULT_OPTIONS])
            ]
            answer = await conn.request_permission(
                session_id=session, tool_call=call, options=options
            )
            outcome = answer.outcome
            self.record(
                "permission",
                id=step["id"],
                outcome=outcome.outcome,
                option=getattr(outcome, "option_id", None),
            )
        elif op == "read":
            try:
                answer = await conn.read_text_file(
                    session_id=session,
                    path=step["path"],
                    line=step.get("line"),
                    limit=step.get("limit"),
                )
            except acp.RequestError as e:
                self.record("read", path=step["path"], error=str(e), code=e.code)
            else:
                self.record("read", path=step["path"], content=answer.content)
        elif op == "write":
            try:
                await conn.write_text_file(
                    session_id=session, path=step["path"], content=step["content"]
                )
            except acp.RequestError as e:
                self.record("write", path=step["path"], error=str(e), code=e.code)
            else:
                self.record("write", path=step["path"], ok=True)
        elif op == "plan":
            entries = [
                acp.plan_entry(content, status=status) for content, status in step["entries"]
            ]
            await conn.session_update(session_id=session, update=acp.update_plan(entries))
        elif op == "commands":
            commands = [AvailableCommand(name=n, description=d) for n, d in step["commands"]]
            update = update_available_commands(commands)
            await conn.session_update(session_id=session, update=update)
        elif op == "sleep":
            await asyncio.sleep(step["seconds"])
        elif op == "wait_cancel":
            await cancel.wait()
            if step.get("ignore"):
                self.record("ignoring_cancel")
                await asyncio.sleep(3600)
            return "cancelled"
        elif op == "crash":
            sys.stderr.write(step.get("stderr", "") + "\n")
            sys.stderr.flush()
            os._exit(step.get("code", 1))
        elif op == "edit_directly":
            Path(step["path"]).write_text(step["content"])
        elif op == "spawn":  # a child in its process group, as agents start tools and servers
            child = await asyncio.create_subprocess_exec(*step["argv"])
            self.children.append(child)
            self.record("spawned", child=child.pid)
        elif op == "stderr":
            sys.stderr.write(step["text"] + "\n")
            sys.stderr.flush()
        elif op == "garbage":  # straight to the pipe, between two whole messages
            line = step["line"].encode() if "line" in step else GARBAGE
            os.write(sys.stdout.fileno(), line + b"\n")
        return None


def _tool_fields(step: dict[str, Any]) -> dict[str, Any]:
    import acp
    from acp.schema import ToolCallLocation

    fields: dict[str, Any] = {}
    for key in ("kind", "status", "raw_input", "raw_output"):
        if key in step:
            fields[key] = step[key]
    content = []
    if "diff" in step:
        diff = step["diff"]
        content.append(acp.tool_diff_content(diff["path"], diff["new"], diff.get("old")))
    if "result" in step:
        content.append(acp.tool_content(acp.text_block(step["result"])))
    if content:
        fields["content"] = content
    if "locations" in step:
        fields["locations"] = [ToolCallLocation(path=p) for p in step["locations"]]
    return fields


async def main(script_path: str) -> None:
    from acp import run_agent

    script = json.loads(Path(script_path).read_text())
    sys.stderr.write("fixture agent: ready\n")
    sys.stderr.flush()
    await run_agent(Fixture(script))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
