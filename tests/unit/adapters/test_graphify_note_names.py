"""Link names resolve as the rule says, however many notes share a name.

The resolver indexes shared names (README, index, a common title) so that a lookup does
not walk every note of that name; these tests hold it to the plain reading of the rule:
the best-ranked kind of name wins (memory_id, path, stem, title, alias), and among equals
the note in the linking note's folder, then the shallowest, then the first by path.
"""

from __future__ import annotations

import posixpath

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.adapters.graphify.note_names import NoteNames
from memory.domain.notes import Note

FOLDERS = ("", "a", "a/b", "c", "c/a", "a/b/c")
STEMS = ("readme", "index", "deploy", "Deploy")
TITLES = ("Deploy", "Index", "Runbook")


def _reference(notes: list[Note], target: str, origin: Note) -> tuple[str | None, str]:
    """The rule read literally, over every note (as the resolver once did)."""
    key = target.strip().lower()
    ranked = []
    for note in notes:
        stem = posixpath.splitext(posixpath.basename(note.path))[0]
        names = [(0, note.memory_id), (1, note.path), (1, posixpath.splitext(note.path)[0]),
                 (2, stem), (3, note.title), *((4, a) for a in note.aliases)]
        ranks = [rank for rank, name in names if name.strip().lower() == key]
        if ranks:
            ranked.append((min(ranks), note))
    if not ranked:
        return None, ""
    best = min(rank for rank, _ in ranked)
    here = posixpath.dirname(origin.path)
    note = min((n for rank, n in ranked if rank == best),
               key=lambda n: (posixpath.dirname(n.path) != here, n.path.count("/"), n.path))
    return note.path, ("memory_id", "path", "stem", "title", "alias")[best]


notes_strategy = st.lists(
    st.tuples(st.sampled_from(FOLDERS), st.sampled_from(STEMS), st.sampled_from(TITLES),
              st.lists(st.sampled_from(("deploy", "ops", "index")), max_size=2)),
    min_size=1, max_size=30)


@settings(max_examples=300)
@given(notes_strategy, st.sampled_from(("deploy", "Index", "readme", "runbook", "ops",
                                        "missing")), st.integers(0, 29))
def test_a_shared_name_resolves_to_the_nearest_best_ranked_note(specs, target, pick):
    notes, seen = [], set()
    for i, (folder, stem, title, aliases) in enumerate(specs):
        path = posixpath.join(folder, f"{stem}.md")
        if path.lower() in seen:
            continue
        seen.add(path.lower())
        notes.append(Note(memory_id=f"mem-{i}", path=path, title=title, aliases=tuple(aliases)))
    origin = notes[pick % len(notes)]
    found, how = NoteNames(notes).resolve(f"[[{target}]]", origin)
    assert ((found.path if found else None), how) == _reference(notes, target, origin)


def test_a_file_name_link_picks_the_note_in_the_linking_folder_among_thousands():
    notes = [Note(memory_id=f"mem-{i}", path=f"team-{i:04d}/README.md", title=f"Team {i}")
             for i in range(3000)]
    origin = Note(memory_id="mem-x", path="team-1234/guide.md", title="Guide")
    names = NoteNames([*notes, origin])
    assert names.resolve("README.md", origin)[0].path == "team-1234/README.md"
    assert names.resolve("[[README]]", origin) == (notes[1234], "stem")
    elsewhere = Note(memory_id="mem-y", path="guide.md", title="Guide")
    assert names.resolve("README.md", elsewhere)[0].path == "team-0000/README.md"
