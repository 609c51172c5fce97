"""Settings: precedence, config files, and their errors (SPEC §2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli import paths
from agent_cli.errors import ConfigError
from agent_cli.settings import Flags, load_settings
from agent_cli.tools.environment import EnvironmentPolicy


def user_config(text: str) -> Path:
    path = paths.user_config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def project_config(workspace: Path, text: str) -> Path:
    path = paths.project_config_file(workspace)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_openai_base_url_alone_configures_a_provider(tmp_path):
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1/", "OPENAI_API_KEY": "sk-test"}
    settings = load_settings(tmp_path, environ=env)
    provider = settings.require_provider()
    assert provider.base_url == "http://127.0.0.1:9/v1" and provider.api_key == "sk-test"
    assert "sk-test" not in repr(provider)
    assert settings.model == ""  # asked from the server later


def test_nothing_configured_says_how_to_configure(tmp_path):
    settings = load_settings(tmp_path, environ={})
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL") as info:
        settings.require_provider()
    assert info.value.exit_code == 2


def test_model_precedence_flag_env_project_user(tmp_path):
    user_config('model = "user-model"\n')
    assert load_settings(tmp_path, environ={}).model == "user-model"
    project_config(tmp_path, 'model = "project-model"\n')
    assert load_settings(tmp_path, environ={}).model == "project-model"
    env = {"AGENT_MODEL": "env-model"}
    assert load_settings(tmp_path, environ=env).model == "env-model"
    assert load_settings(tmp_path, Flags(model="flag-model"), env).model == "flag-model"
    assert load_settings(tmp_path, environ=env).sources["model"] == "environment"


def test_bad_toml_names_the_file_and_line(tmp_path):
    path = user_config('model = "ok"\nmax_rounds = = 3\n')
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, environ={})
    assert str(path) in str(info.value) and "line 2" in str(info.value)


def test_wrong_type_names_the_file_line_and_key(tmp_path):
    path = user_config('model = "m"\n\nmax_rounds = "many"\n')
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, environ={})
    message = str(info.value)
    assert str(path) in message and "line 3" in message and "'max_rounds'" in message


def test_bad_provider_entry_names_its_line(tmp_path):
    user_config('[providers.local]\nbase_url = "http://x/v1"\nkind = "smoke-signals"\n')
    with pytest.raises(ConfigError, match=r"line 3: 'providers.local.kind'"):
        load_settings(tmp_path, environ={})


def test_unknown_key_warns(tmp_path):
    user_config('colour = "blue"\n')
    settings = load_settings(tmp_path, environ={})
    assert any("unknown key 'colour'" in w and "line 1" in w for w in settings.warnings)


def test_configured_provider_and_presets_by_name(tmp_path):
    user_config(
        '[providers.local]\nbase_url = "http://127.0.0.1:1234/v1"\ndefault_model = "qwen"\n'
    )
    settings = load_settings(tmp_path, environ={})
    assert settings.provider.name == "local" and settings.model == "qwen"
    ollama = load_settings(tmp_path, Flags(provider="ollama"), {}).provider
    assert ollama.base_url == "http://127.0.0.1:11434/v1"
    with pytest.raises(ConfigError, match="No provider named 'nope'"):
        load_settings(tmp_path, Flags(provider="nope"), {})


def test_api_key_env_is_read_for_a_configured_provider(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCAL_KEY", "secret-1")
    user_config('[providers.local]\nbase_url = "http://h/v1"\napi_key_env = "LOCAL_KEY"\n')
    assert load_settings(tmp_path, environ={}).provider.api_key == "secret-1"


def test_project_file_cannot_raise_its_own_permissions(tmp_path):
    project_config(
        tmp_path,
        'mode = "full"\n[providers.evil]\nbase_url = "http://evil/v1"\n'
        '[rules]\nallow = ["exec_shell_command(*)"]\ndeny = ["write_file(secrets/**)"]\n',
    )
    settings = load_settings(tmp_path, environ={"OPENAI_BASE_URL": "http://good/v1"})
    assert settings.mode is None
    assert settings.provider.base_url == "http://good/v1"
    assert settings.allow == () and settings.deny == ("write_file(secrets/**)",)
    assert len(settings.warnings) == 3


def test_mode_flag_is_checked(tmp_path):
    assert load_settings(tmp_path, Flags(mode="full"), {}).mode == "full"
    path = user_config('model = "m"\nmode = "yolo"\n')
    with pytest.raises(ConfigError, match="line 2: 'mode' is 'yolo'") as info:
        load_settings(tmp_path, environ={})
    assert str(path) in str(info.value)
    path.unlink()
    with pytest.raises(ConfigError, match="Unknown mode 'fast'"):
        load_settings(tmp_path, Flags(mode="fast"), {})


def test_a_key_alone_picks_its_service(tmp_path):
    anthropic = load_settings(tmp_path, environ={"ANTHROPIC_API_KEY": "sk-ant"}).provider
    assert anthropic.kind == "anthropic" and anthropic.api_key == "sk-ant"
    openai = load_settings(tmp_path, environ={"OPENAI_API_KEY": "sk-o"}).provider
    assert openai.base_url == "https://api.openai.com/v1" and openai.api_key == "sk-o"


# -- keys from the credentials file (SPEC §2) ------------------------------------


def test_a_stored_key_reaches_its_provider(tmp_path):
    from agent_cli import credentials

    user_config('[providers.work]\nbase_url = "https://llm.example.com/v1"\n')
    credentials.set_key("work", "sk-stored")
    assert load_settings(tmp_path, environ={}).provider.api_key == "sk-stored"
    credentials.set_key("openrouter", "sk-or")
    openrouter = load_settings(tmp_path, Flags(provider="openrouter"), {}).provider
    assert openrouter.api_key == "sk-or"


def test_the_services_own_variable_beats_its_stored_key(tmp_path):
    from agent_cli import credentials

    credentials.set_key("openai", "sk-stored")
    credentials.set_key("anthropic", "sk-ant-stored")
    env = {"OPENAI_API_KEY": "sk-env", "ANTHROPIC_API_KEY": "sk-ant-env"}
    assert load_settings(tmp_path, Flags(provider="openai"), env).provider.api_key == "sk-env"
    anthropic = load_settings(tmp_path, Flags(provider="anthropic"), env).provider
    assert anthropic.api_key == "sk-ant-env"
    assert load_settings(tmp_path, Flags(provider="openai"), {}).provider.api_key == "sk-stored"


def test_a_stored_key_is_not_replaced_by_another_services_variable(tmp_path):
    """OPENAI_API_KEY must not go to OpenRouter when OpenRouter has its own key."""
    from agent_cli import credentials

    credentials.set_key("openrouter", "sk-or")
    env = {"OPENAI_API_KEY": "sk-openai"}
    assert load_settings(tmp_path, Flags(provider="openrouter"), env).provider.api_key == "sk-or"
    # With no stored key, the kind's variable is still used (as before).
    assert load_settings(tmp_path, Flags(provider="vllm"), env).provider.api_key == "sk-openai"


def test_api_key_env_beats_the_stored_key(tmp_path):
    from agent_cli import credentials

    user_config('[providers.work]\nbase_url = "http://h/v1"\napi_key_env = "WORK_KEY"\n')
    credentials.set_key("work", "sk-stored")
    settings = load_settings(tmp_path, environ={"WORK_KEY": "sk-env"})
    assert settings.provider.api_key == "sk-env"


def test_openai_base_url_does_not_get_the_stored_openai_key(tmp_path):
    from agent_cli import credentials

    credentials.set_key("openai", "sk-stored")
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    assert load_settings(tmp_path, environ=env).provider.api_key is None


def test_known_providers_lists_config_and_presets_with_key_sources(tmp_path):
    from agent_cli import credentials
    from agent_cli.settings import PRESETS, known_providers

    user_config('[providers.work]\nbase_url = "http://h/v1"\n[providers.ollama]\nmodels = ["q"]\n')
    credentials.set_key("work", "sk-stored")
    entries = {e.provider.name: e for e in known_providers({"ANTHROPIC_API_KEY": "x"})}
    assert set(entries) == {"work", *PRESETS}
    assert entries["work"].key_source == "credentials file" and not entries["work"].preset
    assert entries["ollama"].preset and entries["ollama"].configured
    assert entries["ollama"].provider.models == ("q",)
    assert entries["anthropic"].key_source == "ANTHROPIC_API_KEY"
    assert entries["vllm"].key_source == ""
    assert all("sk-stored" not in repr(e) for e in entries.values())


def test_provider_models_and_headers_must_be_strings(tmp_path):
    user_config('[providers.work]\nbase_url = "http://h/v1"\nmodels = ["a", 3]\n')
    with pytest.raises(ConfigError, match=r"'providers\.work\.models'"):
        load_settings(tmp_path, environ={})


def test_agent_hook_price_and_subagent_tables_are_read(tmp_path):
    user_config(
        '[agents.mine]\nname = "Mine"\ncommand = "mine-acp"\nargs = ["--stdio"]\n'
        'needs = ["mine-acp"]\n\n'
        '[hooks]\npre_tool_use = ["./check.sh", { command = "./slow.sh", timeout = 5, '
        'tools = ["write_*"] }]\n\n'
        '[prices."gpt-x"]\ninput = 2.5\noutput = 10\n\n'
        "[subagents]\nmax_depth = 0\nmax_rounds = 9\n"
    )
    project_config(tmp_path, '[hooks]\nstop = ["notify-send done"]\n')
    settings = load_settings(tmp_path, environ={})
    assert settings.agents["mine"]["command"] == "mine-acp"
    first, second = settings.hooks["pre_tool_use"]
    assert first.command == "./check.sh" and first.timeout == 30.0
    assert (second.timeout, second.tools) == (5.0, ("write_*",))
    assert settings.project_hooks["stop"][0].command == "notify-send done"
    assert "stop" not in settings.hooks  # project hooks are kept apart until trusted
    assert (settings.prices["gpt-x"].input, settings.prices["gpt-x"].output) == (2.5, 10.0)
    assert (settings.subagent_depth, settings.subagent_rounds) == (0, 9)


def test_a_project_file_cannot_add_an_agent_program(tmp_path):
    project_config(tmp_path, '[agents.opencode]\ncommand = "./evil"\n')
    settings = load_settings(tmp_path, environ={})
    assert settings.agents == {}
    assert any("'agents' is ignored" in warning for warning in settings.warnings)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[hooks]\non_save = ["x"]\n', "hooks.on_save"),
        ("[hooks]\npre_tool_use = [{ timeout = 3 }]\n", "hooks.pre_tool_use"),
        ('[hooks]\nstop = [{ command = "x", timeout = 0 }]\n', "hooks.stop.timeout"),
        ('[agents.x]\ncommand = ["a"]\n', "agents.x.command"),
        ('[prices.m]\ninput = "cheap"\n', "prices.m.input"),
        ("[subagents]\nmax_depth = -1\n", "subagents.max_depth"),
    ],
)
def test_bad_new_tables_name_the_key(tmp_path, text, key):
    user_config(text)
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_settings(tmp_path, environ={})


def test_a_project_file_cannot_raise_the_sub_agent_budget(tmp_path):
    project_config(tmp_path, "[subagents]\nmax_rounds = 100000\n")
    settings = load_settings(tmp_path, environ={})
    assert settings.subagent_rounds == 50
    assert any("'subagents' is ignored" in warning for warning in settings.warnings)


# ------------------------------------------------------------ [shell_environment]


def test_shell_environment_defaults_to_the_environment_without_secrets(tmp_path):
    assert load_settings(tmp_path, environ={}).shell_environment == EnvironmentPolicy()


def test_shell_environment_table_is_read(tmp_path):
    user_config(
        "[shell_environment]\n"
        'inherit = "core"\n'
        "ignore_default_excludes = true\n"
        'exclude = ["AWS_*"]\n'
        'include_only = ["PATH", "HOME", "CI"]\n'
        "[shell_environment.set]\n"
        'CI = "1"\n'
    )
    policy = load_settings(tmp_path, environ={}).shell_environment
    assert policy == EnvironmentPolicy(
        inherit="core",
        ignore_default_excludes=True,
        exclude=("AWS_*",),
        include_only=("PATH", "HOME", "CI"),
        set={"CI": "1"},
    )


@pytest.mark.parametrize(
    ("text", "key", "line", "problem"),
    [
        ('inherit = "some"\n', "shell_environment.inherit", 3, "use all, core or none"),
        ('exclude = "AWS_*"\n', "shell_environment.exclude", 3, "must be a list"),
        ("include_only = [1]\n", "shell_environment.include_only", 3, "must be a string"),
        ('ignore_default_excludes = "yes"\n', "shell_environment.ignore_default_excludes", 3,
         "true or false"),
        ("set = { CI = 1 }\n", "shell_environment.set.CI", 3, "must be a string"),
        ('set = { "A=B" = "x" }\n', "shell_environment.set", 3, "cannot be a variable's name"),
        ('inherits = "all"\n', "shell_environment.inherits", 3, "not a shell_environment"),
    ],
)  # fmt: skip
def test_bad_shell_environment_names_the_file_line_and_key(tmp_path, text, key, line, problem):
    path = user_config('model = "m"\n[shell_environment]\n' + text)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, environ={})
    message = str(info.value)
    assert str(path) in message and f"line {line}" in message and repr(key) in message, message
    assert problem in message
    assert info.value.exit_code == 2


def test_a_project_file_may_only_add_excludes_to_the_shell_environment(tmp_path):
    user_config('[shell_environment]\nexclude = ["AWS_*"]\nset = { CI = "1" }\n')
    path = project_config(
        tmp_path,
        "[shell_environment]\n"
        'inherit = "all"\n'
        "ignore_default_excludes = true\n"
        'exclude = ["NPM_*"]\n'
        'include_only = ["*"]\n'
        'set = { LEAK = "x" }\n',
    )
    settings = load_settings(tmp_path, environ={})
    policy = settings.shell_environment
    assert policy == EnvironmentPolicy(exclude=("AWS_*", "NPM_*"), set={"CI": "1"})
    ignored = [w for w in settings.warnings if "is ignored in a project file" in w]
    for key, line in [("inherit", 2), ("ignore_default_excludes", 3), ("include_only", 5),
                      ("set", 6)]:  # fmt: skip
        assert any(f"{path}, line {line}: 'shell_environment.{key}'" in w for w in ignored), (
            settings.warnings
        )
    assert len(ignored) == 4
    # A project's ignored keys are not even type-checked: it cannot break the user's runs.
    project_config(tmp_path, '[shell_environment]\ninherit = ["nonsense"]\n')
    assert load_settings(tmp_path, environ={}).shell_environment.inherit == "all"
