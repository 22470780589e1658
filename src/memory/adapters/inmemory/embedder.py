"""DeterministicEmbedder: a tiny hashing-trick embedder for unit tests and baselines."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from memory.domain.model_state import EmbedderState
from memory.domain.text import words
from memory.ports.embedder import Embedder
from memory.ports.errors import EmbedderUnavailable


class DeterministicEmbedder(Embedder):
    """Bag of hashed words (and their 4-letter prefixes), L2-normalized. Not semantic."""

    def __init__(self, dimension: int = 64, failure: str | None = None):
        """failure: why the model "could not load" (a failed embedder), None for a ready one."""
        self._dimension = dimension
        self._failure = failure
        self._state = EmbedderState.READY if failure is None else EmbedderState.FAILED
        self.embedded = 0  # texts embedded so far, for tests counting re-embedding

    @property
    def model_id(self) -> str:
        return f"deterministic-hash-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self._dimension
        for word in words(text):
            for token in (word, word[:4]):
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "little") % self._dimension
                vec[slot] += 1.0 if digest[4] % 2 else -1.0
        norm = math.sqrt(sum(x * x for x in vec))
        if not norm:  # no words ("", "---"): still a unit vector, as the port promises
            return [1.0] + [0.0] * (self._dimension - 1)
        return [x / norm for x in vec]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self._require()
        self.embedded += len(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self._require()
        return self._vector(text)

    def _require(self) -> None:
        if self._state is not EmbedderState.READY:
            raise EmbedderUnavailable(f"embedder is {self._state.value}: {self._failure}")

    def warm(self) -> None:
        return None

    def wait_ready(self, timeout: float) -> bool:
        return self._state is EmbedderState.READY

    def state(self) -> EmbedderState:
        return self._state

    def failure(self) -> str | None:
        return self._failure
