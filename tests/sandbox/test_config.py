"""`[sandbox]` in the config files, `--sandbox`, and `agent sandbox` (SPEC §14)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agent_cli import paths
from agent_cli.errors import ConfigError
from agent_cli.settings import Flags, load_settings
from agent_cli.wiring import sandbox_of


def write(path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_default_is_auto_with_no_network():
    settings = load_settings(paths.cache_dir(), environ={})
    assert settings.sandbox.mode == "auto" and settings.sandbox.network is False


def test_the_users_file_sets_it(tmp_path):
    write(
        paths.user_config_file(),
        '[sandbox]\nmode = "landlock"\nwritable = ["~/.npm"]\ndeny_read = ["~/x"]\n'
        "network = true\n",
    )
    s = load_settings(tmp_path, environ={}).sandbox
    assert (s.mode, s.writable, s.deny_read, s.network) == ("landlock", ("~/.npm",), ("~/x",), True)


def test_a_project_file_may_only_tighten_it(tmp_path):
    write(paths.user_config_file(), "[sandbox]\nnetwork = true\n")
    write(
        paths.project_config_file(tmp_path),
        '[sandbox]\nmode = "off"\nwritable = ["/"]\nnetwork = false\ndeny_read = ["data"]\n',
    )
    settings = load_settings(tmp_path, environ={})
    s = settings.sandbox
    assert s.mode == "auto" and s.writable == () and s.network is False
    assert s.deny_read == ("data",)
    assert sum("ignored in a project file" in w for w in settings.warnings) == 2


def test_a_project_file_cannot_open_the_network(tmp_path):
    write(paths.project_config_file(tmp_path), "[sandbox]\nnetwork = true\n")
    settings = load_settings(tmp_path, environ={})
    assert settings.sandbox.network is False
    assert any("sandbox.network" in w for w in settings.warnings)


def test_bad_values_name_the_line(tmp_path):
    write(paths.user_config_file(), '[sandbox]\nmode = "docker"\n')
    with pytest.raises(ConfigError, match=r"line 2: 'sandbox\.mode' is 'docker'"):
        load_settings(tmp_path, environ={})
    write(paths.user_config_file(), '[sandbox]\nwritable = "/x"\n')
    with pytest.raises(ConfigError, match=r"'sandbox\.writable' must be a list"):
        load_settings(tmp_path, environ={})
    write(paths.user_config_file(), "[sandbox]\nnetwrok = true\n")
    with pytest.raises(ConfigError, match=r"'sandbox\.netwrok' is not a sandbox setting"):
        load_settings(tmp_path, environ={})


def test_the_flag_turns_it_off_and_says_who_did(tmp_path):
    settings = load_settings(tmp_path, Flags(sandbox="off"), environ={})
    sandbox = sandbox_of(settings)
    assert not sandbox.active and "--sandbox off" in sandbox.mechanism.reason


def test_agent_sandbox_prints_what_is_in_force_and_proves_it(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "agent_cli", "sandbox", "--sandbox", "landlock"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("sandbox: landlock ABI ")
    assert "network: off" in done.stdout
    assert "ok   a write outside the workspace is refused" in done.stdout
    assert "ok   a connect to a loopback port is refused" in done.stdout


def test_agent_sandbox_off_says_so(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "agent_cli", "sandbox", "--sandbox", "off"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0
    assert done.stdout.startswith("sandbox: none — turned off by --sandbox off")
