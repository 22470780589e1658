"""Fast dict-backed fakes of every port: unit tests use them, benchmarks use them as baselines.

The product never falls back to these.
"""

from memory.adapters.inmemory.change_feed import InMemoryChangeFeed
from memory.adapters.inmemory.embedder import DeterministicEmbedder
from memory.adapters.inmemory.graph import InMemoryGraph
from memory.adapters.inmemory.index import (InMemoryChunkStore, InMemoryGenerations,
                                            InMemoryIndex, InMemoryVectorIndex)
from memory.adapters.inmemory.notes import InMemoryNoteSource
from memory.adapters.inmemory.refresh_progress import InMemoryRefreshProgress
from memory.adapters.inmemory.source_control import InMemorySourceControl
from memory.adapters.inmemory.state import (FixedClock, InMemoryEmbeddingCache,
                                            InMemoryFeedbackLog, InMemoryLock,
                                            InMemoryRefreshHistory)
from memory.adapters.inmemory.tokens import InMemoryTokenStore

__all__ = ["DeterministicEmbedder", "FixedClock", "InMemoryChangeFeed", "InMemoryChunkStore",
           "InMemoryEmbeddingCache", "InMemoryFeedbackLog", "InMemoryGenerations", "InMemoryGraph",
           "InMemoryIndex", "InMemoryLock", "InMemoryNoteSource", "InMemoryRefreshHistory",
           "InMemoryRefreshProgress", "InMemorySourceControl", "InMemoryTokenStore",
           "InMemoryVectorIndex"]
