"""Guarantee 7 on the real stack: notes parsed from disk (front matter included) hold secrets
of common shapes; no tool output carries one (search, get with its front matter, explain,
neighbors, path), each secret line is replaced by a visible marker, and health lists the
notes so a person can clean them.
"""

from __future__ import annotations

import json
import random
import re
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


# -- derived state: secrets are replaced before anything is derived ------------------------

KEY_BODY = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(64))
# shape -> (the line a note holds, the value that must never be found, can it be a name)
PLANTED = {
    "aws-access-key": ("aws_access_key_id = AKIAPLANTED7731KEYXZ", "AKIAPLANTED7731KEYXZ", True),
    "private-key": ("", KEY_BODY, False),
    "short-password": ("password: hunter2", "hunter2", True),
    "quoted-password": ('password: "correct horse battery staple"',
                        "correct horse battery staple", True),
    "jwt": ("session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJwbGFudGVkNzczMSJ9."
            "c2lnbmF0dXJlcGxhbnRlZDc3MzE", "c2lnbmF0dXJlcGxhbnRlZDc3MzE", True),
    "slack-webhook": ("alerts go to https://hooks.slack.com/services/T0PLANT77/B0PLANT77/"
                      "pl4ntedW3bhookS3cret", "pl4ntedW3bhookS3cret", True),
    "stripe-key": ("charge with sk_live_51PlantedStripeKey7731abcdEFGH",
                   "sk_live_51PlantedStripeKey7731abcdEFGH", True),
    "azure-account-key": ("DefaultEndpointsProtocol=https;AccountName=plantedacct;AccountKey="
                          "pl4ntedAzureKey7731pl4ntedAzureKey7731pl4ntedAzureKey7731pl4nted==;"
                          "EndpointSuffix=core.windows.net",
                          "pl4ntedAzureKey7731pl4ntedAzureKey7731pl4ntedAzureKey7731pl4nted==",
                          True),
    "npm-token": ("publish with npm_pl4ntedNpmToken7731pl4ntedNpmToken77",
                  "npm_pl4ntedNpmToken7731pl4ntedNpmToken77", True),
    "basic-auth": ("Authorization: Basic cGxhbnRlZHVzZXI6cGxhbnRlZHBhc3M3NzMx",
                   "cGxhbnRlZHVzZXI6cGxhbnRlZHBhc3M3NzMx", True),
    "url-password": ("cache at redis://:pl4ntedRedisPw7731@cache.internal:6379/0",
                     "pl4ntedRedisPw7731", True),
}


def probe(value: str) -> str:
    """The word of a value a search would look for: its longest run of letters and digits."""
    return max(re.findall(r"[A-Za-z0-9]+", value), key=len)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def planted_note(shape: str) -> str:
    """The shape's line in the body, in a front matter value, in the title and as the
    memory_id (a private key block: in the body and a front matter block scalar)."""
    line, value, nameable = PLANTED[shape]
    if shape == "private-key":
        block = ["-----BEGIN RSA PRIVATE KEY-----", value, "-----END RSA PRIVATE KEY-----"]
        front = ["deploy_key: |", *(f"  {row}" for row in block)]
        body = ["The release key:", *block]
    else:
        front = [f"config: {_quoted(line)}", f"title: {_quoted(line)}",
                 *([f"memory_id: {_quoted(line)}"] if nameable else [])]
        body = [f"The deploy reads {line} at start.", f"- {line}", f"## {line}"]
    return "\n".join(["---", *front, "---", f"# Planted {shape}", "", *body, ""])


@pytest.fixture(scope="module")
def derived(tmp_path_factory, embedder):
    """A root with one note per shape, fully refreshed by the CLI and then searched for each
    value: every file the state folder holds afterwards, as bytes."""
    notes = {f"Repos/ops/Planted/{shape}.md": planted_note(shape) for shape in PLANTED}
    notes["Repos/ops/Planted/clean.md"] = "# Clean\n\nThe deploy rotates keys quarterly.\n"
    root = LiveRoot.create(tmp_path_factory.mktemp("derived") / "memory", notes)
    report = root.refresh("full")
    assert report["ok"], report
    service = root.service(embedder)
    lexical = {shape: service.explain(probe(value), status="any").counts.lexical
               for shape, (_, value, _) in PLANTED.items()}
    files = {path.relative_to(root.state).as_posix(): path.read_bytes()
             for path in sorted(root.state.rglob("*")) if path.is_file()}
    kinds = {name.rsplit("/", 1)[-1].split(".")[-1] for name in files}
    assert {"sqlite", "json", "jsonl"} <= kinds, sorted(files)
    assert any(name.startswith("cache/graphify/") for name in files), sorted(files)
    print(f"\n[secrets-derived-state] {len(PLANTED)} shapes planted in body, front matter, "
          f"title and memory_id; {len(files)} state files "
          f"({sum(map(len, files.values())) // 1024} KB) searched", file=sys.stderr)
    return files, lexical


@pytest.mark.parametrize("shape", list(PLANTED))
def test_no_planted_value_is_in_any_file_of_the_state_folder(derived, shape):
    files, _ = derived
    value = PLANTED[shape][1].encode("utf-8")
    holding = [name for name, data in files.items() if value in data]
    assert holding == [], (shape, holding)


@pytest.mark.parametrize("shape", list(PLANTED))
def test_searching_for_a_planted_value_finds_no_text(derived, shape):
    _, lexical = derived
    assert lexical[shape] == 0, shape
