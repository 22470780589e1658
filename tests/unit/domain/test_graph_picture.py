"""GraphPicture cut down to admitted notes, and its labels redacted."""

from memory.domain.graph_picture import GraphPicture, PictureEdge, PictureNode


def note(memory_id, label=None):
    return PictureNode(id=f"page:{memory_id}", label=label or memory_id, kind="note",
                       memory_id=memory_id, path=f"{memory_id}.md")


def concept(kind, key):
    return PictureNode(id=f"{kind}:{key}", label=key, kind=kind)


def edge(a, b, relation="references"):
    return PictureEdge(source=a.id, target=b.id, relation=relation)


A, B, C = note("a"), note("b"), note("c")
REPO, SHARED_TAG, C_TAG, LONE = (concept("repository", "api"), concept("tag", "shared"),
                                 concept("tag", "only-c"), concept("concept", "lonely"))
PICTURE = GraphPicture(generation="g1", nodes=(A, B, C, REPO, SHARED_TAG, C_TAG, LONE), edges=(
    edge(A, B), edge(B, C), edge(A, REPO, "repository"), edge(C, REPO, "repository"),
    edge(B, SHARED_TAG, "tagged"), edge(C, SHARED_TAG, "tagged"), edge(C_TAG, C, "tagged")))


def test_only_admitted_notes_and_what_touches_them_are_kept():
    cut = PICTURE.restricted_to(frozenset({"a", "b"}))
    assert [n.id for n in cut.nodes] == [A.id, B.id, REPO.id, SHARED_TAG.id]
    assert {(e.source, e.target) for e in cut.edges} == {
        (A.id, B.id), (A.id, REPO.id), (B.id, SHARED_TAG.id)}
    assert cut.notes == (A, B) and cut.generation == "g1"


def test_a_concept_reached_only_through_an_excluded_note_goes():
    cut = PICTURE.restricted_to(frozenset({"c"}))
    assert {n.id for n in cut.nodes} == {C.id, REPO.id, SHARED_TAG.id, C_TAG.id}
    assert PICTURE.restricted_to(frozenset()).nodes == ()


def test_labels_are_redacted():
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    picture = GraphPicture(generation="g", nodes=(note("x", f"token {secret}"),), edges=())
    [shown] = picture.redacted().nodes
    assert secret not in shown.label and shown.label.startswith("token [REDACTED:")
