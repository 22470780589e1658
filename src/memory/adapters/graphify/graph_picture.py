"""GraphifyGraphPicture: the published graph document as the plain nodes and edges of a picture."""

from __future__ import annotations

import os

from memory.adapters.graphify.documents import GraphDocuments, documents_at
from memory.adapters.graphify.layout import GRAPH_FILE
from memory.adapters.graphify.snapshot import GraphSnapshot
from memory.domain.errors import Unavailable
from memory.domain.graph_picture import GraphPicture, PictureEdge, PictureNode
from memory.ports.graph_picture import GraphPictureSource


class _PictureSnapshot(GraphSnapshot):
    """The snapshot's own note-level view (headings folded, kinds, labels), read out whole,
    so a picture and memory_neighbors name and group nodes by the same rules."""

    def picture(self) -> GraphPicture:
        units = sorted(set(self._unit.values()))
        nodes = tuple(PictureNode(id=u, label=self._label(u), kind=self._kind(u),
                                  memory_id=self._note_of.get(u), path=self._path_of(u))
                      for u in units)
        edges = tuple(PictureEdge(source=a, target=b, relation=self._relation(a, b).relation)
                      for a, b in sorted(self._pairs))
        return GraphPicture(generation=self.info.id, nodes=nodes, edges=edges)


class GraphifyGraphPicture(GraphPictureSource):
    """Reads the generation the pointer names, each time: a picture is drawn once, not served."""

    def __init__(self, documents: GraphDocuments | str | os.PathLike):
        """`documents`: where the published graphs are, or a state folder holding them."""
        self._documents = documents_at(documents)

    def picture(self) -> GraphPicture | None:
        try:
            info = self._documents.current()
        except (OSError, ValueError) as e:
            raise Unavailable(f"graph pointer unreadable: {e}; run a full refresh") from e
        if info is None:
            return None
        try:
            snapshot = _PictureSnapshot.parse(info, self._documents.document(info.id), GRAPH_FILE)
        except (OSError, ValueError) as e:
            raise Unavailable(f"graph generation {info.id} unreadable: {e}; "
                              "run a full refresh") from e
        return snapshot.picture()
