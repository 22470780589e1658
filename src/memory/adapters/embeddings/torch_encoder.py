"""TorchEncoder: the model through sentence-transformers on PyTorch, CPU."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np


class TorchEncoder:
    name = "torch"

    def __init__(self, model, torch_module):
        self._model = model
        self._torch = torch_module
        # One batch at a time, so a query slips in between the batches of a build.
        self._lock = threading.Lock()

    @classmethod
    def open(cls, model_dir: Path, max_seq_length: int, threads: int) -> TorchEncoder:
        import torch
        import transformers
        from sentence_transformers import SentenceTransformer

        transformers.logging.set_verbosity_warning()
        transformers.logging.disable_progress_bar()
        torch.set_num_threads(threads)
        model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True,
                                    backend="torch")
        model.max_seq_length = max_seq_length
        model.eval()
        return cls(model, torch)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors for one batch, in the order given."""
        with self._lock, self._torch.inference_mode():
            vectors = self._model.encode(texts, batch_size=len(texts), normalize_embeddings=True,
                                         convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)

    def encode_documents(self, texts: list[str], batch_size: int) -> np.ndarray:
        """Unit vectors in the order given; batches hold texts of similar length."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        vectors = np.concatenate([self.encode([texts[i] for i in order[start:start + batch_size]])
                                  for start in range(0, len(order), batch_size)])
        out = np.empty_like(vectors)
        out[order] = vectors
        return out
