"""MarkdownNoteSource.stat: one file as scan() lists it, by the same rules, without a scan."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from memory.adapters.markdown import MarkdownNoteSource
from memory.adapters.markdown.file_names import printable_path
from memory.domain.errors import InvalidRequest
from memory.domain.notes import note_path


def write(root: Path, rel: str | bytes, content: bytes = b"# x\n") -> None:
    path = os.path.join(os.fsencode(root), rel if isinstance(rel, bytes) else rel.encode())
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(content)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "memory"
    base.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    write(base, "Repos/alpha/Notes/retry.md")
    write(base, "top.MD")
    write(base, "image.png")
    write(base, "big.md", b"x" * 300)
    for hidden in (".ai-memory/gen/x.md", ".git/x.md", "Repos/.obsidian/x.md", ".hidden.md"):
        write(base, hidden)
    (base / "leak.md").symlink_to(outside / "secret.md")
    (base / "leakdir").symlink_to(outside, target_is_directory=True)
    (base / "alias.md").symlink_to(base / "top.MD")
    (base / "broken.md").symlink_to(base / "nowhere.md")
    (base / "folder.md").mkdir()
    if sys.platform == "linux":
        write(base, b"caf\xe9.md")
        write(base, b"both\xe9.md", b"# the escaped one, longer\n")
        write(base, b"both%E9.md", b"# literal\n")
    return base


def candidates(root: Path) -> set[str]:
    """Every path under root a caller could name, as note paths spell them, and a few more."""
    found = set()
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        found |= {printable_path(name if rel == "." else f"{rel}/{name}")
                  for name in [*dirs, *files]}
    return found | {"missing.md", "Repos/alpha/Notes/missing.md", "leakdir/secret.md",
                    "nowhere/x.md"}


def test_stat_answers_what_scan_lists_for_every_path(root):
    source = MarkdownNoteSource(root, max_file_bytes=200)
    scanned = source.scan().files
    assert "Repos/alpha/Notes/retry.md" in scanned and "alias.md" in scanned
    hidden = 0
    for path in sorted(candidates(root) | set(scanned)):
        try:
            note_path(path)
        except InvalidRequest:  # hidden: no note path at all, as load() says too
            hidden += 1
            with pytest.raises(InvalidRequest):
                source.stat(path)
            continue
        assert source.stat(path) == scanned.get(path), path
    assert hidden >= 4


def test_stat_sees_a_change_a_scan_would_see(root):
    source = MarkdownNoteSource(root)
    before = source.stat("top.MD")
    write(root, "top.MD", b"# changed, longer\n")
    assert source.stat("top.MD") == source.scan().files["top.MD"] != before


@pytest.mark.parametrize("bad", ["../outside/secret.md", "/etc/passwd.md"])
def test_stat_refuses_paths_that_are_no_note_paths(root, bad):
    with pytest.raises(InvalidRequest):
        MarkdownNoteSource(root).stat(bad)
