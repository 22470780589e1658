"""PostgresContentKeys: the content key of a shared store, a row of `aim_meta`.

Every server of one store hashes notes with the same key, so a content_hash one of them
returns is the one another checks an edit against; the first server to ask makes it.
"""

from __future__ import annotations

import secrets

import psycopg

from memory.adapters.postgres.database import PostgresDatabase
from memory.domain.note_text import MIN_KEY_BYTES, ContentKey
from memory.ports.content_keys import ContentKeys
from memory.ports.errors import StoreError

_SELECT = "SELECT value FROM aim_meta WHERE key = 'content_key'"


class PostgresContentKeys(ContentKeys):
    def __init__(self, database: PostgresDatabase):
        self._db = database

    def key(self) -> ContentKey:
        return self._db.run(_key)


def _key(conn: psycopg.Connection) -> ContentKey:
    row = conn.execute(_SELECT).fetchone()
    if row is None:  # only then an INSERT: a reader's role may hold SELECT alone
        made = secrets.token_bytes(MIN_KEY_BYTES).hex()
        conn.execute("INSERT INTO aim_meta (key, value) VALUES ('content_key', %s) "
                     "ON CONFLICT (key) DO NOTHING", (psycopg.types.json.Jsonb(made),))
        row = conn.execute(_SELECT).fetchone()
    try:
        return ContentKey(bytes.fromhex(row[0]))
    except (TypeError, ValueError):
        raise StoreError("the store's content key (aim_meta 'content_key') is damaged") \
            from None
