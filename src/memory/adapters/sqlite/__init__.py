"""SQLite adapters: the live index database (FTS5 + sqlite-vec), updated in place, and the embedding cache."""

from memory.adapters.sqlite.catalogue import SqliteNoteCatalogue
from memory.adapters.sqlite.embedding_cache import SqliteEmbeddingCache
from memory.adapters.sqlite.generations import SqliteGenerations
from memory.adapters.sqlite.index import SqliteIndex
from memory.adapters.sqlite.lexical_index import SqliteLexicalIndex
from memory.adapters.sqlite.stage import SqliteIndexStage
from memory.adapters.sqlite.vector_index import SqliteVectorIndex

__all__ = ["SqliteEmbeddingCache", "SqliteGenerations", "SqliteIndex", "SqliteIndexStage",
           "SqliteLexicalIndex", "SqliteNoteCatalogue", "SqliteVectorIndex"]
