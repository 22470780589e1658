"""Secrets disguised for the eye of a filter, not of a reader (zero-width and soft-hyphen
characters, fullwidth letters, Markdown emphasis, HTML references and tags, a value wrapped
over lines, key armour in lower case, a key body without armour), on the real stack over MCP: in a note on disk none is
indexed nor served by search or get; memory_write and memory_edit refuse each, the root left
as it was."""

from __future__ import annotations

import sys

import anyio.from_thread
import pytest
from live_root import LiveRoot
from mcp import Client
from root_snapshot import snapshot

from memory.entrypoints.container import build
from memory.entrypoints.mcp_server import build_server
from memory.entrypoints.settings import Settings

GH = "ghp_" + "Qw7" * 12
EC_KEY = ["MHcCAQEEIDRZIsS2jlJFKzhPZL5cAbESo20g5pfKjlfeSfsne8dMoAoGCCqGSM49",
          "AwEHoUQDQgAE/U0yMRgPxfLvkh38yvPpx2BxgYfAWARKbEkFda44d0qT99UtLCiD",
          "KeiJ51KdRsSyt4JC4vxCQUQ5liMvBcrObw=="]
# evasion -> (the lines a note holds, pieces of the secret that must never come back)
EVASIONS = {
    "zero-width": ([f"The CI token is ghp_\u200b{GH[4:12]}\u200d{GH[12:]} for now."],
                   [GH[4:12], GH[12:24]]),
    "soft-hyphen": (["Deploy with AKIA\u00adQ7EV\u00adASION7REALLY today."], ["Q7EV", "ASION7"]),
    "fullwidth": (["The key ＡＫＩＡＱ７ＦＵＬＬＷＩＤＴＨ９ＺＺＺＺ is live."],
                  ["ＦＵＬＬＷＩＤＴＨ", "FULLWIDTH"]),
    "emphasis": ([f"CI uses **ghp_**{GH[4:]} (prod)", "Key _AKIA_QEMPHASIS7XYZW89 (old)"],
                 [GH[4:24], "QEMPHASIS7"]),
    "wrapped": (["The release token ghp_Qw7Qw7Qw7Qw7", "  Qw7Qw7Qw7Qw7Qw7Qw7Qw7Qw7 expires soon."],
                ["Qw7Qw7Qw7Qw7Qw7Qw7Qw7Qw7"]),
    "lower-case-armour": (["-----begin ec private key-----", *EC_KEY,
                           "-----end ec private key-----"], [row[:24] for row in EC_KEY]),
    "no-armour": (["The signing key body:", *EC_KEY, "Rotate it yearly."],
                  [row[:24] for row in EC_KEY]),
    "label": (["pass\u200bword: Zebra8Quokka3Walrus"], ["Zebra8Quokka3Walrus"]),
    "html": ([f"CI uses gh&#112;_<b></b>{GH[4:20]}&#8203;{GH[20:]} today."],
             [GH[4:20], GH[20:]]),
}
CLEAN = "Repos/ops/Evasions/clean.md"


def note(name: str) -> str:
    lines, _ = EVASIONS[name]
    return "\n".join([f"# Evasion {name}", "", "The ops runbook says:", *lines, "",
                      f"Ask the {name} owner before rotating.", ""])


def pieces(text: str) -> list[str]:
    return [piece for _, gone in EVASIONS.values() for piece in gone if piece in text]


@pytest.fixture(scope="module")
def stack(tmp_path_factory, embedder):
    notes = {f"Repos/ops/Evasions/{name}.md": note(name) for name in EVASIONS}
    notes[CLEAN] = "# Clean\n\nThe deploy rotates keys quarterly.\n"
    root = LiveRoot.create(tmp_path_factory.mktemp("evasions") / "memory", notes)
    app = build(Settings.resolve(str(root.path), watch=False))
    from dependency_injector import providers
    app.gateways.embedder.override(providers.Object(embedder))
    service, capture = app.use_cases.service(), app.use_cases.capture()
    assert service.refresh("full").ok
    server = build_server(lambda: service, capture=lambda: capture)
    with anyio.from_thread.start_blocking_portal("asyncio") as portal:
        with portal.wrap_async_context_manager(Client(server)) as client:
            yield root, lambda name, arguments: portal.call(client.call_tool, name, arguments)
    print(f"\n[secret-evasions] {len(EVASIONS)} evasions in notes, writes and edits",
          file=sys.stderr)


def answer(result) -> str:
    return str(result.structured_content) + " ".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.parametrize("name", sorted(EVASIONS))
def test_a_disguised_secret_in_a_note_is_never_indexed_nor_served(stack, name):
    root, call = stack
    path = f"Repos/ops/Evasions/{name}.md"
    got = call("memory_get", {"identity": path})
    assert not got.is_error and pieces(answer(got)) == []
    assert got.structured_content["redacted_lines"]  # a person is told where the secret was
    for query in (f"{name} ops runbook", *EVASIONS[name][1]):
        found = call("memory_search", {"query": query, "limit": 20, "status": "any"})
        assert not found.is_error and pieces(answer(found).replace(query, "")) == [], query
    state = b"".join(p.read_bytes() for p in root.state.rglob("*") if p.is_file())
    assert [piece for piece in EVASIONS[name][1] if piece.encode() in state] == []


@pytest.mark.parametrize("name", sorted(EVASIONS))
def test_memory_write_refuses_a_disguised_secret(stack, name):
    root, call = stack
    before = snapshot(root.path)
    body = "\n".join(["# Notes", "", *EVASIONS[name][0], ""])
    result = call("memory_write", {"title": f"Write {name}", "repository": "ops", "body": body})
    assert result.is_error and "secret refused" in answer(result), answer(result)
    assert pieces(answer(result)) == [] and "Traceback" not in answer(result)
    assert snapshot(root.path) == before


@pytest.mark.parametrize("name", sorted(EVASIONS))
def test_memory_edit_refuses_a_disguised_secret(stack, name):
    root, call = stack
    read = call("memory_get", {"identity": CLEAN}).structured_content
    before = snapshot(root.path)
    result = call("memory_edit", {"identity": CLEAN, "content_hash": read["content_hash"],
                                  "operation": "append", "text": "\n".join(EVASIONS[name][0])})
    assert result.is_error and "secret refused" in answer(result), answer(result)
    assert pieces(answer(result)) == [] and "Traceback" not in answer(result)
    assert snapshot(root.path) == before
