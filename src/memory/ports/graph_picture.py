"""GraphPictureSource: the published graph generation as plain nodes and edges, to draw it."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memory.domain.graph_picture import GraphPicture


@runtime_checkable
class GraphPictureSource(Protocol):
    def picture(self) -> GraphPicture | None:
        """The current graph generation, each note's headings folded into the note.

        None when no graph generation is published; Unavailable when it cannot be read.
        """
