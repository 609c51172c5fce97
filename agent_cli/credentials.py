"""The credentials file: API keys by provider name, readable by the person alone (SPEC §2, §13).

`platformdirs.user_data_dir("agent")/credentials.json` holds
`{"version": 1, "keys": {NAME: KEY}}`. A key is written once, by
`agent providers add`, and read by `settings` only (nothing else reads it).

Why the care in writing: a key must never sit, even for an instant, in a file
that others may read. Every write goes to a fresh temporary file created with
`O_CREAT | O_EXCL` and mode 0600 (and `fchmod`-ed to 0600 in case the umask
is odd) in the same folder, is flushed, and then atomically replaces the
file; the folder is made 0700. So the file is 0600 from its first byte, a
crash leaves either the old or the new file (never half of one), and no
other program sees a wider mode at any moment.

Why the care in reading: an error message about this file never quotes its
content (a JSON error could echo part of a key); it names the file only.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from agent_cli import paths
from agent_cli.errors import ConfigError

FILE_MODE = 0o600
FOLDER_MODE = 0o700
VERSION = 1

__all__ = ["FILE_MODE", "FOLDER_MODE", "get_key", "has_key", "read_keys", "remove_key", "set_key"]


def read_keys(path: Path | None = None) -> dict[str, str]:
    """Every stored key by provider name; {} when there is no file yet."""
    file = path or paths.credentials_file()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(
            f"The credentials file {file} could not be read ({type(e).__name__}) — check its "
            "permissions, or remove it and add the keys again with agent providers add."
        ) from None
    try:
        data = json.loads(text)
    except ValueError:
        data = None  # the decoder's message may quote the file: never repeat it
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(keys, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in keys.items()
    ):
        raise ConfigError(
            f"The credentials file {file} is damaged — remove it and add the keys again with "
            "agent providers add."
        )
    return dict(keys)


def get_key(name: str, path: Path | None = None) -> str | None:
    """The stored key of provider `name`, if any."""
    return read_keys(path).get(name) or None


def has_key(name: str, path: Path | None = None) -> bool:
    return get_key(name, path) is not None


def set_key(name: str, key: str, path: Path | None = None) -> Path:
    """Store (or replace) the key of provider `name`; the other keys are kept."""
    _check_key(name, key)
    file = path or paths.credentials_file()
    keys = read_keys(file)
    keys[name] = key
    _write(file, keys)
    return file


def remove_key(name: str, path: Path | None = None) -> bool:
    """Forget the key of provider `name`; False when there was none."""
    file = path or paths.credentials_file()
    keys = read_keys(file)
    if name not in keys:
        return False
    del keys[name]
    _write(file, keys)
    return True


def _check_key(name: str, key: str) -> None:
    """A key an HTTP header can carry. The message never shows the key itself."""
    if not key:
        raise ConfigError(f"The key for provider {name!r} is empty — give the key.")
    if not key.isprintable() or key != key.strip():
        raise ConfigError(
            f"The key for provider {name!r} contains spaces or control characters — paste "
            "the key alone."
        )


def _write(file: Path, keys: Mapping[str, str]) -> None:
    """Replace `file` atomically with a file that is 0600 before any key is in it."""
    folder = file.parent
    folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    os.chmod(folder, FOLDER_MODE)
    body = json.dumps({"version": VERSION, "keys": dict(keys)}, indent=2) + "\n"
    temporary = folder / f".{file.name}.{secrets.token_hex(8)}.tmp"
    descriptor = os.open(
        temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE
    )
    try:
        os.fchmod(descriptor, FILE_MODE)  # the umask only narrows; make it exactly 0600
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            descriptor = -1  # the file object owns it now
            handle.write(body)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, file)
    except BaseException:
        if descriptor >= 0:
            os.close(descriptor)
        temporary.unlink(missing_ok=True)
        raise
    _fsync_folder(folder)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (best effort: not every system allows it)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
