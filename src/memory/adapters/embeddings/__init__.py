"""embeddings adapter."""
