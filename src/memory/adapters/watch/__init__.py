"""Watch adapter: the memory root's changes as they happen, through watchfiles."""

from memory.adapters.watch.change_feed import WatchfilesChangeFeed

__all__ = ["WatchfilesChangeFeed"]
