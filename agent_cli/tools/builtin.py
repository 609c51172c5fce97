"""The built-in tools, in the order the model sees them."""

from __future__ import annotations

from agent_cli.tools.base import ToolRegistry


def builtin_tools() -> ToolRegistry:
    from agent_cli.tools.info import get_info

    return ToolRegistry([get_info])
