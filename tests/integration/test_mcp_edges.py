"""The real server (`ai-memory serve` over stdio, real SQLite, MiniLM and Graphify) at its edges:
megabyte lines stay within the budgets, unknown argument keys are refused, path prefixes match
whole folders, graph tools keep to the scope, and questions memory cannot answer say so."""

from __future__ import annotations

import base64
import os
import random
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
BUDGET = 24_000  # ContextConfig.budget_chars
READ_CHARS = 100_000  # domain.reading.MAX_READ_CHARS
BLOB = base64.b64encode(random.Random(1).randbytes(1_100_000)).decode()  # 1.47 MB
HUGE = "x" * 1_900_000

NOTES = {
    "Runbooks/Deploy checklist.md": f"""\
        # Deploy checklist

        Tag the release, build the image, then ship it.
        deploy checklist attachment: {BLOB}
        Roll back with the previous tag.
        """,
    "Runbooks/Huge line.md": f"# Huge line\n\n{HUGE}\n\nThe end.\n",
    "Inbox/Empty.md": "",
    "Runbooks/Credentials.md": """\
        # Credential rotation

        The production database password lives in Vault at secret/prod/db.
        It rotates every 90 days; the on-call engineer rotates it.
        """,
    "Repos/a/Notes/Retry.md": """\
        ---
        memory_id: a-retry
        related: ["[[Legacy retry]]"]
        ---
        # Retry

        Repository a retries the webhook three times.
        """,
    "Repos/a-legacy/Notes/Retry.md": """\
        ---
        memory_id: legacy-retry
        title: Legacy retry
        ---
        # Legacy retry

        The legacy repository retries the webhook five times.
        """,
}


def write_root(root: Path) -> None:
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text) if not text.startswith("# Huge") else text, encoding="utf-8")


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("edges") / "memory"
    base.mkdir()
    write_root(base)
    done = subprocess.run([sys.executable, "-m", "memory", "refresh", "--mode", "full", "--root",
                           str(base)], capture_output=True, text=True, timeout=900,
                          env={**os.environ, **OFFLINE})
    assert done.returncode == 0, done.stderr[-3000:]
    return base


@pytest.fixture(scope="module")
async def session(root, tmp_path_factory):
    errlog = tmp_path_factory.mktemp("logs") / "serve.stderr"
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "memory", "serve", "--root", str(root)],
                                   env={**os.environ, **OFFLINE})
    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as client:
                with anyio.fail_after(120):
                    await client.initialize()
                yield client


async def call(session, name: str, **arguments):
    with anyio.fail_after(300):
        return await session.call_tool(name, arguments)


@pytest.mark.anyio
async def test_a_megabyte_line_never_makes_a_packet_bigger_than_its_budget(session):
    result = await call(session, "memory_search", query="deploy checklist attachment", limit=10)
    assert not result.is_error, result.content
    packet = result.structured_content
    items = packet["items"]
    assert items and sum(len(i["text"]) for i in items) <= BUDGET
    cut = [i for i in items if i.get("cut_lines")]
    assert cut and all(" more characters]" in i["text"] for i in cut)
    text = result.content[0].text
    assert BLOB not in text and len(text) < 2 * BUDGET
    assert "[cut to fit: line" in text


@pytest.mark.anyio
async def test_a_read_of_a_megabyte_line_is_capped_cut_and_continues(session):
    result = await call(session, "memory_get", identity="Runbooks/Huge line.md")
    assert not result.is_error, result.content
    read = result.structured_content
    assert read["truncated"] and read["cut_lines"] == [3]
    assert sum(len(line["text"]) for line in read["lines"]) <= READ_CHARS
    assert read["next_start_line"] == 4
    assert len(result.content[0].text) < READ_CHARS + 2_000
    rest = (await call(session, "memory_get", identity="Runbooks/Huge line.md",
                       start_line=read["next_start_line"])).structured_content
    assert [line["text"] for line in rest["lines"]] == ["", "The end."] and not rest["truncated"]


@pytest.mark.anyio
async def test_an_empty_note_reads_as_no_lines(session):
    result = await call(session, "memory_get", identity="Inbox/Empty.md")
    assert not result.is_error, result.content
    assert result.structured_content["lines"] == [] and "lines: none of 0" in \
        result.content[0].text


@pytest.mark.anyio
async def test_an_unknown_argument_key_is_refused_with_the_valid_keys(session):
    result = await call(session, "memory_search", query="retry", repo="a")
    assert result.is_error
    message = result.content[0].text
    assert "unknown argument 'repo'" in message and "repository" in message
    listed = (await session.list_tools()).tools
    assert all(t.input_schema.get("additionalProperties") is False for t in listed)


@pytest.mark.anyio
async def test_a_path_prefix_matches_whole_folders(session):
    result = await call(session, "memory_search", query="retries the webhook",
                        path_prefix="Repos/a", status="any")
    paths = {i["path"] for i in result.structured_content["items"]}
    assert paths == {"Repos/a/Notes/Retry.md"}, paths
    assert result.structured_content["scope"]["path_prefix"] == "Repos/a/"


@pytest.mark.anyio
async def test_graph_tools_keep_to_the_scope(session):
    open_walk = (await call(session, "memory_neighbors", identity="a-retry")).structured_content
    assert "legacy-retry" in {n["node"] for n in open_walk["neighbors"]}
    fenced = await call(session, "memory_neighbors", identity="a-retry", repository="a")
    assert not fenced.is_error, fenced.content
    data = fenced.structured_content
    assert all(not (n.get("path") or "").startswith("Repos/a-legacy/") for n in data["neighbors"])
    assert "legacy-retry" not in {n["node"] for n in data["neighbors"]}
    assert data["scope"]["repository"] == "a" and "scope: repository=a" in fenced.content[0].text
    outside = await call(session, "memory_path", source="a-retry", target="legacy-retry",
                         repository="a")
    assert outside.is_error and "outside the requested repository 'a'" in outside.content[0].text


@pytest.mark.anyio
@pytest.mark.parametrize("query", ['"""', "...", "?!"])
async def test_a_query_of_punctuation_only_has_no_answer(session, query):
    packet = (await call(session, "memory_search", query=query)).structured_content
    assert packet["no_answer"] and packet["items"] == [] and packet["no_answer_reason"]


@pytest.mark.anyio
async def test_a_question_for_a_secret_value_has_no_answer_and_leads(session):
    result = await call(session, "memory_search",
                        query="what is the production database password?")
    packet = result.structured_content
    assert packet["no_answer"] and packet["items"] == []
    assert "value of a secret" in packet["no_answer_reason"]
    assert any("never holds secret values" in w for w in packet["warnings"])
    assert [lead["path"] for lead in packet["leads"]][:1] == ["Runbooks/Credentials.md"]
    text = result.content[0].text
    assert f"no answer: {packet['no_answer_reason']}" in text
    assert f"leads ({len(packet['leads'])}, not answers" in text
    assert "lead 1. Runbooks/Credentials.md:L" in text
