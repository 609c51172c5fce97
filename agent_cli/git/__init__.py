"""Git for the agent: checkpoints for undo (SPEC §8) and the branch on the status line.

Checkpoints live in a *shadow* repository under the user data dir, one per
workspace, never in the project (`shadow`); a checkpoint is a commit of the
whole workspace there, and undo restores the newest one (`checkpoints`). The
project's own repository is only read, for the status line and /diff
(`status`). Every git call goes through `run`, which starts git with an
environment built from scratch and imports GitPython lazily: importing it
costs about 100 ms and `agent --help` must never pay for it.

Import from here, not from the modules: this is the package's API.
"""

from __future__ import annotations

from agent_cli.errors import CheckpointError, NothingToUndo
from agent_cli.git.checkpoints import (
    CHECKPOINT_MAX_FILE_BYTES,
    CHECKPOINT_MAX_NEW_BYTES,
    CHECKPOINT_MAX_NEW_FILES,
    NOTICE_NAMES,
    Checkpoints,
    Restored,
    short_label,
)
from agent_cli.git.run import checkpoints_available
from agent_cli.git.shadow import IGNORED_FOLDERS
from agent_cli.git.status import BRANCH_STATUS_TIMEOUT, DIFF_TIMEOUT, branch_status, workspace_diff

__all__ = [
    "BRANCH_STATUS_TIMEOUT",
    "CHECKPOINT_MAX_FILE_BYTES",
    "CHECKPOINT_MAX_NEW_BYTES",
    "CHECKPOINT_MAX_NEW_FILES",
    "DIFF_TIMEOUT",
    "IGNORED_FOLDERS",
    "NOTICE_NAMES",
    "CheckpointError",
    "Checkpoints",
    "NothingToUndo",
    "Restored",
    "branch_status",
    "checkpoints_available",
    "short_label",
    "workspace_diff",
]
