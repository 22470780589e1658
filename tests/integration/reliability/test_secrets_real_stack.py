"""Guarantee 7 on the real stack: notes parsed from disk (front matter included) hold secrets
of common shapes; no tool output carries one (search, get with its front matter, explain,
neighbors, path), each secret line is replaced by a visible marker, and health lists the
notes so a person can clean them.
"""

from __future__ import annotations

import json
import random
import string
import sys
from collections import Counter

import pytest
from live_root import LiveRoot, mcp_caller

rng = random.Random(7)
KEY_LINES = ["".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(64))
             for _ in range(150)]
SECRETS = {
    "password": "hunter2hunter2x",
    "aws": "AKIAIOSFODNN7REALLYX",
    "url": "pgpass12345",
    "github": "ghp_" + "Ab1" * 12,
    "yaml_key": "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.payload.signature99",
    "env": "Sup3rS3cretEnv",
    "heading": "sk-" + "Zx9" * 10,
    "title": "s3cr3tvalue99",
}
NOTES = {
    "Repos/ops/Notes/Front.md": f"""---
title: Front matter secrets
password: {SECRETS['password']}
aws_access_key_id: {SECRETS['aws']}
db:
  url: postgres://admin:{SECRETS['url']}@db.internal/app
tokens: [{SECRETS['github']}]
deploy_key: |
  -----BEGIN OPENSSH PRIVATE KEY-----
  {SECRETS['yaml_key']}
  -----END OPENSSH PRIVATE KEY-----
related: ["[[Body]]"]
---
# Front matter secrets

The staging deploy reads its credentials from the front matter above.
""",
    "Repos/ops/Notes/Body.md": "\n".join([
        "# Body secrets", "",
        "Call the staging deploy hook:",
        f"curl -H 'Authorization: Bearer {SECRETS['bearer']}' https://deploy.internal/hook",
        f"DB_PASSWORD={SECRETS['env']}",
        f"## export OPENAI_API_KEY={SECRETS['heading']}",
        "The signing key for releases:",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
        *KEY_LINES[:130], "Comment: release signer zebra", *KEY_LINES[130:],
        "-----END PGP PRIVATE KEY BLOCK-----",
        "After the key: rotate it every quarter, see [[Titled]].", ""]),
    "Repos/ops/Notes/Titled.md": f'---\ntitle: "Vault token={SECRETS["title"]}"\n---\n'
                                 "# Vault\n\nThe vault unseal procedure for staging.\n",
    "Repos/ops/Notes/Clean.md": "# Clean\n\nNothing secret: the token budget is 30 seconds.\n",
}
QUERIES = ["front matter credentials staging deploy", "curl deploy hook", "release signer zebra",
           "signing key for releases", "rotate it every quarter", "vault unseal procedure",
           "database password", "export OPENAI_API_KEY", *SECRETS.values()]


SEEN: Counter = Counter()


@pytest.fixture(scope="module")
def call(tmp_path_factory, embedder):
    root = LiveRoot.create(tmp_path_factory.mktemp("secrets") / "memory", NOTES)
    service = root.service(embedder)
    assert service.refresh("full").ok

    def counted(name: str, arguments: dict):
        SEEN[name] += 1
        return call(name, arguments)

    with mcp_caller(service) as call:
        yield counted
    print(f"\n[secrets-real-stack] {len(SECRETS) + 1} secrets in {len(NOTES)} notes, "
          f"{sum(SEEN.values())} tool calls checked: {dict(SEEN)}", file=sys.stderr)


def leaked(result, asked: str = "") -> list[str]:
    data = dict(result.structured_content or {})
    data.pop("query", None)  # the caller's own words come back as they were sent
    text = json.dumps(data) + " ".join(c.text for c in result.content if hasattr(c, "text"))
    text = text.replace(asked, "")
    values = [*SECRETS.values(), *KEY_LINES, "PRIVATE KEY"]
    return [v[:10] for v in values if v in text]


def test_search_and_explain_evidence_hold_no_secret(call):
    cited = 0
    for query in QUERIES:
        for tool in ("memory_search", "memory_explain"):
            result = call(tool, {"query": query, "limit": 20, "status": "any"})
            assert not result.is_error, (tool, query)
            assert leaked(result, query) == [], (tool, query)
        cited += len(call("memory_search", {"query": query})
                     .structured_content["items"])
    assert cited  # the secrets' neighbourhoods were found and cited, redacted


def test_get_returns_no_secret_in_lines_title_or_front_matter(call):
    for path in NOTES:
        total = call("memory_get", {"identity": path}).structured_content["line_count"]
        for start in sorted({1, 5, 9, 20, 120, 139, 140, 150, total}):
            if start <= total:
                result = call("memory_get", {"identity": path, "start_line": start})
                assert not result.is_error and leaked(result) == [], (path, start)
    front = call("memory_get", {"identity": "Repos/ops/Notes/Front.md"}).structured_content
    assert front["front_matter"]["password"].startswith("[REDACTED:")
    assert front["redacted_lines"]
    body = call("memory_get", {"identity": "Repos/ops/Notes/Body.md", "start_line": 139,
                               "end_line": 141}).structured_content
    assert all(line["text"] == "[REDACTED:private-key]" for line in body["lines"])


def test_graph_answers_hold_no_secret(call):
    for tool, args in (("memory_neighbors", {"identity": "Repos/ops/Notes/Body.md", "depth": 2}),
                       ("memory_path", {"source": "Repos/ops/Notes/Front.md",
                                        "target": "Repos/ops/Notes/Titled.md"})):
        result = call(tool, args)
        assert not result.is_error, (tool, result.content)
        assert leaked(result) == [], tool


def test_health_lists_every_note_holding_a_secret(call):
    health = call("memory_health", {}).structured_content
    listed = {entry["path"]: entry for entry in health["notes_with_secrets"]}
    assert set(listed) == {p for p in NOTES if "Clean" not in p}
    assert "private-key" in listed["Repos/ops/Notes/Body.md"]["kinds"]
    assert leaked(call("memory_health", {})) == []
