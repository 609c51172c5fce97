"""The built-in tools, in the order the model sees them (llama.cpp's names, SPEC §7)."""

from __future__ import annotations

from agent_cli.tools.base import ToolRegistry


def builtin_tools() -> ToolRegistry:
    from agent_cli.tools.background import shell_kill, shell_output
    from agent_cli.tools.files import edit_file, read_file, write_file
    from agent_cli.tools.info import get_info
    from agent_cli.tools.plan_tool import update_plan
    from agent_cli.tools.search import file_glob_search, grep_search
    from agent_cli.tools.shell import exec_shell_command

    return ToolRegistry(
        [
            read_file,
            file_glob_search,
            grep_search,
            get_info,
            update_plan,
            write_file,
            edit_file,
            exec_shell_command,
            shell_output,
            shell_kill,
        ]
    )
