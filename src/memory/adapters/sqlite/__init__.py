"""sqlite adapter."""
