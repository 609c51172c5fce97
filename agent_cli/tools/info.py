"""get_info: where the agent is working and on what system."""

from __future__ import annotations

import json
import platform

from agent_cli.tools.base import Effect, ToolContext, ToolResult, tool


@tool("get_info", Effect.READ, title=lambda _args: "Get workspace info")
async def get_info(ctx: ToolContext) -> ToolResult:
    """Get the operating system and the current working directory (the workspace)."""
    info = {"os": f"{platform.system()} {platform.release()}", "cwd": str(ctx.workspace.root)}
    return ToolResult(json.dumps(info))
