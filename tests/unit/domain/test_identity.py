"""Note identity: the path-to-id rule, what a note may declare, and who keeps a contested id
whatever order the notes come in (no disk)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.domain.identity import (assign_identities, declared_identity, identity_claims,
                                    keeps_over, path_identity, spare_identity)
from memory.domain.notes import Note


def note(path: str, memory_id: str | None = None) -> Note:
    return Note(memory_id=memory_id or path_identity(path), path=path, title=path)


def test_the_path_gives_the_lower_cased_path_without_its_suffix():
    assert path_identity("Repos/API/Deploy.md") == "repos/api/deploy"
    assert path_identity("notes/Plan.MD") == "notes/plan"
    assert path_identity("caf%E9.md") == "caf%e9"


@pytest.mark.parametrize("value, expected", [
    ("retry-policy", ("retry-policy", None)), ("  spaced  ", ("spaced", None)),
    ("", (None, None)), (None, (None, None)),
    ("AKIAIOSFODNN7REALLYX", (None, "looks like a secret")),
    ("[REDACTED:aws-access-key]", (None, "looks like a secret")),
    ("a\nb", (None, "holds control characters")), ("x" * 300, (None, "longer than 256 characters")),
])
def test_declared_ids_are_refused_when_they_could_not_safely_name_a_note(value, expected):
    assert declared_identity(value) == expected


def test_claims_start_with_the_declared_id_then_the_path_then_spares_only_the_path_can_want():
    claims = list(identity_claims(note("Decisions/B.md", "same")))
    assert claims[:3] == ["same", "decisions/b", spare_identity("Decisions/B.md")]
    assert len(claims) == len(set(claims))
    assert spare_identity("Repos/api/Deploy.md") != spare_identity("repos/api/deploy.md")


def test_an_id_a_path_gives_beats_the_same_id_declared_then_the_first_path_wins():
    derived, declared = note("deploy.md"), note("other.md", "deploy")
    assert keeps_over(derived, declared, "deploy") and not keeps_over(declared, derived, "deploy")
    upper, lower = note("Repos/api/Deploy.md"), note("repos/api/deploy.md")
    assert keeps_over(upper, lower, "repos/api/deploy")
    assert not keeps_over(lower, upper, "repos/api/deploy")


def test_case_twins_and_declared_clashes_all_get_ids_naming_each_once():
    notes = [note("Repos/api/Deploy.md"), note("repos/api/deploy.md"),
             note("Decisions/A.md", "same"), note("Decisions/B.md", "same"),
             note("Decisions/C.md", "repos/api/deploy")]
    ids = assign_identities(notes)
    assert ids["Repos/api/Deploy.md"] == "repos/api/deploy"
    assert ids["repos/api/deploy.md"] == spare_identity("repos/api/deploy.md")
    assert (ids["Decisions/A.md"], ids["Decisions/B.md"]) == ("same", "decisions/b")
    assert ids["Decisions/C.md"] == "decisions/c"
    assert len(set(ids.values())) == len(notes)


PATHS = ["Deploy.md", "deploy.md", "DEPLOY.md", "a/Deploy.md", "a/deploy.md", "b.md", "B.md",
         "café.md", "cafe\u0301.md", "x.md"]
DECLARED = [None, None, "deploy", "a/deploy", "b", "same", "x", "café"]


@st.composite
def roots(draw) -> list[Note]:
    paths = draw(st.lists(st.sampled_from(PATHS), min_size=1, max_size=len(PATHS), unique=True))
    return [note(p, draw(st.sampled_from(DECLARED))) for p in paths]


@settings(max_examples=int(os.environ.get("AI_MEMORY_HYPOTHESIS_EXAMPLES", "300")),
          deadline=None)
@given(notes=roots(), order=st.randoms(use_true_random=False))
def test_every_note_gets_one_id_of_its_own_whatever_the_order(notes, order):
    ids = assign_identities(notes)
    assert sorted(ids) == sorted(n.path for n in notes)
    assert len(set(ids.values())) == len(notes)
    shuffled = list(notes)
    order.shuffle(shuffled)
    assert assign_identities(shuffled) == ids


def test_a_path_too_long_for_an_id_gives_a_bounded_one_of_its_own():
    long_a, long_b = "d/" * 300 + "a.md", "d/" * 300 + "b.md"
    assert len(path_identity(long_a)) == 256
    assert path_identity(long_a) != path_identity(long_b)
    assert path_identity(long_a).startswith("d/d/d/")
