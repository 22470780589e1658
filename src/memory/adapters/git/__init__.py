"""Git adapter: which work tree a folder is in and where its origin remote points."""

from memory.adapters.git.source_control import GitSourceControl

__all__ = ["GitSourceControl"]
