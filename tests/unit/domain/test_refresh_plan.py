"""The refresh plan as a table: what the current generation and the request make a refresh do."""

import pytest

from memory.domain.refresh import GenerationInfo, ManifestEntry
from memory.domain.refresh_plan import Reason, plan_refresh

MODEL, OTHER = "minilm+int8", "minilm+fp32"
CHUNKS, NEW_CHUNKS = "md-v3", "md-v4"
ENTRY = ManifestEntry(path="a.md", content_hash="h", size=1, mtime_ns=1)


def generation(model=MODEL, chunking=CHUNKS) -> GenerationInfo:
    return GenerationInfo(id="g1", created="", model_id=model, chunking=chunking,
                          manifest={"a.md": ENTRY})


# current: None (no index) or how the current generation was built; damage: its problems;
# model: the model vectors come from now (None: the model failed, no vectors).
# Expected: reuse (edit a copy of g1), rechunk, reembed, the reasons, and the warnings.
TABLE = [
    # id, current, damage, model, chunking, full, force -> reuse, rechunk, reembed, reasons
    ("nothing-changed", generation(), [], MODEL, CHUNKS, False, False,
     True, False, False, ()),
    ("forced", generation(), [], MODEL, CHUNKS, False, True,
     True, False, False, (Reason.FORCED,)),
    ("first", None, [], MODEL, CHUNKS, False, False,
     False, True, False, (Reason.FIRST,)),
    ("first-without-model", None, [], None, CHUNKS, False, False,
     False, True, False, (Reason.FIRST,)),
    ("full", generation(), [], MODEL, CHUNKS, True, False,
     False, True, False, (Reason.FULL,)),
    ("full-forced", generation(), [], MODEL, CHUNKS, True, True,
     False, True, False, (Reason.FULL, Reason.FORCED)),
    ("damaged", generation(), ["integrity: page 3"], MODEL, CHUNKS, False, False,
     False, True, False, (Reason.DAMAGED,)),
    ("damaged-full", generation(), ["integrity: page 3"], MODEL, CHUNKS, True, False,
     False, True, False, (Reason.DAMAGED, Reason.FULL)),
    ("damaged-and-model-changed", generation(OTHER), ["missing"], MODEL, CHUNKS, False, False,
     False, True, False, (Reason.DAMAGED,)),
    ("chunking-changed", generation(), [], MODEL, NEW_CHUNKS, False, False,
     False, True, False, (Reason.CHUNKING,)),
    ("chunking-unrecorded", generation(chunking=None), [], MODEL, CHUNKS, False, False,
     False, True, False, (Reason.CHUNKING,)),
    ("model-changed", generation(OTHER), [], MODEL, CHUNKS, False, False,
     False, True, True, (Reason.MODEL,)),
    ("model-failed", generation(), [], None, CHUNKS, False, False,
     False, True, False, (Reason.MODEL,)),
    ("model-back", generation(None), [], MODEL, CHUNKS, False, False,
     False, True, True, (Reason.MODEL,)),
    ("chunking-and-model", generation(OTHER), [], MODEL, NEW_CHUNKS, False, True,
     False, True, True, (Reason.CHUNKING, Reason.MODEL, Reason.FORCED)),
]


@pytest.mark.parametrize("current,damage,model,chunking,full,force,reuse,rechunk,reembed,reasons",
                         [row[1:] for row in TABLE], ids=[row[0] for row in TABLE])
def test_the_plan_follows_the_table(current, damage, model, chunking, full, force, reuse,
                                    rechunk, reembed, reasons):
    plan = plan_refresh(current=current, damage=damage, model_id=model, chunking=chunking,
                        full=full, force=force)
    # Re-embedding: the model changed and vectors come from one now.
    assert (plan.rechunk, Reason.MODEL in plan.reasons and plan.semantic, plan.reasons) == (
        rechunk, reembed, reasons)
    assert plan.base == ("g1" if reuse else None)
    assert plan.model_id == model and plan.semantic is (model is not None)
    assert plan.forced is force
    # Reusing diffs against what the base holds; rebuilding reads every note.
    assert dict(plan.previous) == ({"a.md": ENTRY} if reuse else {})


@pytest.mark.parametrize("row,expected", [
    ("damaged", ["index rebuilt from the notes: integrity: page 3"]),
    ("chunking-changed", ["index rebuilt from the notes: chunking changed (md-v3 -> md-v4)"]),
    ("chunking-unrecorded",
     ["index rebuilt from the notes: chunking changed (unrecorded -> md-v3)"]),
    ("model-changed", ["index re-embedded: the embedding model changed "
                       "(minilm+fp32 -> minilm+int8)"]),
    ("full", []),  # asked for: nothing to warn about
    ("model-failed", []),  # the indexer says the model is unavailable
    ("model-back", []),
    ("nothing-changed", []),
])
def test_warnings_name_why_the_index_was_rebuilt(row, expected):
    _, current, damage, model, chunking, full, force, *_ = next(r for r in TABLE if r[0] == row)
    plan = plan_refresh(current=current, damage=damage, model_id=model, chunking=chunking,
                        full=full, force=force)
    assert list(plan.warnings) == expected


def test_the_report_line_says_why():
    rebuild = plan_refresh(current=generation(OTHER), damage=[], model_id=MODEL,
                           chunking=NEW_CHUNKS, full=False, force=True)
    assert rebuild.describe() == ("rebuilt from the notes: chunking changed, "
                                  "the embedding model changed (forced)")
    edit = plan_refresh(current=generation(), damage=[], model_id=MODEL, chunking=CHUNKS,
                        full=False, force=False)
    assert edit.describe() == "incremental"
