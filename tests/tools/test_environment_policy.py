"""EnvironmentPolicy: what of the user's environment commands and MCP servers get (SPEC §13)."""

from __future__ import annotations

from agent_cli.tools.environment import EnvironmentPolicy

USER_ENV = {
    "PATH": "/usr/bin",
    "HOME": "/home/me",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "xterm",
    "EDITOR": "vi",
    "AWS_PROFILE": "dev",
    "aws_region": "eu-west-1",
    "MY_API_KEY": "sk-1",
    "GITHUB_TOKEN": "ghp-1",
    "DB_PASSWORD": "pw",
    "CLIENT_SECRET": "s",
}


def test_the_default_is_the_environment_without_secret_looking_names():
    kept = EnvironmentPolicy().apply(USER_ENV)
    assert kept == {
        k: v
        for k, v in USER_ENV.items()
        if k not in ("MY_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "CLIENT_SECRET")
    }


def test_core_keeps_only_the_basic_variables_and_locales():
    kept = EnvironmentPolicy(inherit="core").apply(USER_ENV)
    assert set(kept) == {"PATH", "HOME", "LANG", "LC_ALL", "TERM"}


def test_none_starts_empty_and_set_still_adds():
    policy = EnvironmentPolicy(inherit="none", set={"CI": "1"})
    assert policy.apply(USER_ENV) == {"CI": "1"}


def test_ignore_default_excludes_lets_secret_names_through():
    kept = EnvironmentPolicy(ignore_default_excludes=True).apply(USER_ENV)
    assert kept == USER_ENV


def test_exclude_globs_match_names_in_any_case_on_top_of_the_defaults():
    kept = EnvironmentPolicy(exclude=("aws_*", "editor")).apply(USER_ENV)
    assert "AWS_PROFILE" not in kept and "aws_region" not in kept and "EDITOR" not in kept
    assert "MY_API_KEY" not in kept  # the defaults still apply
    assert kept["PATH"] == "/usr/bin" and kept["HOME"] == "/home/me"


def test_include_only_keeps_just_the_matching_names():
    kept = EnvironmentPolicy(include_only=("path", "Lc_*", "MY_*")).apply(USER_ENV)
    assert kept == {"PATH": "/usr/bin", "LC_ALL": "C.UTF-8"}  # MY_API_KEY went before


def test_the_steps_run_in_order_inherit_excludes_include_only_then_set():
    policy = EnvironmentPolicy(
        inherit="core",
        exclude=("LANG",),
        include_only=("LANG", "HOME", "EDITOR", "*TOKEN*"),
        set={"GITHUB_TOKEN": "scoped", "EDITOR": "nano"},
    )
    # core drops EDITOR; exclude drops LANG before include_only could keep it; set comes last,
    # so its names are there even where include_only or the default excludes would say no.
    assert policy.apply(USER_ENV) == {
        "HOME": "/home/me",
        "GITHUB_TOKEN": "scoped",
        "EDITOR": "nano",
    }


def test_set_replaces_an_inherited_value():
    assert EnvironmentPolicy(set={"HOME": "/tmp/h"}).apply(USER_ENV)["HOME"] == "/tmp/h"


def test_set_values_stay_out_of_the_repr():
    assert "ghp-secret" not in repr(EnvironmentPolicy(set={"GH_TOKEN": "ghp-secret"}))
