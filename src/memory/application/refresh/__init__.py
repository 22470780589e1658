"""Refreshing: the staged pipeline, catch-up before reads, the background, the verdict."""
