"""SentenceTransformerEmbedder: all-MiniLM-L6-v2 loaded lazily, offline, in the background."""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memory.adapters.embeddings import packaged_model as pm
from memory.domain.model_state import EmbedderState
from memory.ports.embedder import Embedder
from memory.ports.errors import EmbedderUnavailable

log = logging.getLogger(__name__)

BACKENDS = ("auto", "torch", "onnx")
PRECISIONS = ("int8", "fp32")
# WordPiece turns a word of over 100 characters into one unknown token, so this many
# characters per token is more than the kept tokens can span in any ordinary text.
CHARS_PER_TOKEN_BOUND = 128


def onnx_installed() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


class SentenceTransformerEmbedder(Embedder):
    """Unit-length float32 vectors from all-MiniLM-L6-v2; never downloads, never fakes.

    backend "torch" runs sentence-transformers on PyTorch. "onnx" runs an ONNX graph
    exported once into cache_dir (needs onnxruntime and onnx). "auto" takes onnx when
    both are installed and a cache_dir is given, and falls back to torch if that fails.

    precision "fp32" runs the model's own float weights (torch and onnx agree to 0.999).
    "int8" runs the ONNX graph with its weights quantized to int8 (about twice as fast
    on a CPU, vectors within cosine ~0.99 of the float ones); it needs the onnx backend
    and never falls back to torch, whose vectors would be another model's. The precision
    is part of model_id, so an index never mixes the two.

    batch_size is the torch backend's (texts per batch, grouped by length). The onnx
    backend encodes each text alone, one per CPU at a time, so no vector depends on the
    texts embedded with it (int8 activations are quantized per run).
    """

    def __init__(self, *, model_dir: str | os.PathLike[str] | None = None,
                 cache_dir: str | os.PathLike[str] | None = None, max_seq_length: int = 256,
                 batch_size: int = 64, backend: str = "auto", precision: str = "fp32"):
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, "
                             f"not {precision!r}")
        if precision == "int8" and backend == "torch":
            raise ValueError("int8 precision runs on the onnx backend only, not torch")
        if not 1 <= max_seq_length <= pm.MAX_POSITIONS:
            raise ValueError(f"max_seq_length must be within 1..{pm.MAX_POSITIONS}")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._model_dir = model_dir
        self._cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._max_seq_length = max_seq_length
        self._batch_size = batch_size
        self._backend = backend
        self._precision = precision
        self._state = EmbedderState.NOT_LOADED
        self._failure: str | None = None
        self._encoder = None
        self._state_lock = threading.Lock()
        self._settled = threading.Event()  # set once loading has succeeded or failed

    @property
    def model_id(self) -> str:
        """The model's id; int8 precision and a non-native max_seq_length are part of it
        (their vectors differ)."""
        model = pm.MODEL_ID if self._precision == "fp32" else f"{pm.MODEL_ID}+{self._precision}"
        if self._max_seq_length == pm.NATIVE_MAX_SEQ_LENGTH:
            return model
        return f"{model}@{self._max_seq_length}"

    @property
    def precision(self) -> str:
        return self._precision

    @property
    def dimension(self) -> int:
        return pm.DIMENSION

    @property
    def backend(self) -> str | None:
        """The backend actually running ("torch" or "onnx"), None until ready."""
        encoder = self._encoder
        return encoder.name if encoder is not None else None

    def state(self) -> EmbedderState:
        return self._state

    def failure(self) -> str | None:
        return self._failure

    def warm(self) -> None:
        with self._state_lock:
            if self._state is not EmbedderState.NOT_LOADED:
                return
            self._state = EmbedderState.LOADING
        threading.Thread(target=self._load, name="embedder-load", daemon=True).start()

    def wait_ready(self, timeout: float) -> bool:
        """Start loading if nobody has, then wait up to timeout seconds for it."""
        self.warm()
        self._settled.wait(max(0.0, timeout))
        return self._state is EmbedderState.READY

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), 384) float32 in the order given (torch: batches of similar length;
        onnx: each text in a run of its own, so no vector depends on the others)."""
        texts = [self._bounded(t) for t in texts]
        encoder = self._ready_encoder()
        if not texts:
            return np.empty((0, pm.DIMENSION), dtype=np.float32)
        return self._encode(encoder, encoder.encode_documents, texts, self._batch_size)

    def embed_query(self, text: str) -> np.ndarray:
        encoder = self._ready_encoder()
        return self._encode(encoder, encoder.encode, [self._bounded(text)])[0]

    def _bounded(self, text: str) -> str:
        """The text cut where no kept token can start: the model reads max_seq_length
        tokens, but the tokenizer would first split all of it (1.2 GB for one 2 MB line)."""
        return text[: self._max_seq_length * CHARS_PER_TOKEN_BOUND]

    @staticmethod
    def _encode(encoder, run, *args) -> np.ndarray:
        try:
            return run(*args)
        except Exception as exc:
            raise EmbedderUnavailable(f"embedding failed on {encoder.name}: {exc}") from exc

    def _ready_encoder(self):
        self.warm()
        self._settled.wait()
        if self._encoder is None:
            raise EmbedderUnavailable(f"embedding model failed: {self._failure}")
        return self._encoder

    def _load(self) -> None:
        try:
            encoder = self._open()
            probe = encoder.encode(["dimension probe"])
            if probe.shape != (1, pm.DIMENSION):
                raise RuntimeError(f"model gives vectors of shape {probe.shape[1:]}, "
                                   f"expected ({pm.DIMENSION},)")
        except Exception as exc:
            log.warning("embedding model failed to load", exc_info=True)
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            with self._state_lock:
                self._failure, self._state = reason, EmbedderState.FAILED
        else:
            with self._state_lock:
                self._encoder, self._state = encoder, EmbedderState.READY
        finally:
            self._settled.set()

    def _open(self):
        pm.offline_environment()
        model_dir = pm.checked_model_dir(self._model_dir)
        threads = pm.cpu_threads()
        if self._wants_onnx():
            try:
                return self._open_onnx(model_dir, threads)
            except Exception:
                if self._backend == "onnx" or self._precision != "fp32":
                    raise
                log.warning("onnx backend unavailable, using torch", exc_info=True)
        from memory.adapters.embeddings.torch_encoder import TorchEncoder

        return TorchEncoder.open(model_dir, self._max_seq_length, threads)

    def _wants_onnx(self) -> bool:
        if self._backend == "onnx" or self._precision != "fp32":
            return True
        return self._backend == "auto" and self._cache_dir is not None and onnx_installed()

    def _open_onnx(self, model_dir: Path, threads: int):
        from memory.adapters.embeddings.onnx_encoder import OnnxEncoder, exported_graph

        if self._cache_dir is None:
            raise RuntimeError("the onnx backend needs a cache_dir to keep its exported graph")
        graph = exported_graph(model_dir, self._cache_dir, self._precision)
        return OnnxEncoder.open(model_dir, graph, self._max_seq_length, threads)
