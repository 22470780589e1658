"""Our file-label disambiguation gives Graphify's own labels (the pinned graphifyy)."""

from __future__ import annotations

import graphify.build
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.adapters.graphify.file_labels import file_label_reassignments

GRAPHIFY_LABELS = graphify.build._file_label_reassignments  # the library's own, quadratic

part = st.sampled_from(("a", "b", "c", "docs", "README.md", "_ticket.md", "x.md", ""))
path = st.lists(part, min_size=1, max_size=5).map("/".join)
separators = st.sampled_from(("/", "\\"))


@settings(max_examples=400)
@given(st.lists(st.tuples(path, separators, st.booleans()), max_size=25))
def test_the_same_labels_as_graphify(specs):
    items = []
    for i, (source, sep, bare) in enumerate(specs):
        source = source.replace("/", sep)
        base = source.replace("\\", "/").rsplit("/", 1)[-1]
        items.append((f"n{i}", base if bare else f"concept {i}", source))
    items.append(("none", "", None))
    assert file_label_reassignments(items) == GRAPHIFY_LABELS(items)


def test_thousands_of_files_of_one_name_each_get_their_folder():
    items = [(i, "_ticket.md", f"Repos/r{i % 7}/T-{i}/_ticket.md") for i in range(3000)]
    labels = file_label_reassignments(items)
    assert labels[42] == "T-42/_ticket.md"
    assert len(set(labels.values())) == 3000
