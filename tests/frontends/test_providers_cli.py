"""`agent providers` and `agent models` as a person runs them, and the four no-leak checks.

The commands run in this process (`tests.support.cli.agent`); one of each, and the run
whose process listing is read, as `python -m agent_cli`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from agent_cli import paths
from agent_cli.providers import local_hints
from agent_cli.settings import ProviderSettings
from tests.support.cli import TIMEOUT, agent, agent_process, err, out, saved
from tests.support.fake_openai import FakeOpenAI, held, http_error, json_body, text

KEY = "sk-LEAKCHECK-7f3a9c2e5b1d"


def cli_agent(
    workspace: Path,
    *args: str,
    stdin: str = "",
    env: dict[str, str] | None = None,
    process: bool = False,
) -> subprocess.CompletedProcess:
    """`agent ARGS` with no model server: in this process, or in its own if `process`."""
    return (agent_process if process else agent)(workspace, *args, stdin=stdin, env=env)


def listing(workspace: Path) -> dict[str, dict[str, Any]]:
    result = cli_agent(workspace, "providers", "list", "--json")
    assert result.returncode == 0, err(result)
    return {row["name"]: row for row in map(json.loads, out(result).splitlines())}


# -- providers add / list / rm -------------------------------------------------------


def test_add_list_rm_end_to_end(workspace):
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        '# my settings\nmodel = "big"  # the usual\n\n[providers.keep]\n'
        'base_url = "http://keep/v1"  # keep me\n'
    )
    result = cli_agent(
        workspace,
        "providers", "add", "work",
        "--kind", "openai-responses",
        "--base-url", "https://llm.example.com/v1/",
        "--model", "big", "--model", "small",
        "--key-stdin",
        stdin=KEY + "\n",
        process=True,
    )  # fmt: skip
    assert result.returncode == 0, err(result)
    assert KEY not in out(result) + err(result)
    text_after = config.read_text()
    assert '# my settings\nmodel = "big"  # the usual' in text_after
    assert 'base_url = "http://keep/v1"  # keep me' in text_after
    assert tomllib.loads(text_after)["providers"]["work"] == {
        "kind": "openai-responses",
        "base_url": "https://llm.example.com/v1",
        "models": ["big", "small"],
        "default_model": "big",
    }
    assert KEY not in text_after
    stored = paths.credentials_file()
    assert oct(stored.stat().st_mode & 0o777) == oct(0o600)
    assert json.loads(stored.read_text())["keys"] == {"work": KEY}

    rows = listing(workspace)
    assert rows["work"]["has_key"] is True and rows["work"]["kind"] == "openai-responses"
    assert rows["work"]["models"] == ["big", "small"] and rows["work"]["origin"] == "config"
    assert rows["keep"]["has_key"] is False
    assert rows["llama.cpp"]["origin"] == "preset"
    assert rows["llama.cpp"]["base_url"] == "http://127.0.0.1:8080/v1"
    plain = cli_agent(workspace, "providers")
    assert plain.returncode == 0 and "work" in out(plain) and KEY not in out(plain)

    result = cli_agent(workspace, "providers", "rm", "work")
    assert result.returncode == 0, err(result)
    assert "work" not in tomllib.loads(config.read_text())["providers"]
    assert 'base_url = "http://keep/v1"  # keep me' in config.read_text()
    assert json.loads(stored.read_text())["keys"] == {}
    again = cli_agent(workspace, "providers", "rm", "work")
    assert again.returncode == 2 and "no provider 'work'" in err(again)


def test_add_a_preset_needs_only_its_name_and_keeps_other_keys(workspace):
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[providers."llama.cpp"]\ncontext_window = 8192\n\n[rules]\ndeny = []\n')
    result = cli_agent(workspace, "providers", "add", "llama.cpp", "--model", "qwen")
    assert result.returncode == 0, err(result)
    assert "No key stored" in out(result)
    data = tomllib.loads(config.read_text())
    assert data["providers"]["llama.cpp"] == {
        "context_window": 8192,
        "kind": "openai",
        "base_url": "http://127.0.0.1:8080/v1",
        "models": ["qwen"],
        "default_model": "qwen",
    }
    assert data["rules"] == {"deny": []}
    assert listing(workspace)["llama.cpp"]["origin"] == "preset, config"


def test_add_refuses_bad_input_with_exit_2(workspace):
    missing = cli_agent(workspace, "providers", "add", "work")
    assert missing.returncode == 2 and "--base-url" in err(missing)
    kind = cli_agent(
        workspace, "providers", "add", "w", "--kind", "smoke", "--base-url", "http://h"
    )
    assert kind.returncode == 2 and "--kind 'smoke'" in err(kind)
    empty = cli_agent(workspace, "providers", "add", "w", "--base-url", "http://h", "--key-stdin")
    assert empty.returncode == 2 and "stdin was empty" in err(empty)
    assert not paths.credentials_file().exists()


def test_a_provider_written_inline_is_left_for_hand_editing(workspace):
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    original = 'providers.work = { base_url = "http://h/v1" }\n'
    config.write_text(original)
    result = cli_agent(workspace, "providers", "add", "work", "--base-url", "http://x/v1")
    assert result.returncode == 2 and "edit that file by hand" in err(result)
    assert config.read_text() == original


# -- the four no-leak checks (SPEC §13) ---------------------------------------------------


def test_a_stored_key_never_leaks(workspace):
    with FakeOpenAI(models=["m1"]) as fake:
        added = cli_agent(
            workspace, "providers", "add", "fake", "--base-url", fake.base_url,
            "--model", "m1", "--key-stdin", stdin=KEY,
        )  # fmt: skip
        assert added.returncode == 0, err(added)
        # The answer waits for the test: the process listing is read while the run goes on.
        answer = threading.Event()
        fake.add(held(text("All good here.", chunks=8), answer, shown=0))
        environment = {**os.environ}
        run = subprocess.Popen(
            [sys.executable, "-m", "agent_cli", "run", "--debug", "--provider", "fake", "hi"],
            cwd=workspace,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        listings = []
        deadline = time.monotonic() + TIMEOUT
        while run.poll() is None and time.monotonic() < deadline:
            ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True)
            listings.append(ps.stdout)
            if fake.requests:
                break
            time.sleep(0.05)
        listings.append(
            subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        )
        answer.set()
        stdout, stderr = run.communicate(timeout=TIMEOUT)
        assert run.returncode == 0, stderr.decode()
        assert "All good here." in stdout.decode()
        # The key was used...
        assert fake.request_headers[0]["authorization"] == f"Bearer {KEY}"
        # ...but is in no process listing,
        assert any("agent_cli run --debug" in listing for listing in listings)
        assert not any(KEY in listing for listing in listings)
        # no log,
        logs = list(paths.log_dir().glob("*.log"))
        assert logs and not any(KEY in log.read_text() for log in logs)
        assert KEY not in stdout.decode() + stderr.decode()
        # no stored conversation,
        conversations = list(paths.conversations_dir().glob("*.jsonl"))
        assert conversations and saved()
        assert not any(KEY in file.read_text() for file in conversations)
        # and no error message, even when the server echoes it back.
        fake.add(http_error(401, f"Incorrect API key provided: {KEY}"))
        failed = agent(workspace, "run", "--debug", "--provider", "fake", "again")
        assert failed.returncode == 1
        assert "401" in err(failed) and "***" in err(failed) and KEY not in err(failed)
        assert not any(KEY in log.read_text() for log in paths.log_dir().glob("*.log"))


# -- agent models --------------------------------------------------------------------------


def test_models_lists_the_server_models_with_windows(workspace, fake):
    listed = {
        "data": [{"id": "served-model", "max_model_len": 16384}, {"id": "qwen3-8b"}, {"id": "x"}]
    }
    fake.add_models(*[json_body(listed)] * 10)  # the listing, and each model's probe
    result = cli_agent(
        workspace, "models", "--json", env={"OPENAI_BASE_URL": fake.base_url}, process=True
    )
    assert result.returncode == 0, err(result)
    rows = {row["id"]: row for row in json.loads(out(result))["models"]}
    assert rows["served-model"]["context_window"] == 16384
    assert rows["served-model"]["context_from"] == "server"
    assert rows["served-model"]["current"] is True
    assert rows["qwen3-8b"] == {
        "id": "qwen3-8b", "context_window": 131072, "context_from": "known model", "current": False
    }  # fmt: skip
    assert rows["x"]["context_window"] is None and rows["x"]["context_from"] == ""
    plain = cli_agent(workspace, "models", env={"OPENAI_BASE_URL": fake.base_url})
    assert plain.returncode == 0 and "served-model" in out(plain) and "16,384" in out(plain)


def test_models_for_a_configured_provider_with_a_window(workspace, fake):
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[providers.box]\nbase_url = "{fake.base_url}"\ncontext_window = 4096\n')
    result = cli_agent(workspace, "models", "--provider", "box", "--json")
    assert result.returncode == 0, err(result)
    listed = json.loads(out(result))
    assert listed["provider"] == "box"
    assert [(r["id"], r["context_window"], r["context_from"]) for r in listed["models"]] == [
        ("m1", 4096, "config"),
        ("m2", 4096, "config"),
    ]


def test_models_when_no_server_answers_says_how_to_start_it(workspace):
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[providers."llama.cpp"]\nbase_url = "{url}"\n')
    result = cli_agent(workspace, "models", "--provider", "llama.cpp")
    assert result.returncode == 1
    assert f"No server answers at http://127.0.0.1:{port}" in err(result)
    assert "llama-server -m MODEL.gguf --jinja" in err(result)


# -- a tiny llama.cpp / Ollama fake for the context window ---------------------------------


class _LocalServer(BaseHTTPRequestHandler):
    answers: ClassVar[dict[str, Any]] = {}  # each fixture makes a subclass with its own

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def _answer(self) -> None:
        key = f"{self.command} {self.path}"
        if self.command == "POST":
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
        body = self.answers.get(key)
        status, payload = (200, json.dumps(body).encode()) if body is not None else (404, b"{}")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _answer


@pytest.fixture
def local_server() -> Iterator[tuple[str, dict[str, Any]]]:
    answers: dict[str, Any] = {}
    handler = type("Handler", (_LocalServer,), {"answers": answers})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", answers
    finally:
        server.shutdown()
        server.server_close()


def served(base_url: str, model: str = "m") -> int | None:
    import asyncio

    provider = ProviderSettings("llama.cpp", "openai", base_url)
    return asyncio.run(local_hints.served_context_window(provider, model))


def test_llama_cpp_props_gives_the_window(local_server):
    url, answers = local_server
    answers["GET /props"] = {"default_generation_settings": {"n_ctx": 8192}, "n_ctx": 32768}
    assert served(url) == 8192
    answers["GET /props"] = {"n_ctx": 32768}
    assert served(url) == 32768


def test_ollama_show_gives_the_window(local_server):
    url, answers = local_server
    answers["POST /api/show"] = {"model_info": {"qwen3.context_length": 40960}}
    assert served(url, "qwen3") == 40960
    answers["POST /api/show"] = {
        "parameters": 'stop "<|im_end|>"\nnum_ctx                        16384',
        "model_info": {"qwen3.context_length": 40960},
    }
    assert served(url, "qwen3") == 16384


def test_the_models_listing_gives_the_window_last(local_server):
    url, answers = local_server
    answers["GET /v1/models"] = {"data": [{"id": "m", "max_model_len": 2048}]}
    assert served(url) == 2048
    answers["GET /props"] = {"default_generation_settings": {"n_ctx": 4096}}
    assert served(url) == 4096  # what is loaded beats what is listed


def test_served_window_is_none_when_unknown_and_never_raises(local_server):
    url, answers = local_server
    answers["GET /props"] = {"n_ctx": "lots"}
    assert served(url) is None
    assert served(f"http://127.0.0.1:{_free_port()}/v1") is None
    anthropic = ProviderSettings("anthropic", "anthropic", url)
    import asyncio

    assert asyncio.run(local_hints.served_context_window(anthropic, "claude")) is None


def test_props_and_show_parsers():
    assert local_hints.props_context_window({"default_generation_settings": {"n_ctx": 1}}) == 1
    assert local_hints.props_context_window([]) is None
    assert local_hints.show_context_window({"model_info": {"llama.context_length": 8}}) == 8
    assert local_hints.show_context_window({"model_info": {"x": True}}) is None
    assert local_hints.models_from_tags({"models": [{"name": "a:1"}, {"model": "b"}, 3]}) == [
        "a:1",
        "b",
    ]


# -- the local servers' messages -----------------------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "preset", "expected"),
    [
        ("http://127.0.0.1:8080/v1", "llama.cpp", "start `llama-server -m MODEL.gguf --jinja`"),
        ("http://127.0.0.1:11434/v1", "ollama", "start `ollama serve`"),
        ("http://localhost:8000/v1", "vllm", "start `vllm serve MODEL`"),
        ("http://localhost:11434/v1", "mine", "start `ollama serve`"),
        ("http://127.0.0.1:9999/v1", None, "start your model server there"),
        ("http://gpu-box:8080/v1", "llama.cpp", "No server answers at http://gpu-box:8080"),
    ],
)
def test_local_server_hint(base_url, preset, expected):
    hint = local_hints.local_server_hint(base_url, preset)
    assert hint is not None and expected in hint and hint.startswith("No server answers at ")


def test_no_hint_for_a_remote_service():
    assert local_hints.local_server_hint("https://api.openai.com/v1", "openai") is None
    assert local_hints.local_server_hint("https://llm.example.com/v1", None) is None


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (500, b'{"error":{"code":500,"message":"tools param requires --jinja flag"}}', True),
        (400, "The model service answered 400: tools param requires --jinja flag", True),
        (400, '{"error":{"message":"library/gemma:2b does not support tools"}}', True),
        (400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser', True),
        (400, "the request exceeds the available context size", False),
        (429, "tools param requires --jinja flag", False),
        (401, "invalid api key", False),
    ],
)
def test_tools_unsupported(status, body, expected):
    assert local_hints.tools_unsupported(status, body) is expected


def test_tools_unsupported_notice_names_the_server():
    notice = local_hints.tools_unsupported_notice("http://127.0.0.1:8080/v1")
    assert "http://127.0.0.1:8080" in notice and "--jinja" in notice


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
