"""ChunkVectors: the vectors a refresh adds, from the embedding cache first, else the model."""

from __future__ import annotations

from collections.abc import Sequence

from memory.domain.cancellation import CancelToken
from memory.domain.model_state import described
from memory.domain.notes import NoteDocument
from memory.ports.embedder import Embedder
from memory.ports.embedding_cache import EmbeddingCache

MODEL_WAIT_S = 300.0  # a refresh waits this long for the model before indexing without it


class ChunkVectors:
    def __init__(self, embedder: Embedder, cache: EmbeddingCache):
        self._embedder = embedder
        self._cache = cache

    def ready(self, warnings: list[str]) -> bool:
        """Wait for the model; when it cannot load, say that the index gets no vectors."""
        self._embedder.warm()
        if self._embedder.wait_ready(MODEL_WAIT_S):
            return True
        warnings.append(f"embedding model unavailable ({described(self._embedder.state(), self._embedder.failure())}): "
                        "index built without vectors; semantic search is off")
        return False

    def of(self, docs: Sequence[NoteDocument], cancel: CancelToken,
           batch: int) -> tuple[int, int, dict[str, Sequence[float]]]:
        """(embedded, reused from the cache, vector by chunk hash) for every chunk of docs.

        Embedded `batch` chunks at a time, each batch cached at once: a giant note is
        cancelled between two batches, and the refresh taken again later reuses them.
        """
        model = self._embedder.model_id
        hashes = list(dict.fromkeys(c.hash for d in docs for c in d.chunks))
        known = self._cache.get_many(model, hashes)
        missing = [h for h in hashes if h not in known]
        text_of = {c.hash: c.indexed_text for d in docs for c in d.chunks} if missing else {}
        for start in range(0, len(missing), max(1, batch)):
            cancel.raise_if_cancelled()
            part = missing[start:start + max(1, batch)]
            new = dict(zip(part, self._embedder.embed_documents([text_of[h] for h in part])))
            self._cache.put_many(model, new)
            known.update(new)
        return len(missing), len(hashes) - len(missing), known
