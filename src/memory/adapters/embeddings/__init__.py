"""Embeddings adapter: all-MiniLM-L6-v2 from its PyPI package, offline, on torch or ONNX.

Importing this package is cheap: torch, sentence-transformers and onnxruntime are
imported by the loader thread, never at import time.
"""

from memory.adapters.embeddings.sentence_transformer import SentenceTransformerEmbedder

__all__ = ["SentenceTransformerEmbedder"]
