"""A read token cannot recover a redacted secret by guessing it against a hash it was given.

The note holds a weak password that redaction replaces. The attacker knows everything but
the password (the redacted note shows every other byte) and has a 1000-word dictionary
that contains it: for each word it rebuilds the file and compares its digests with every
hash-looking value that `serve --http` sent a read token (search, get, explain,
neighbours, health, resources).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from http_harness import cli, http_server, mcp_session

from memory.domain.note_text import ContentKey
from memory.entrypoints.container import build
from memory.entrypoints.settings import Settings

WORDS = ("sunshine", "dragon", "monkey", "shadow", "master", "qwerty", "letmein", "football",
         "baseball", "welcome", "princess", "charlie", "donald", "summer", "winter", "autumn",
         "spring", "tigger", "hunter", "ranger", "thomas", "robert", "soccer", "batman",
         "killer", "hockey", "george", "jordan", "pepper", "ginger", "cookie", "silver",
         "orange", "banana", "cheese", "purple", "yellow", "matrix", "falcon", "phoenix")
DICTIONARY = [f"{word}{n:02d}" for word in WORDS for n in range(25)]  # 1000 guesses
PASSWORD = DICTIONARY[617]
NOTE = """\
---
memory_id: deploy-notes
title: Deploy notes
repository: api
---
# Deploy notes

The deploy user is ci-bot; it logs in to the staging database.
password: {password}
Rotate it every quarter.
"""
HEX = re.compile(r"[0-9a-fA-F]{12,}")


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


def file_bytes(password: str) -> bytes:
    return NOTE.format(password=password).encode("utf-8")


def digests(raw: bytes) -> list[str]:
    """What a server might have sent of the file: plain digests of its bytes or text."""
    body = raw.split(b"---\n", 2)[-1]
    blob = b"blob %d\x00" % len(raw) + raw  # a git object id
    return [hashlib.new(name, data).hexdigest()
            for data in (raw, body, blob, raw.rstrip(b"\n"))
            for name in ("sha256", "sha1", "md5", "sha512", "blake2b", "sha3_256")]


def guessed(received: set[str]) -> list[str]:
    """The dictionary words one of whose file digests a received value is (a prefix of)."""
    found = []
    for word in DICTIONARY:
        for digest in digests(file_bytes(word)):
            if any(digest.startswith(value.lower()) for value in received):
                found.append(word)
                break
    return found


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("oracle") / "memory"
    (base / "Ops").mkdir(parents=True)
    (base / "Ops/deploy.md").write_bytes(file_bytes(PASSWORD))
    (base / "Ops/staging.md").write_text(
        "# Staging\n\nThe staging database is used by [[Deploy notes]].\n", encoding="utf-8")
    done = cli("refresh", "--mode", "full", "--root", str(base))
    assert done.returncode == 0, done.stderr[-3000:]
    return base


@pytest.fixture(scope="module")
def reader(root) -> str:
    done = cli("token", "create", "--root", str(root), "--name", "reader", "--scope", "read")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


async def everything_a_reader_gets(url: str, token: str) -> str:
    """Every answer a read token can get about the note, as one JSON text."""
    answers = []
    async with mcp_session(url, headers={"Authorization": f"Bearer {token}"}) as session:
        for name, arguments in [
                ("memory_search", {"query": "staging database deploy user password"}),
                ("memory_get", {"identity": "deploy-notes"}),
                ("memory_get", {"identity": "Ops/deploy.md", "start_line": 9, "end_line": 9}),
                ("memory_explain", {"query": "deploy user password",
                                    "identity": "deploy-notes"}),
                ("memory_neighbors", {"identity": "Ops/staging.md"}),
                ("memory_health", {})]:
            result = await session.call_tool(name, arguments)
            assert not result.is_error, (name, result.content)
            answers.append(result.model_dump(mode="json"))
        listed = await session.list_resources()
        answers.append(listed.model_dump(mode="json"))
        for resource in listed.resources:
            answers.append((await session.read_resource(resource.uri)).model_dump(mode="json"))
        for template in (await session.list_resource_templates()).resource_templates:
            answers.append(template.model_dump(mode="json"))
    return json.dumps(answers)


@pytest.mark.anyio
async def test_no_hash_a_read_token_receives_lets_a_dictionary_recover_the_password(
        root, reader, tmp_path):
    with http_server(root, tmp_path / "serve.stderr", "--no-watch", "--auth", "tokens") as srv:
        text = await everything_a_reader_gets(srv.url, reader)
    assert PASSWORD not in text and "[REDACTED:password-assignment]" in text
    received = set(HEX.findall(text))
    got = json.loads(text)[1]["structured_content"]
    assert got["content_hash"] in received  # the edit hash was sent: the attack has a target
    assert guessed(received) == []


def test_the_dictionary_attack_finds_the_password_in_a_plain_file_hash():
    """The attack is sound: had the plain sha256 been sent, it would have found the word."""
    assert guessed({hashlib.sha256(file_bytes(PASSWORD)).hexdigest()}) == [PASSWORD]
    assert guessed({hashlib.sha256(file_bytes(PASSWORD)).hexdigest()[:12]}) == [PASSWORD]


def test_an_index_holding_hashes_of_another_key_is_rebuilt_with_this_one(tmp_path):
    """The index keeps no hash this key did not make: one built with another key (or, before
    hashes were keyed, plain sha256 digests) is rebuilt on the next refresh, even when no
    note changed, instead of keeping the old values for every unchanged note."""
    root = tmp_path / "memory"
    (root / "Ops").mkdir(parents=True)
    (root / "Ops/deploy.md").write_bytes(file_bytes(PASSWORD))
    (root / "Ops/other.md").write_text("# Other\n\nNothing secret.\n", encoding="utf-8")
    done = cli("refresh", "--root", str(root))
    assert done.returncode == 0, done.stderr[-3000:]
    (root / ".ai-memory/content.key").write_text("ab" * 32 + "\n", encoding="ascii")
    key = ContentKey(bytes.fromhex("ab" * 32))
    done = cli("refresh", "--root", str(root))
    assert done.returncode == 0, done.stderr[-3000:]
    app = build(Settings.resolve(str(root), watch=False))
    manifest = app.gateways.index().current().manifest
    assert {p: e.content_hash for p, e in manifest.items()} == {
        p: key.hash((root / p).read_bytes()) for p in ("Ops/deploy.md", "Ops/other.md")}
