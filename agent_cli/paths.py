"""Where the agent keeps its files, in one place (platformdirs locations).

Tests and scripts move every location at once with the XDG variables
(`XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `XDG_STATE_HOME`, `XDG_CACHE_HOME`), which
platformdirs honours.
"""

from __future__ import annotations

from pathlib import Path

APP_NAME = "agent"


def config_dir() -> Path:
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME))


def data_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME))


def cache_dir() -> Path:
    """What can be lost at any time: it only makes things faster."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir(APP_NAME))


def log_dir() -> Path:
    from platformdirs import user_log_dir

    return Path(user_log_dir(APP_NAME))


def user_config_file() -> Path:
    return config_dir() / "config.toml"


def project_config_file(workspace: Path) -> Path:
    return workspace / ".agent" / "config.toml"


def conversations_dir() -> Path:
    return data_dir() / "conversations"


def credentials_file() -> Path:
    return data_dir() / "credentials.json"


def tasks_file() -> Path:
    return data_dir() / "tasks.json"
