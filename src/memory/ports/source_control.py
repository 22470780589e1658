"""SourceControl: which version-controlled work tree a folder belongs to."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from attrs import frozen


@frozen(kw_only=True)
class WorkTree:
    """A checked-out repository: its top folder and where its `origin` remote points."""

    path: str
    origin_url: str | None = None


@runtime_checkable
class SourceControl(Protocol):
    def work_tree(self, folder: str) -> WorkTree | None:
        """The work tree containing folder (it may be the folder itself), or None.

        Never raises for an ordinary folder that is not under version control, a missing
        folder or an unusable version-control tool: those are None (or no origin_url).
        """
