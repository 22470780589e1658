"""GraphifyGraphPicture: the published graph.json as the plain nodes and edges of a picture."""

from __future__ import annotations

from pathlib import Path

from memory.adapters.graphify.layout import GRAPH_FILE, GraphLayout
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
    """Reads the generation CURRENT names, each time: a picture is drawn once, not served."""

    def __init__(self, state_dir: str | Path):
        self._layout = GraphLayout.of(state_dir)

    def picture(self) -> GraphPicture | None:
        try:
            info = self._layout.read_pointer()
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise Unavailable(f"graph pointer unreadable: {e}; run a full refresh") from e
        try:
            snapshot = _PictureSnapshot.load(info, self._layout.generation(info.id) / GRAPH_FILE)
        except (OSError, ValueError) as e:
            raise Unavailable(f"graph generation {info.id} unreadable: {e}; "
                              "run a full refresh") from e
        return snapshot.picture()
