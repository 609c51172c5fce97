"""`agent config show|path|edit` as a person runs it: values, where they come from, no secrets."""

from __future__ import annotations

import json
import re
import stat
import tomllib
from pathlib import Path

from agent_cli import credentials, paths
from agent_cli.commands.config import template
from agent_cli.settings import load_settings
from tests.support.cli import agent, agent_process, err, out

KEY = "sk-CONFIGSHOW-1a2b3c4d5e"
HEADER_SECRET = "hdr-SECRET-9f8e7d6c"
AGENT_SECRET = "agent-SECRET-5a6b7c8d"
STORED = "stored-SECRET-0a1b2c3d"
SET_SECRET = "set-SECRET-9f8e7d6c"


def write_user_config(text: str) -> Path:
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)
    return config


def settings_json(workspace: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    result = agent(workspace, "config", "show", "--json", *args, env=env)
    assert result.returncode == 0, err(result)
    return json.loads(out(result))


def test_defaults_each_say_default(workspace):
    shown = settings_json(workspace)["settings"]
    assert shown["max_rounds"] == {"value": 30, "from": "default"}
    assert (
        shown["mode"]["value"] is None and "read-only in agent run" in shown["mode"]["when_unset"]
    )
    assert shown["provider"]["value"] is None
    text = agent(workspace, "config")  # no subcommand: show
    assert text.returncode == 0, err(text)
    assert re.search(r"max_rounds\s+30\s+default", out(text))


def test_each_value_says_where_it_comes_from(workspace):
    user = write_user_config('model = "from-user"\nmax_rounds = 12\nread_timeout = 30\n')
    project = workspace / ".agent" / "config.toml"
    project.parent.mkdir()
    project.write_text("max_rounds = 7\n")
    shown = settings_json(
        workspace,
        "--mode",
        "full",
        env={"AGENT_MODEL": "from-env", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
    )
    settings = shown["settings"]
    assert settings["model"] == {"value": "from-env", "from": "environment (AGENT_MODEL)"}
    assert settings["max_rounds"] == {"value": 7, "from": str(project)}
    assert settings["read_timeout"] == {"value": 30.0, "from": str(user)}
    assert settings["mode"] == {"value": "full", "from": "command line"}
    assert settings["provider"]["from"] == "environment (OPENAI_BASE_URL)"
    assert settings["provider.base_url"]["value"] == "http://127.0.0.1:9/v1"
    assert settings["provider.api_key"]["value"] == "not set"
    assert shown["files"] == {
        "user": {"path": str(user), "exists": True},
        "project": {"path": str(project), "exists": True},
    }
    table = out(agent_process(workspace, "config", "show", env={"AGENT_MODEL": "from-env"}))
    assert re.search(r"read_timeout\s+30\s+user file", table)
    assert re.search(r"max_rounds\s+7\s+project file", table)
    assert re.search(r"model\s+from-env\s+environment \(AGENT_MODEL\)", table)


def test_no_secret_is_ever_shown(workspace):
    write_user_config(
        '[providers.work]\nbase_url = "https://llm.example.com/v1"\napi_key_env = "WORK_KEY"\n'
        f'headers = {{ "Authorization" = "Bearer {HEADER_SECRET}" }}\n'
        f'[agents.helper]\ncommand = "helper"\nenv = {{ HELPER_TOKEN = "{AGENT_SECRET}", '
        'LEVEL = "3" }\n'
        f'[shell_environment]\nexclude = ["AWS_*"]\nset = {{ CI_TOKEN = "{SET_SECRET}" }}\n'
    )
    credentials.set_key("openrouter", STORED)
    env = {"WORK_KEY": KEY}
    for args in (("show",), ("show", "--json"), ("show", "--provider", "openrouter")):
        result = agent(workspace, "config", *args, env=env)
        assert result.returncode == 0, err(result)
        everything = out(result) + err(result)
        for secret in (KEY, HEADER_SECRET, AGENT_SECRET, STORED, SET_SECRET):
            assert secret not in everything, f"{secret} shown by agent config {' '.join(args)}"
    settings = settings_json(workspace, env=env)["settings"]
    assert settings["provider.api_key"]["value"] == "set (from WORK_KEY)"
    assert settings["provider.headers.Authorization"]["value"] == "***"
    assert settings["agents.helper"]["value"]["env"] == {"HELPER_TOKEN": "***", "LEVEL": "3"}
    policy = settings["shell_environment"]["value"]
    assert policy["exclude"] == ["AWS_*"] and policy["set"] == {"CI_TOKEN": "***"}
    stored = settings_json(workspace, "--provider", "openrouter", env=env)["settings"]
    assert stored["provider.api_key"]["value"].startswith("set (from the credentials file ")
    assert stored["provider"]["from"] == "command line"
    from_env = settings_json(
        workspace, env={"OPENAI_BASE_URL": "http://x/v1", "OPENAI_API_KEY": KEY}
    )
    assert from_env["settings"]["provider.api_key"]["value"] == "set (from OPENAI_API_KEY)"


def test_a_bad_config_file_is_exit_2_naming_it(workspace):
    config = write_user_config("max_rounds = 'many'\n")
    result = agent(workspace, "config", "show")
    assert result.returncode == 2
    assert str(config) in err(result) and "line 1" in err(result) and "Traceback" not in err(result)


def test_path_names_both_files_and_whether_they_exist(workspace):
    result = agent(workspace, "config", "path")
    assert result.returncode == 0, err(result)
    lines = out(result).splitlines()
    assert lines[0].startswith("user:") and str(paths.user_config_file()) in lines[0]
    assert "(does not exist)" in lines[0]
    assert str(workspace / ".agent" / "config.toml") in lines[1]
    write_user_config("")
    files = json.loads(out(agent(workspace, "config", "path", "--json")))
    assert files["user"]["exists"] is True and files["project"]["exists"] is False


def editor(tmp_path: Path, script: str) -> str:
    """A real editor program: a shell script that changes the file it is given."""
    program = tmp_path / "editor.sh"
    program.write_text(f"#!/bin/sh\n{script}\n")
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    return str(program)


def test_edit_creates_the_file_from_the_template_and_checks_it(workspace, tmp_path):
    program = editor(tmp_path, 'echo "max_rounds = 9" >> "$1"')
    result = agent_process(workspace, "config", "edit", env={"VISUAL": program, "EDITOR": "false"})
    assert result.returncode == 0, err(result)
    config = paths.user_config_file()
    assert "from a template" in out(result) and f"{config} is valid." in out(result)
    assert config.read_text().startswith(template())
    shown = settings_json(workspace)["settings"]["max_rounds"]
    assert shown == {"value": 9, "from": str(config)}


def test_edit_reports_a_file_left_broken(workspace, tmp_path):
    program = editor(tmp_path, 'echo "max_rounds = = 1" >> "$1"')
    result = agent(workspace, "config", "edit", env={"EDITOR": program, "VISUAL": ""})
    assert result.returncode == 2
    assert str(paths.user_config_file()) in err(result) and "not valid TOML" in err(result)


def test_edit_without_an_editor_says_what_to_set(workspace):
    result = agent(workspace, "config", "edit", env={"EDITOR": "", "VISUAL": ""})
    assert result.returncode == 2
    assert err(result).strip().splitlines() == [
        f"agent: No editor is set — set VISUAL or EDITOR (for example EDITOR=nano), or edit "
        f"{paths.user_config_file()} yourself."
    ]
    missing = agent(workspace, "config", "edit", env={"EDITOR": "no-such-editor-here"})
    assert missing.returncode == 2 and "could not be started" in err(missing)


def test_the_template_is_every_setting_commented_out(workspace):
    """As written, it changes nothing; with its settings uncommented, every one is valid."""
    assert tomllib.loads(template()) == {}
    setting = re.compile(r"^# (\[[^\]]+\]|[a-z_]+ = )")
    uncommented = "\n".join(
        line[2:] if setting.match(line) else "" for line in template().splitlines()
    )
    write_user_config(uncommented)
    settings = load_settings(workspace)
    assert settings.warnings == ()
    assert settings.provider is not None and settings.provider.name == "openai"
    assert settings.allow and settings.deny and "gpt-4o" in settings.prices
