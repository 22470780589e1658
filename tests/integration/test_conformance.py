"""The official MCP conformance suite against `ai-memory serve --http`.

Every scenario runs; the ones the server cannot pass are listed, with their reasons, in
conformance/expected-failures.yml, and the suite itself fails the run on a new failure or
on a listed scenario that passes. Node 22 and the suite come from the npm registry through
npx on the first run (the tests may reach registries; the product never does).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest
from http_harness import http_server, make_root

SUITE = ["-y", "-p", "node@22", "-p", "@modelcontextprotocol/conformance@0.1.16", "conformance"]
EXPECTED_FAILURES = Path(__file__).parent / "conformance" / "expected-failures.yml"
REQUIRED = ("server-initialize", "ping", "tools-list", "dns-rebinding-protection")
# The suite names each result folder server-<scenario>-<ISO time>: 2026-12-01T14-48-07-202Z
STAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")


def npx() -> str:
    found = shutil.which("npx")
    if found is None:
        pytest.fail("npx is not on PATH: install Node.js with npm (any version: npx fetches "
                    "Node 22 itself), e.g. `apt-get install nodejs npm` or "
                    "https://nodejs.org/en/download; the conformance suite needs it")
    return found


def results(folder: Path) -> dict[str, list[dict]]:
    """Scenario name -> its checks, from the suite's output folder."""
    found = {}
    for checks in folder.glob("server-*/checks.json"):
        name = STAMP.sub("", checks.parent.name.removeprefix("server-"))
        found[name] = json.loads(checks.read_text())
    return found


@pytest.mark.timeout(1200)
def test_the_conformance_suite_passes_but_for_the_listed_scenarios(tmp_path):
    command = npx()
    listed = EXPECTED_FAILURES.read_text()
    assert not any(f"- {name}" in listed for name in REQUIRED)
    root = make_root(tmp_path)
    # The suite tests the protocol, and sends no credential: this server lets every local
    # account in, as `--auth none` says (tests/integration/test_local_owner.py tests who may).
    with http_server(root, tmp_path / "serve.stderr", "--no-watch", "--auth", "none") as served:
        done = subprocess.run(
            [command, *SUITE, "server", "--url", served.url, "--expected-failures",
             str(EXPECTED_FAILURES), "-o", str(tmp_path / "results")],
            capture_output=True, text=True, timeout=1100, cwd=tmp_path)
        # Still serving after the suite's bad requests (unknown prompts, foreign hosts...).
        with urllib.request.urlopen(served.url.replace("/mcp", "/ai-memory/status"),
                                    timeout=30) as status:
            assert json.loads(status.read())["server"] == "ai-memory"
    report = done.stdout[-6000:] + done.stderr[-2000:]
    assert done.returncode == 0, report
    ran = results(tmp_path / "results")
    for name in REQUIRED:
        assert ran.get(name), f"{name} did not run:\n{report}"
        assert all(c["status"] == "SUCCESS" for c in ran[name]), (name, ran[name])
