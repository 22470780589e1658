"""InMemorySourceControl: work trees declared by a test, keyed by their top folder."""

from __future__ import annotations

from memory.ports.source_control import SourceControl, WorkTree


class InMemorySourceControl(SourceControl):
    def __init__(self, trees: dict[str, str | None] | None = None):
        """trees: work tree folder -> origin URL (None: a work tree without an origin)."""
        self.trees = dict(trees or {})
        self.asked: list[str] = []

    def work_tree(self, folder: str) -> WorkTree | None:
        self.asked.append(folder)
        for top in sorted(self.trees, key=len, reverse=True):
            if folder == top or folder.startswith(top.rstrip("/") + "/"):
                return WorkTree(path=top, origin_url=self.trees[top])
        return None
