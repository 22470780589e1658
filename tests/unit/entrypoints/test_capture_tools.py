"""memory_write and memory_edit in process: schemas, text, provenance, errors at the edge."""

import jsonschema
import pytest
from capture_fakes import FakeIndex
from mcp import Client
from mcp_types import Implementation

from memory.adapters.inmemory import FixedClock
from memory.adapters.inmemory.note_writer import InMemoryNoteWriter
from memory.adapters.inmemory.write_receipts import InMemoryWriteReceipts
from memory.application.capture.service import CaptureService
from memory.domain.capture_errors import DuplicateCandidate
from memory.adapters.inmemory.note_writer import TEST_KEY

file_hash = TEST_KEY.hash  # the fake writer's key
from memory.entrypoints.mcp_server import INSTRUCTIONS, WRITE_INSTRUCTIONS, build_server

OLD = b"---\nmemory_id: api-retry\ntitle: Retry keys\n---\n# Retry keys\n\nPer attempt.\n"
PATH = "Repos/api/Notes/retry.md"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def root():
    return InMemoryNoteWriter({PATH: OLD})


@pytest.fixture
def index(root):
    index = FakeIndex(root)
    index.index_all()
    return index


@pytest.fixture
def server(root, index):
    capture = CaptureService(writer=root, catalogue=index, similar=index, indexer=index,
                             evidence=index, clock=FixedClock("2026-01-15T12:00:00Z"),
                             receipts=InMemoryWriteReceipts())
    return build_server(lambda: None, capture=lambda: capture)


def client(server, name="opencode"):
    return Client(server, client_info=Implementation(name=name, version="1"))


async def tools_of(server) -> dict:
    async with client(server) as c:
        return {t.name: t for t in (await c.list_tools()).tools}


@pytest.mark.anyio
async def test_the_write_tools_come_only_with_a_capture_service(server):
    async with Client(build_server(lambda: None)) as c:
        assert c.instructions == INSTRUCTIONS
        assert not {"memory_write", "memory_edit"} & {t.name for t in (await c.list_tools()).tools}
    async with client(server) as c:
        assert c.instructions == INSTRUCTIONS + WRITE_INSTRUCTIONS
    tools = await tools_of(server)
    edit = tools["memory_edit"].input_schema
    assert edit["additionalProperties"] is False and edit["required"] == [
        "identity", "content_hash", "operation"]
    hashed = edit["properties"]["content_hash"]
    assert (hashed["minLength"], hashed["maxLength"]) == (12, 64)  # get prints 12
    assert "set_fields" in edit["properties"]["operation"]["enum"]
    assert "review_after" in edit["properties"]["fields"]["propertyNames"]["enum"]
    assert tools["memory_write"].input_schema["properties"]["kind"]["anyOf"][0]["enum"][0] == \
        "decision"


@pytest.mark.anyio
async def test_a_write_answers_structured_and_in_text_and_names_the_client(server, root):
    tools = await tools_of(server)
    async with client(server, "claude-desktop") as c:
        result = await c.call_tool("memory_write", {
            "title": "Idempotent retries", "repository": "api", "tags": ["payments"],
            "body": "# Idempotent retries\n\nReuse the key on every retry.\n"})
    assert not result.is_error, result.content
    data = result.structured_content
    jsonschema.Draft202012Validator(tools["memory_write"].output_schema).validate(data)
    assert data["path"] == "Repos/api/Notes/idempotent-retries.md" and data["indexed"]
    assert data["content_hash"] == file_hash(root.files[data["path"]])
    assert b"agent: claude-desktop" in root.files[data["path"]]
    text = result.content[0].text
    assert f"written: {data['path']} (memory_id api-idempotent-retries)" in text
    assert f"content_hash: {data['content_hash']}" in text and "indexed: yes" in text
    assert f"1. {data['items'][0]['citation']}" in text


@pytest.mark.anyio
async def test_an_edit_answers_the_new_hash(server, root):
    tools = await tools_of(server)
    async with client(server) as c:
        result = await c.call_tool("memory_edit", {
            "identity": "api-retry", "content_hash": file_hash(OLD), "operation": "append",
            "text": "Now per charge.", "heading": "## Since 2026"})
    data = result.structured_content
    jsonschema.Draft202012Validator(tools["memory_edit"].output_schema).validate(data)
    assert data["content_hash"] == file_hash(root.files[PATH]) and data["changed"]
    assert root.files[PATH].endswith(b"## Since 2026\nNow per charge.\n")
    assert f"edited: {PATH}" in result.content[0].text


async def refused(server, name, arguments) -> str:
    async with client(server) as c:
        result = await c.call_tool(name, arguments)
    assert result.is_error
    text = result.content[0].text
    assert "\n" not in text and "Traceback" not in text
    return text


@pytest.mark.anyio
async def test_errors_are_one_line_with_what_the_agent_needs(server, root, index):
    root.files[PATH] = OLD + b"A person's line.\n"
    conflict = await refused(server, "memory_edit", {
        "identity": PATH, "content_hash": file_hash(OLD), "operation": "archive"})
    assert conflict.startswith("conflict: ") and file_hash(root.files[PATH]) in conflict
    index.near = [DuplicateCandidate(memory_id="api-retry", path=PATH, title="Retry keys",
                                     reason="similar text (semantic 0.91)")]
    duplicate = await refused(server, "memory_write", {
        "title": "Retries", "body": "Reuse keys.", "repository": "api"})
    assert duplicate.startswith("duplicate: ") and f"{PATH} ('Retry keys': similar" in duplicate
    secret = await refused(server, "memory_write", {
        "title": "Deploy", "body": "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "kind": "tool"})
    assert secret.startswith("secret refused: ") and "ghp_" not in secret
    assert "line 1" in secret
    unknown = await refused(server, "memory_write", {"title": "x", "body": "x", "repo": "api"})
    assert "repo" in unknown and unknown.startswith("invalid arguments for memory_write")
    mixed = await refused(server, "memory_edit", {
        "identity": PATH, "content_hash": "0" * 64, "operation": "archive", "text": "x"})
    assert mixed == "invalid request: archive does not take text"
    assert root.files == {PATH: OLD + b"A person's line.\n"}


async def appended(server, name, content_hash, line):
    async with client(server, name) as c:
        return await c.call_tool("memory_edit", {"identity": "api-retry", "operation": "append",
                                                 "content_hash": content_hash, "text": line})


@pytest.mark.anyio
async def test_two_edits_in_a_row_each_on_the_returned_hash_both_land(server, root):
    first = await appended(server, "opencode", file_hash(OLD)[:12], "First.")
    assert not first.is_error, first.content
    second = await appended(server, "opencode", first.structured_content["content_hash"],
                            "Second.")
    assert not second.is_error, second.content
    assert root.files[PATH].endswith(b"Per attempt.\nFirst.\nSecond.\n")


@pytest.mark.anyio
async def test_a_conflict_tells_the_callers_own_edit_from_another_clients(server, root):
    read = file_hash(OLD)
    first = await appended(server, "opencode", read, "First.")
    current = first.structured_content["content_hash"]
    own = await refused(server, "memory_edit", {"identity": "api-retry", "operation": "archive",
                                                "content_hash": read})
    assert own.startswith("conflict: ") and "your own earlier edit" in own and current in own
    theirs = await refused_as(server, "claude-code", {"identity": "api-retry",
                                                      "operation": "archive",
                                                      "content_hash": read})
    assert "someone else edited it" in theirs and "your own" not in theirs and current in theirs


async def refused_as(server, name, arguments) -> str:
    async with client(server, name) as c:
        result = await c.call_tool("memory_edit", arguments)
    assert result.is_error
    return result.content[0].text


@pytest.mark.anyio
@pytest.mark.parametrize("content_hash, says", [
    ("abc123", "at least 12"), ("g" * 12, "other than hex digits"),
    ("a" * 65, "at most 64")])
async def test_a_hash_too_short_or_not_hex_is_a_clear_error(server, root, content_hash, says):
    text = await refused(server, "memory_edit", {"identity": "api-retry", "operation": "archive",
                                                 "content_hash": content_hash})
    assert says in text and root.files[PATH] == OLD
