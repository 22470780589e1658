"""A note's keys, computed once for every store: the name rule and the exact-spelling order."""

from __future__ import annotations

from memory.domain.note_keys import NoteKeys, exact_first, name_key
from memory.domain.notes import Note, Status


def test_a_note_is_named_by_its_path_without_the_extension_in_any_case():
    keys = NoteKeys.of(Note(memory_id="x-note", path="Notes/X.MD", title=" X Title "))
    assert {"notes/x", "notes/x.md", "x", "x-note", "x title"} == set(keys.names)
    assert name_key("  Notes/X ") in keys.names


def test_the_scope_keys_are_folded_as_the_filter_folds_its_values():
    note = Note(memory_id="a", path="Repos/Alpha/A.md", title="A", root_scope="Work",
                repository="alpha", ticket="nx-1", related_repos=("Beta",),
                superseded_by=("b",))
    keys = NoteKeys.of(note)
    assert (keys.root, keys.ticket, keys.path) == ("work", "NX-1", "repos/alpha/a.md")
    assert keys.repositories == {"alpha", "beta"} and not keys.cross_cutting
    assert keys.status is Status.SUPERSEDED


def test_the_note_spelled_exactly_so_comes_first_then_by_path():
    upper, lower = (Note(memory_id=f"n{i}", path=p, title="t")
                    for i, p in enumerate(["Notes/X.MD", "notes/x.md"]))
    assert exact_first([lower, upper], "Notes/X") == [upper, lower]
    assert exact_first([upper, lower], "notes/x") == [lower, upper]
    assert exact_first([lower, upper], "t") == [upper, lower]


def test_the_markdown_extension_is_one_rule_in_any_case_for_paths_ids_names_and_links():
    from memory.domain.identity import path_identity
    from memory.domain.markdown import links
    from memory.domain.notes import note_path, without_extension

    assert note_path("Notes/X.MD") == "Notes/X.MD"
    assert path_identity("Notes/X.Md") == path_identity("notes/x.md") == "notes/x"
    assert "X" in Note(memory_id="x-note", path="Notes/X.MD", title="t").names
    assert [link.target for link in links(["see [x](Other.MD) and [y](notes.mdx)"])] == [
        "Other.MD"]
    assert (without_extension("a.MD"), without_extension("a.mdx")) == ("a", "a.mdx")
