"""The index on PostgreSQL + pgvector: one adapter per port, over one shared database."""

from memory.adapters.postgres.catalogue import PostgresNoteCatalogue
from memory.adapters.postgres.content_keys import PostgresContentKeys
from memory.adapters.postgres.database import PostgresDatabase
from memory.adapters.postgres.embedding_cache import PostgresEmbeddingCache
from memory.adapters.postgres.generations import PostgresGenerations
from memory.adapters.postgres.graph_store import PostgresGraphStore
from memory.adapters.postgres.lexical_index import PostgresLexicalIndex
from memory.adapters.postgres.refresh_lock import PostgresRefreshLock
from memory.adapters.postgres.vector_index import PostgresVectorIndex

__all__ = ["PostgresContentKeys", "PostgresDatabase", "PostgresEmbeddingCache", "PostgresGenerations",
           "PostgresGraphStore", "PostgresLexicalIndex", "PostgresNoteCatalogue",
           "PostgresRefreshLock", "PostgresVectorIndex"]
