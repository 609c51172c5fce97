"""get_info: `{os, cwd}` as llama.cpp answers it (SPEC §7)."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

from agent_cli.tools.base import ToolContext
from agent_cli.tools.info import get_info
from agent_cli.tools.workspace import Workspace


async def test_get_info_names_the_system_and_the_real_workspace(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "alias")
    result = await get_info.run(ToolContext(Workspace(tmp_path / "alias")), {})
    assert not result.is_error
    info = json.loads(result.text)
    assert set(info) == {"os", "cwd"}
    assert info["cwd"] == str((tmp_path / "real").resolve())
    assert info["os"].startswith(platform.system())
    assert get_info.parameters == {"type": "object", "properties": {}}
