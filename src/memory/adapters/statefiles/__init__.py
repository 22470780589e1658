"""File-backed state adapters."""
