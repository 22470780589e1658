"""Entries for the shared daemon (`--shared`) and for a server elsewhere (`--url`), in real
files: each client's own format, switching forms in place, and no token ever written."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from test_clients_install import (  # noqa: F401 (layout and linux are fixtures)
    COMMAND, EXISTING, OTHER_SERVER, Layout, by_path, container_of, layout, linux, load,
    our_entry,
)

from memory.entrypoints.clients import CLIENT_NAMES

URL = "https://memory.example.com/mcp"
VAR = "AI_MEMORY_TOKEN"
SECRET = "aim_0123456789abcdef_s3cr3t-value-never-written"
WITH_TOKEN = {
    "codex": {"url": URL, "bearer_token_env_var": VAR},
    "claude-code": {"type": "http", "url": URL,
                    "headers": {"Authorization": "Bearer ${AI_MEMORY_TOKEN}"}},
    "claude-desktop": {"command": COMMAND,
                       "args": ["connect", "--url", URL, "--token-env", VAR]},
    "copilot": {"type": "http", "url": URL, "tools": ["*"],
                "headers": {"Authorization": "Bearer ${AI_MEMORY_TOKEN}"}},
    "opencode": {"type": "remote", "url": URL, "enabled": True, "oauth": False,
                 "headers": {"Authorization": "Bearer {env:AI_MEMORY_TOKEN}"}},
    "vscode": {"type": "http", "url": URL,
               "headers": {"Authorization": "Bearer ${env:AI_MEMORY_TOKEN}"}},
}
WITHOUT_TOKEN = {
    "codex": {"url": URL},
    "claude-code": {"type": "http", "url": URL},
    "claude-desktop": {"command": COMMAND, "args": ["connect", "--url", URL]},
    "copilot": {"type": "http", "url": URL, "tools": ["*"]},
    "opencode": {"type": "remote", "url": URL, "enabled": True},
    "vscode": {"type": "http", "url": URL},
}
FORMS = {
    "serve": {},
    "shared": {"shared": True},
    "url": {"url": URL, "token_env": VAR},
    "url-no-token": {"url": URL},
}


def entry_after(tmp_path, client: str, form: str) -> dict:
    """What a fresh install of `form` writes for `client`: the reference for a switch."""
    fresh = Layout(Path(tempfile.mkdtemp(dir=tmp_path)), "linux")
    fresh.memory_root = tmp_path / "memory"
    fresh.run(clients=[client], **FORMS[form])
    return our_entry(client, load(fresh.config(client)))


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_a_url_entry_is_the_clients_own_http_form_naming_only_the_tokens_variable(layout,
                                                                                  client):
    layout.env = {**layout.env, VAR: SECRET}

    results = layout.run(clients=[client], url=URL, token_env=VAR)

    assert by_path(results)[layout.config(client)].action == "created"
    assert our_entry(client, load(layout.config(client))) == WITH_TOKEN[client]
    assert not any(SECRET.encode() in data for data in layout.snapshot().values())


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_a_url_without_a_token_gets_no_header_and_keeps_oauth_discovery(linux, client):
    linux.run(clients=[client], url=URL)

    assert our_entry(client, load(linux.config(client))) == WITHOUT_TOKEN[client]


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_shared_entries_start_the_bridge_to_the_roots_daemon(linux, client):
    linux.run(clients=[client], shared=True)

    entry = our_entry(client, load(linux.config(client)))
    launch = list(entry["command"]) if client == "opencode" else [entry["command"],
                                                                  *entry["args"]]
    assert launch == [COMMAND, "connect", "--root", str(linux.memory_root)]
    assert entry == entry_after(linux.home.parent, client, "shared")


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_switching_forms_in_place_leaves_no_key_of_the_other_and_uninstall_restores_bytes(
        linux, tmp_path, client):
    config = linux.config(client)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(EXISTING[client], encoding="utf-8")
    original = config.read_bytes()
    other = load(config)[container_of(client)][OTHER_SERVER[client]]

    for form in ("serve", "url", "shared", "url-no-token", "url", "serve"):
        result = by_path(linux.run(clients=[client], **FORMS[form]))[config]
        assert result.action in ("updated", "unchanged"), result.message
        servers = load(config)[container_of(client)]
        assert servers["ai-memory"] == entry_after(tmp_path, client, form), form
        assert servers[OTHER_SERVER[client]] == other

    assert by_path(linux.run(clients=[client], uninstall=True))[config].action == "removed"
    assert config.read_bytes() == original


def test_settings_the_user_added_to_a_url_entry_survive_a_second_run(linux):
    linux.run(clients=["codex", "copilot"], url=URL, token_env=VAR)
    codex, copilot = linux.config("codex"), linux.config("copilot")
    codex.write_text(codex.read_text() + "startup_timeout_sec = 30\n")
    copilot.write_text(copilot.read_text().replace('"*"', '"memory_search"'))

    results = linux.run(clients=["codex", "copilot"], url=URL, token_env=VAR)

    assert {by_path(results)[p].action for p in (codex, copilot)} == {"unchanged"}
    assert our_entry("codex", load(codex))["startup_timeout_sec"] == 30
    assert our_entry("copilot", load(copilot))["tools"] == ["memory_search"]


def test_a_second_url_run_changes_nothing_and_a_dry_run_writes_nothing(linux):
    plan = linux.run(url=URL, token_env=VAR, dry_run=True)
    assert linux.snapshot() == {}
    configs = {linux.config(c) for c in CLIENT_NAMES}
    assert all(URL in r.diff for r in plan if r.path in configs)

    linux.run(url=URL, token_env=VAR)
    before = linux.snapshot()

    assert {r.action for r in linux.run(url=URL, token_env=VAR)} == {"unchanged"}
    assert linux.snapshot() == before


def test_uninstall_removes_url_and_shared_entries_without_being_told_their_form(linux):
    linux.run(url=URL, token_env=VAR, name="team")
    linux.run(shared=True)

    linux.run(uninstall=True, name="team")
    assert all(list(load(linux.config(c))[container_of(c)]) == ["ai-memory"]
               for c in CLIENT_NAMES)
    results = linux.run(uninstall=True)

    assert {r.action for r in results} == {"removed"}
    assert all(not load(linux.config(c)).get(container_of(c))
               for c in CLIENT_NAMES if linux.config(c).exists())


def test_claude_desktop_is_told_it_gets_the_bridge_in_place_of_the_url(linux):
    results = by_path(linux.run(url=URL, token_env=VAR))

    assert "stdio bridge" in results[linux.config("claude-desktop")].message
    assert all("bridge" not in results[linux.config(c)].message
               for c in CLIENT_NAMES if c != "claude-desktop")


@pytest.mark.parametrize("options, message", [
    ({"url": "memory.example.com/mcp"}, "http:// or https://"),
    ({"url": "ftp://memory.example.com/mcp"}, "http:// or https://"),
    ({"url": f"https://bot:{SECRET}@memory.example.com/mcp"}, "--token-env"),
    ({"url": f"https://memory.example.com/mcp?token={SECRET}"}, "--token-env"),
    ({"url": URL, "token_env": SECRET}, "not the token itself"),
    ({"url": URL, "token_env": "AI-MEMORY-TOKEN"}, "name of an environment variable"),
    ({"url": URL, "token_env": "1TOKEN"}, "name of an environment variable"),
    ({"url": URL, "shared": True}, "exclude each other"),
    ({"token_env": VAR}, "needs --url|add --url"),
])
def test_a_bad_url_or_token_variable_is_refused_before_anything_is_written(linux, options,
                                                                           message):
    with pytest.raises(ValueError, match=message) as refused:
        linux.run(**options)

    assert SECRET not in str(refused.value)
    assert linux.snapshot() == {}
