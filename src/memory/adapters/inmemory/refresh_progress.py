"""InMemoryRefreshProgress: the progress board of refreshes, kept in a field tests can read."""

from __future__ import annotations

from memory.domain.refresh import BuildProgress
from memory.ports.refresh_progress import RefreshProgressBoard


class InMemoryRefreshProgress(RefreshProgressBoard):
    def __init__(self):
        self.progress: BuildProgress | None = None
        self.posts = 0

    def post(self, progress: BuildProgress) -> None:
        self.progress = progress
        self.posts += 1

    def clear(self) -> None:
        self.progress = None

    def read(self) -> BuildProgress | None:
        return self.progress
