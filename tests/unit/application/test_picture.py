"""MemoryPicture says what a page would hide: a scope no note has, a graph behind the index."""

from builders import World, make_doc

from memory.application.graph.picture import MemoryPicture
from memory.application.search.scope_names import CatalogueScopeNames
from memory.domain.graph_picture import GraphPicture, PictureNode


class FixedPicture:
    """The graph's picture: one node per note the index held when it was drawn."""

    def __init__(self, memory_ids):
        self._nodes = tuple(PictureNode(id=f"page:{m}", label=m, kind="note", memory_id=m)
                            for m in memory_ids)

    def picture(self):
        return GraphPicture(generation="g1", nodes=self._nodes, edges=())


def picture_of(world, graph_ids):
    return MemoryPicture(graph=FixedPicture(graph_ids), catalogue=world.chunks,
                         scope_names=CatalogueScopeNames(catalogue=world.chunks,
                                                         index=world.generations),
                         graph_lag=world.indexer.graph_lag)


def world():
    w = World([make_doc("Repos/alpha/Notes/Deploy.md", "# Deploy\n\nBlue green.\n"),
               make_doc("Repos/alpha/Notes/Cache.md", "# Cache\n\nTTL ten minutes.\n")])
    assert w.refresh("full").ok
    return w


def test_a_scope_no_note_has_is_said_with_the_closest_names_and_the_empty_picture():
    w = world()
    drawn = picture_of(w, [n.memory_id for n in w.chunks.notes()]).draw(repository="alpah")
    assert drawn.notes == ()
    assert any(s.startswith("scope matches no note: ") and "closest: alpha" in s
               for s in drawn.warnings), drawn.warnings
    assert any("holds no note" in s for s in drawn.warnings), drawn.warnings


def test_a_graph_behind_the_index_is_said():
    w = world()
    drawn = picture_of(w, [n.memory_id for n in w.chunks.notes()]).draw()
    assert drawn.warnings == ()
    w.source.put(make_doc("Repos/alpha/Notes/Queue.md", "# Queue\n\nNew since the graph.\n"))
    assert w.refresh("index").ok  # the index has the new note, the graph does not
    drawn = picture_of(w, [n.memory_id for n in w.chunks.notes()]).draw()
    assert any("graph behind index by 1 notes" in s and "refresh --mode full" in s
               for s in drawn.warnings), drawn.warnings
