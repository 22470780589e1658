"""Use cases of the artifact store: intake of raw records (retrieval over them comes later)."""
