"""The credentials file: 0600 from its first byte, atomic, never quoted in errors (SPEC §2, §13)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agent_cli import credentials, paths
from agent_cli.errors import ConfigError

KEY = "sk-test-CREDENTIALS-0123456789"


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_file_is_0600_and_its_folder_0700_from_creation():
    file = paths.credentials_file()
    assert not file.exists()
    written = credentials.set_key("work", KEY)
    assert written == file
    assert mode(file) == 0o600
    assert mode(file.parent) == 0o700
    assert credentials.get_key("work") == KEY and credentials.has_key("work")


def test_a_permissive_umask_does_not_widen_the_file():
    old = os.umask(0)
    try:
        credentials.set_key("work", KEY)
    finally:
        os.umask(old)
    assert mode(paths.credentials_file()) == 0o600


def test_the_key_is_only_ever_written_into_a_0600_file(monkeypatch):
    """Every file opened for writing in the folder is 0600 before a byte is written."""
    seen: list[tuple[str, int]] = []
    real_write = os.write
    real_open = os.open
    opened: dict[int, str] = {}

    def spy_open(path, flags, mode=0o777, *args, **kwargs):
        descriptor = real_open(path, flags, mode, *args, **kwargs)
        if flags & os.O_CREAT:
            opened[descriptor] = str(path)
            seen.append((str(path), stat.S_IMODE(os.fstat(descriptor).st_mode)))
        return descriptor

    def spy_write(descriptor, data):
        if descriptor in opened:
            seen.append((opened[descriptor], stat.S_IMODE(os.fstat(descriptor).st_mode)))
        return real_write(descriptor, data)

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "write", spy_write)
    credentials.set_key("work", KEY)
    credentials.set_key("other", KEY + "2")
    assert seen and all(file_mode == 0o600 for _, file_mode in seen)
    leftovers = [p.name for p in paths.credentials_file().parent.iterdir()]
    assert leftovers == ["credentials.json"]  # no temporary file left behind


def test_keys_are_kept_replaced_and_removed():
    credentials.set_key("a", "key-a")
    credentials.set_key("b", "key-b")
    credentials.set_key("a", "key-a2")
    assert credentials.read_keys() == {"a": "key-a2", "b": "key-b"}
    assert credentials.remove_key("a") is True
    assert credentials.remove_key("a") is False
    assert credentials.read_keys() == {"b": "key-b"}
    assert mode(paths.credentials_file()) == 0o600


def test_a_damaged_file_is_named_but_never_quoted():
    file = paths.credentials_file()
    file.parent.mkdir(parents=True)
    file.write_text('{"keys": {"a": "' + KEY + '"')  # cut short
    with pytest.raises(ConfigError) as info:
        credentials.read_keys()
    assert str(file) in str(info.value) and KEY not in str(info.value)


def test_a_key_with_control_characters_is_refused_without_showing_it():
    with pytest.raises(ConfigError) as info:
        credentials.set_key("a", KEY + "\n\x1b[2J")
    assert KEY not in str(info.value)
    assert not paths.credentials_file().exists()
