"""The client the MCP conformance suite runs: `agent mcp tools`/`call`, as a person would.

    MCP_CONFORMANCE_SCENARIO=NAME python tests/conformance/client.py SERVER_URL

The suite starts a server for the scenario and runs this with its address. Each
run gets config, data and cache folders of its own (a login is kept between the
`tools` and the `call` of one scenario, as between two commands of a person) and
the browser stand-in of tests/support/browser.py, which says yes to every login.
A scenario that needs an `mcp.json` entry (a pre-registered client, a client ID
metadata document) gets one; the others name the server by its address alone.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BROWSER = ROOT / "tests" / "support" / "browser.py"
CIMD_URL = "https://conformance-test.local/client-metadata.json"
# Each scenario's call after the listing: (tool, arguments, more options).
CALLS = {
    "initialize": None,
    "tools_call": ("add_numbers", {"a": 5, "b": 3}, []),
    "elicitation-sep1034-client-defaults": (
        "test_client_elicitation_defaults",
        {},
        ["--accept-defaults"],
    ),
    "sse-retry": ("test_reconnection", {}, []),
}
AUTH_CALL = ("test-tool", {}, [])
# json-schema-2020-12-preservation: the schema `agent mcp tools --json` shows of this tool is
# sent back through that one, for the suite to see what was kept.
SCHEMA_TOOL, ECHO_TOOL = "json_schema_2020_12_tool", "json_schema_echo"


def agent(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "agent_cli", "mcp", *args]
    print("$ agent mcp " + " ".join(args), flush=True)
    done = subprocess.run(command, env=env, cwd=cwd, timeout=120, capture_output=True, text=True)
    print(done.stdout, end="", flush=True)
    print(done.stderr, end="", file=sys.stderr, flush=True)
    return done


def entry(scenario: str, url: str, env: dict[str, str]) -> dict | None:
    """The `mcp.json` entry a scenario needs, or None for the address alone."""
    if scenario == "auth/pre-registration":
        context = json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])
        env["CONFORMANCE_CLIENT_SECRET"] = context["client_secret"]
        oauth = {
            "client_id": context["client_id"],
            "client_secret_env": "CONFORMANCE_CLIENT_SECRET",
        }
        return {"url": url, "oauth": oauth}
    if scenario == "auth/basic-cimd":
        return {"url": url, "oauth": {"client_metadata_url": CIMD_URL}}
    return None


def browser(folder: Path) -> str:
    spec = importlib.util.spec_from_file_location("browser", BROWSER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.install(str(folder))


def main() -> int:
    scenario, url = os.environ["MCP_CONFORMANCE_SCENARIO"], sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="agent-conformance-") as scratch:
        home = Path(scratch)
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "BROWSER": browser(home),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_STATE_HOME": str(home / "state"),
            "XDG_CACHE_HOME": str(home / "cache"),
        }
        target = url
        found = entry(scenario, url, env)
        if found is not None:
            (home / "config" / "agent").mkdir(parents=True)
            servers = {"mcpServers": {"conformance": found}}
            (home / "config" / "agent" / "mcp.json").write_text(json.dumps(servers))
            target = "conformance"
        workspace = home / "workspace"
        workspace.mkdir()
        listed = agent("tools", target, "--json", env=env, cwd=workspace)
        call = CALLS.get(scenario, AUTH_CALL if scenario.startswith("auth/") else None)
        tools = {t["name"]: t for t in json.loads(listed.stdout)} if listed.returncode == 0 else {}
        if SCHEMA_TOOL in tools and ECHO_TOOL in tools:
            call = (ECHO_TOOL, {"schema": tools[SCHEMA_TOOL]["inputSchema"]}, [])
        if listed.returncode != 0 or call is None:
            return listed.returncode
        tool, arguments, options = call
        arguments_json = json.dumps(arguments)
        return agent(
            "call", target, tool, arguments_json, *options, env=env, cwd=workspace
        ).returncode


if __name__ == "__main__":
    sys.exit(main())
