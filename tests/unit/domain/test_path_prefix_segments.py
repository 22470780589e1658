"""path_prefix matches whole path segments: `Repos/a` is the folder, never `Repos/a-legacy/`."""

import pytest
from hypothesis import given, strategies as st

from memory.domain.notes import Note
from memory.domain.scope import ScopeFilter, StatusFilter

PATHS = ["Repos/a/Deploy.md", "Repos/a/Notes/Retry.md", "Repos/a-legacy/Deploy.md",
         "Repos/ab.md", "Repos/a.md", "Repos/b/Deploy.md", "Decisions/Logging.md",
         "Decisions/Logging.md.bak/x.md"]


def note(path: str) -> Note:
    return Note(memory_id=path.lower(), path=path, title=path)


def admitted(prefix: str) -> list[str]:
    flt = ScopeFilter(path_prefix=prefix, status=StatusFilter.ANY)
    return [p for p in PATHS if flt.admits(note(p))]


@pytest.mark.parametrize("prefix", ["Repos/a", "Repos/a/", "repos/A", "./Repos/a",
                                    "Repos//a/", "Repos\\a", " Repos/a/./ "])
def test_a_folder_prefix_admits_that_folder_only(prefix):
    assert admitted(prefix) == ["Repos/a/Deploy.md", "Repos/a/Notes/Retry.md"]


def test_a_prefix_names_a_folder_never_the_start_of_a_name():
    assert admitted("Decisions/Logging.md") == []  # a folder of that name: none here
    assert admitted("Decisions/Logging") == []
    assert admitted("Repos") == [p for p in PATHS if p.startswith("Repos/")]


def test_the_prefix_is_kept_in_its_segment_form_for_the_stores():
    assert ScopeFilter(path_prefix="Repos/a").path_prefix == "Repos/a/"
    assert ScopeFilter(path_prefix="./").path_prefix is None
    assert ScopeFilter(path_prefix=".hidden/x").path_prefix == ".hidden/x/"


segment = st.text(alphabet="abAB-_.", min_size=1, max_size=4).filter(lambda s: s not in (".", ".."))


@given(st.lists(segment, min_size=1, max_size=3), st.lists(segment, min_size=1, max_size=3))
def test_a_folder_prefix_never_admits_a_sibling_whose_name_it_starts(folder, rest):
    prefix = "/".join(folder)
    sibling = f"{prefix}x/{'/'.join(rest)}.md"  # same characters, another segment
    inside = f"{prefix}/{'/'.join(rest)}.md"
    flt = ScopeFilter(path_prefix=prefix, status=StatusFilter.ANY)
    assert flt.admits(note(inside))
    assert not flt.admits(note(sibling))
