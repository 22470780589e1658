"""memory_write and memory_edit through the MCP SDK client against the real `ai-memory serve`:
read-your-writes, conflicts, concurrent agents, refusals, duplicates, read-only, git commits."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from textwrap import dedent

import anyio
import jsonschema
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation

from root_snapshot import snapshot

from memory.adapters.statefiles import FileContentKeys

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
WRITE_TOOLS = {"memory_write", "memory_edit"}
RETRIES = "Repos/payments-api/Notes/Webhook Retries.md"
NOTES = {
    RETRIES: """\
        ---
        memory_id: pay-webhook-retries
        title: Webhook retries
        ---
        # Webhook retries

        The payment webhook is retried three times with exponential backoff.
        Each retry waits twice as long as the previous one, starting at 2 seconds.
        The provider drops deliveries that are not acknowledged within 30 seconds.
        """,
    "Repos/payments-api/Notes/Refunds.md": """\
        ---
        memory_id: pay-refunds
        title: Refunds
        tags: [refunds]
        ---
        # Refunds

        A refund is queued, then sent to the provider by the refund worker within a minute.
        """,
    "Decisions/Logging.md": """\
        # Logging

        All services log JSON lines to stdout, one event per line.
        """,
}


def make_root(base: Path) -> Path:
    root = base / "memory"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(dedent(text), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "memory", "refresh", "--root", str(root)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, **OFFLINE})
    assert done.returncode == 0, done.stderr[-3000:]
    return root


@asynccontextmanager
async def serving(root: Path, errlog: Path, *flags: str, client: str = "capture-test"):
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "memory", "serve", "--root", str(root), *flags],
                                   env={**os.environ, **OFFLINE})
    with errlog.open("a") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            info = Implementation(name=client, version="1.0")
            async with ClientSession(read, write, client_info=info) as session:
                with anyio.fail_after(60):
                    await session.initialize()
                    tools = {t.name: t for t in (await session.list_tools()).tools}
                yield Agent(session, tools)


class Agent:
    def __init__(self, session: ClientSession, tools: dict):
        self.session, self.tools = session, tools

    async def call(self, name: str, **arguments):
        with anyio.fail_after(180):
            return await self.session.call_tool(name, arguments)

    async def ok(self, name: str, **arguments) -> dict:
        result = await self.call(name, **arguments)
        assert not result.is_error, result.content[0].text
        jsonschema.Draft202012Validator(self.tools[name].output_schema).validate(
            result.structured_content)
        return result.structured_content

    async def refused(self, name: str, **arguments) -> str:
        result = await self.call(name, **arguments)
        assert result.is_error, result.structured_content
        return result.content[0].text


def file_hash(path: Path) -> str:
    """The note's content_hash: keyed with the root's state folder key, not a plain sha256."""
    root = next(p for p in path.parents if (p / ".ai-memory").is_dir())
    keyed = FileContentKeys(root / ".ai-memory").key().hash(path.read_bytes())
    assert keyed != hashlib.sha256(path.read_bytes()).hexdigest()
    return keyed


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return make_root(tmp_path_factory.mktemp("capture"))


@pytest.fixture(scope="module")
def errlog(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("logs") / "serve.stderr"


@pytest.fixture(scope="module")
async def agent(root, errlog):
    async with serving(root, errlog, client="claude-code") as agent:
        yield agent


@pytest.mark.anyio
async def test_the_write_tools_are_listed_as_writing_and_strict(agent):
    assert WRITE_TOOLS <= set(agent.tools)
    for name in WRITE_TOOLS:
        tool = agent.tools[name]
        hints = tool.annotations
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint,
                hints.open_world_hint) == (False, False, False, False)
        assert tool.input_schema["additionalProperties"] is False
        assert all(p.get("description") for p in tool.input_schema["properties"].values())
        assert tool.output_schema["properties"]["content_hash"]["type"] == "string"
    write = agent.tools["memory_write"].input_schema
    assert write["required"] == ["title", "body"]
    assert write["properties"]["body"]["maxLength"] == 256 * 1024
    assert "memory_edit" in agent.tools["memory_write"].description
    health = await agent.call("memory_health")
    assert health.structured_content["writes"] == {"enabled": True, "git_commit": False}
    assert "writes: on" in health.content[0].text


@pytest.mark.anyio
async def test_a_write_lands_in_its_repository_and_the_next_search_finds_it(agent, root):
    history = root / ".ai-memory" / "refresh-history.jsonl"
    records = len(history.read_text().splitlines())
    written = await agent.call(
        "memory_write", title="Idempotency keys for charges", repository="payments-api",
        tags=["payments"], related=["Webhook retries"],
        body="# Idempotency keys for charges\n\nEvery charge carries a zanzibar ledger key; "
             "the provider ignores a repeated key for 24 hours.\n")
    assert not written.is_error, written.content[0].text
    result = written.structured_content
    path = root / result["path"]
    assert result["path"] == "Repos/payments-api/Notes/idempotency-keys-for-charges.md"
    assert result["indexed"] is True and result["content_hash"] == file_hash(path)
    assert result["memory_id"] == "payments-api-idempotency-keys-for-charges"
    assert "agent: claude-code" in path.read_text() and "[[pay-webhook-retries]]" in \
        path.read_text()
    text = written.content[0].text
    for fact in (result["path"], result["memory_id"], result["content_hash"], "indexed: yes",
                 result["items"][0]["citation"]):
        assert fact in text
    packet = await agent.ok("memory_search", query="zanzibar ledger key",
                            repository="payments-api")
    assert packet["items"][0]["path"] == result["path"]
    await anyio.sleep(3)  # the watcher sees the file, already indexed as it is
    again = await agent.ok("memory_search", query="zanzibar ledger key")
    assert again["generation"] == packet["generation"]
    assert len(history.read_text().splitlines()) == records + 1


@pytest.mark.anyio
async def test_an_edit_on_the_current_hash_is_searchable_at_once(agent, root):
    read = await agent.ok("memory_get", identity="pay-refunds")
    edited = await agent.ok("memory_edit", identity="pay-refunds",
                            content_hash=read["content_hash"], operation="append",
                            heading="## Operations",
                            text="The quokka reconciler retries stuck refunds nightly.")
    path = root / "Repos/payments-api/Notes/Refunds.md"
    assert edited["indexed"] is True and edited["content_hash"] == file_hash(path)
    assert "## Operations\nThe quokka reconciler" in path.read_text()
    packet = await agent.ok("memory_search", query="quokka reconciler stuck refunds")
    assert packet["items"][0]["path"] == "Repos/payments-api/Notes/Refunds.md"
    assert "quokka" in packet["items"][0]["text"]


@pytest.mark.anyio
async def test_a_persons_edit_after_the_read_refuses_the_edit_and_stays(agent, root):
    read = await agent.ok("memory_get", identity="Decisions/Logging.md")
    path = root / "Decisions/Logging.md"
    person = path.read_text() + "\nA person added this line in an editor.\n"
    path.write_text(person)
    message = await agent.refused("memory_edit", identity="Decisions/Logging.md",
                                  content_hash=read["content_hash"], operation="archive")
    assert message.startswith("conflict: ") and file_hash(path) in message
    assert path.read_text() == person


@pytest.mark.anyio
async def test_the_printed_hash_edits_twice_in_a_row_and_a_reused_one_is_ones_own(
        agent, root, errlog):
    shown = await agent.call("memory_get", identity="pay-webhook-retries")
    read = re.search(r"content_hash ([0-9a-f]{12})\)", shown.content[0].text).group(1)
    first = await agent.ok("memory_edit", identity="pay-webhook-retries", content_hash=read,
                           operation="append", text="First own edit.")
    second = await agent.ok("memory_edit", identity="pay-webhook-retries",
                            content_hash=first["content_hash"], operation="append",
                            text="Second own edit.")
    path = root / RETRIES
    assert path.read_text().endswith("First own edit.\nSecond own edit.\n")
    assert second["content_hash"] == file_hash(path)
    own = await agent.refused("memory_edit", identity="pay-webhook-retries",
                              content_hash=read, operation="archive")
    assert "your own earlier edit" in own and second["content_hash"] in own
    async with serving(root, errlog, client="opencode") as other:
        theirs = await other.refused("memory_edit", identity="pay-webhook-retries",
                                     content_hash=read, operation="archive")
    assert "someone else edited it" in theirs and "your own" not in theirs
    assert path.read_text().endswith("Second own edit.\n")


SECRET = "AKIAABCDEFGHIJKLMNOP"
REFUSED = [
    ("memory_write", {"title": "AWS access", "repository": "payments-api",
                      "body": f"The deploy key is {SECRET} for now."}, "secret refused: "),
    ("memory_write", {"title": "Escape", "path": "../outside.md", "body": "x"},
     "inside the memory root"),
    ("memory_write", {"title": "Console", "path": "Decisions/CON.md", "body": "x"}, "reserved"),
    ("memory_write", {"title": "Huge", "repository": "payments-api",
                      "body": "é" * (200 * 1024)}, "256 KB"),
    ("memory_edit", {"identity": "pay-webhook-retries", "content_hash": "0" * 64,
                     "operation": "set_fields", "fields": {"colour": "red"}},
     "unknown front matter field 'colour'"),
    ("memory_write", {"title": "Typo", "repository": "payments-api", "body": "x",
                      "alow_duplicate": True}, "alow_duplicate"),
]


@pytest.mark.anyio
@pytest.mark.parametrize("name,arguments,expected", REFUSED,
                         ids=["secret", "escape", "bad-name", "oversized", "unknown-field",
                              "unknown-argument"])
async def test_bad_writes_are_refused_with_the_root_unchanged(agent, root, name, arguments,
                                                              expected):
    before = snapshot(root)
    message = await agent.refused(name, **arguments)
    assert expected in message and SECRET not in message and "Traceback" not in message
    assert snapshot(root) == before


@pytest.mark.anyio
async def test_a_second_note_on_the_same_subject_is_refused_unless_allowed(agent, root):
    restated = dict(title="Retrying payment webhooks", repository="payments-api",
                    body="Payment webhooks get three retries with exponential backoff: the "
                         "first wait is 2 seconds and each retry waits twice as long. The "
                         "provider drops deliveries not acknowledged within 30 seconds.")
    before = snapshot(root)
    message = await agent.refused("memory_write", **restated)
    assert message.startswith("duplicate: ") and RETRIES in message and "similar text" in message
    assert snapshot(root) == before
    allowed = await agent.ok("memory_write", allow_duplicate=True, **restated)
    assert (root / allowed["path"]).is_file() and allowed["indexed"] is True


@pytest.mark.anyio
async def test_four_agents_appending_with_the_hash_they_read_lose_nothing(root, tmp_path):
    target = root / "Decisions/Logging.md"
    outcomes: dict[str, list[str]] = {"accepted": [], "conflict": [], "other": []}

    async def agent_loop(number: int) -> None:
        async with serving(root, tmp_path / "serve.stderr", client=f"agent-{number}") as a:
            for turn in range(5):
                line = f"agent {number} turn {turn}"
                read = await a.ok("memory_get", identity="Decisions/Logging.md")
                result = await a.call("memory_edit", identity="Decisions/Logging.md",
                                      content_hash=read["content_hash"], operation="append",
                                      text=line)
                text = result.content[0].text
                kind = "accepted" if not result.is_error else \
                    "conflict" if text.startswith("conflict: ") else "other"
                outcomes[kind].append(line if kind != "other" else text)

    async with anyio.create_task_group() as group:
        for number in range(4):
            group.start_soon(agent_loop, number)
    lines = [x for x in target.read_text().splitlines() if x.startswith("agent ")]
    assert outcomes["other"] == []
    assert len(outcomes["accepted"]) + len(outcomes["conflict"]) == 20
    assert outcomes["accepted"] and sorted(lines) == sorted(outcomes["accepted"])


@pytest.mark.anyio
async def test_read_only_lists_no_write_tools(root, errlog):
    async with serving(root, errlog, "--read-only") as agent:
        assert len(agent.tools) == 8 and not WRITE_TOOLS & set(agent.tools)
        with pytest.raises(MCPError, match="unknown tool 'memory_write'"):
            await agent.call("memory_write", title="x", body="x", repository="api")
        health = await agent.call("memory_health")
        assert health.structured_content["writes"]["enabled"] is False
        assert "writes: off" in health.content[0].text


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.anyio
async def test_git_commit_makes_each_write_one_commit_authored_as_the_client(tmp_path):
    root = make_root(tmp_path)
    git(root, "init", "-q")
    git(root, "-c", "user.name=person", "-c", "user.email=p@example.com", "add", ".")
    git(root, "-c", "user.name=person", "-c", "user.email=p@example.com", "commit", "-qm",
        "notes")
    async with serving(root, tmp_path / "serve.stderr", "--git-commit",
                       client="codex") as agent:
        written = await agent.ok("memory_write", title="Card tokens", repository="payments-api",
                                 body="Card numbers never reach our servers: the provider "
                                      "gives us a token per card.")
        read = await agent.ok("memory_get", identity=written["memory_id"])
        edited = await agent.ok("memory_edit", identity=written["memory_id"],
                                content_hash=read["content_hash"], operation="append",
                                text="Tokens are scoped to one merchant account.")
        health = await agent.call("memory_health")
        assert health.structured_content["writes"] == {"enabled": True, "git_commit": True}
    log = git(root, "log", "--format=%an|%s|%H").splitlines()
    assert [entry.split("|")[:2] for entry in log[:2]] == [
        ["codex", f"memory_edit append: {written['path']}"],
        ["codex", "memory_write: Card tokens"]]
    assert log[0].split("|")[2] == edited["commit"] and written["commit"]
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == [written["path"]]
    assert git(root, "status", "--porcelain", "--", written["path"]) == ""
