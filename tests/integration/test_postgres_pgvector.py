"""The Postgres store needs pgvector 0.8 (iterative HNSW scans): the test server has it, and
a database whose pgvector is older is refused at open, on both edges, before any DDL."""

from __future__ import annotations

import json

import psycopg
import pytest

from memory.adapters.postgres import PostgresDatabase
from memory.adapters.postgres.schema import pgvector_supported
from memory.entrypoints.cli import main
from memory.ports.errors import StoreUnsupported


def test_the_test_server_is_postgresql_18_with_pgvector_0_8(test_postgres):
    url = test_postgres.fresh()
    database = PostgresDatabase(url)
    database.open()
    with psycopg.connect(url) as conn:
        server = conn.execute("SHOW server_version_num").fetchone()[0]
        vector = conn.execute("SELECT extversion FROM pg_extension "
                              "WHERE extname = 'vector'").fetchone()[0]
    database.close()
    assert int(server) >= 180000
    assert pgvector_supported(vector), vector


def _with_pgvector(url: str, version: str) -> None:
    """The database as a server with that pgvector leaves it (the catalogue says so)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
        conn.execute("UPDATE pg_extension SET extversion = %s WHERE extname = 'vector'",
                     (version,))


@pytest.mark.parametrize("old", ["0.6.2", "0.7.4"])
def test_an_older_pgvector_is_refused_naming_the_version_found_and_needed(test_postgres, old):
    url = test_postgres.fresh()
    _with_pgvector(url, old)
    database = PostgresDatabase(url)
    with pytest.raises(StoreUnsupported) as refused:
        database.open()
    database.close()
    message = str(refused.value)
    assert f"pgvector {old} is installed" in message
    assert "needs pgvector 0.8 or newer" in message
    assert "ALTER EXTENSION vector UPDATE" in message  # the server offers 0.8.6
    with psycopg.connect(url) as conn:  # refused before the schema: nothing was created
        assert conn.execute("SELECT to_regclass('aim_meta')").fetchone()[0] is None


def test_the_command_line_shows_the_refusal_as_its_kind(test_postgres, tmp_path, capsys):
    url = test_postgres.fresh()
    _with_pgvector(url, "0.6.2")
    (tmp_path / "root").mkdir()
    code = main(["health", "--json", "--root", str(tmp_path / "root"),
                 "--state-dir", str(tmp_path / "state"), "--store", url])
    shown = capsys.readouterr()
    error = json.loads(shown.out)["error"]
    assert (code, error["kind"], error["exit_code"]) == (1, "unsupported", 1)
    assert "pgvector 0.6.2" in error["message"] and "0.8 or newer" in error["message"]
    assert "Traceback" not in shown.err


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_an_mcp_session_shows_the_refusal_as_a_tool_error_and_keeps_serving(
        test_postgres, tmp_path):
    import os
    import sys

    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    url = test_postgres.fresh()
    _with_pgvector(url, "0.6.2")
    (tmp_path / "root").mkdir()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")},
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    params = StdioServerParameters(command=sys.executable, env=env, args=[
        "-m", "memory", "serve", "--no-watch", "--read-only", "--store", url,
        "--root", str(tmp_path / "root"), "--state-dir", str(tmp_path / "state")])
    with (tmp_path / "serve.stderr").open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(300):
                    await session.initialize()
                    answers = [await session.call_tool(name, arguments) for name, arguments in
                               (("memory_health", {}), ("memory_search", {"query": "retry"}),
                                ("memory_health", {}))]
    for answer in answers:
        text = answer.content[0].text
        assert answer.is_error and text.startswith("unsupported: "), text
        assert "pgvector 0.6.2" in text and "0.8 or newer" in text
    assert "Traceback" not in (tmp_path / "serve.stderr").read_text()
