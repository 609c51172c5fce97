"""MCP content through the real CLI and the fake model server: what the model is sent."""

from __future__ import annotations

import base64
import sys

from agent_cli import mcp_config
from tests.support.cli import agent, err
from tests.support.fake_openai import text, tool_calls
from tests.support.mcp_servers import SERVER
from tests.support.mcp_servers.server import PNG_4X3


def add_client_server(name: str) -> None:
    entry = {"command": sys.executable, "args": [str(SERVER), "--name", name, "--client"]}
    mcp_config.add_server(name, entry)


def test_an_mcp_tools_image_reaches_the_model_as_an_image_part(fake, workspace):
    add_client_server("pics")
    fake.add(tool_calls(("c1", "pics_picture", "{}")), text("A red picture."))
    result = agent(workspace, "run", "show me", "--mode", "full", fake=fake)
    assert result.returncode == 0, err(result)
    messages = fake.requests[1]["messages"]
    answer = next(m for m in messages if m["role"] == "tool")
    assert answer["content"].splitlines() == [
        "a red picture",
        "[image: image/png 4×3, shown beside this]",
    ]
    uri = "data:image/png;base64," + base64.b64encode(PNG_4X3).decode()
    assert messages[-1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "The images the call c1 returned:"},
            {"type": "image_url", "image_url": {"url": uri}},
        ],
    }
