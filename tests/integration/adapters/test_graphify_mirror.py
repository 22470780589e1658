"""The mirror Graphify reads is written only inside its folder: a link in it is replaced."""

from __future__ import annotations

import os

from memory.adapters.graphify.mirror import mirror_text, update_mirror
from memory.domain.note_reading import read_note


def doc(path: str, body: str):
    return read_note(path, ["# Title", "", body], None, content_hash="0" * 64)


def test_links_planted_in_the_mirror_are_replaced_never_written_through(tmp_path):
    mirror, outside = tmp_path / "mirror", tmp_path / "outside"
    (mirror / "Notes").mkdir(parents=True)
    outside.mkdir()
    (outside / "victim.md").write_text("keep me\n", encoding="utf-8")
    (mirror / "Notes/a.md").symlink_to(outside / "victim.md")
    (mirror / "Deep").symlink_to(outside, target_is_directory=True)
    docs = [doc("Notes/a.md", "alpha text"), doc("Deep/victim.md", "beta text")]
    files, left_out = update_mirror(mirror, docs)
    assert left_out == [] and sorted(f.relative_to(mirror).as_posix() for f in files) == [
        "Deep/victim.md", "Notes/a.md"]
    assert (outside / "victim.md").read_text(encoding="utf-8") == "keep me\n"
    assert os.listdir(outside) == ["victim.md"]
    for path, note in zip(("Notes/a.md", "Deep/victim.md"), docs):
        assert not (mirror / path).is_symlink() and not (mirror / path).parent.is_symlink()
        assert (mirror / path).read_text(encoding="utf-8") == mirror_text(note)
