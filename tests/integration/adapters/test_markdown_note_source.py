"""MarkdownNoteSource over real files in tmp_path: scanning, safety, parsing and spans."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from memory.adapters.markdown import MarkdownNoteSource
from memory.adapters.markdown.atomic_files import LinkOnTheWay
from memory.adapters.markdown.note_places import NotePlaces
from memory.domain.note_text import ContentKey
from memory.domain.errors import InvalidRequest, NotFound
from memory.domain.notes import ScopeKind, Status
from memory.ports.note_source import NoteSource


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "memory"
    base.mkdir()
    return base


def test_is_a_note_source_with_an_absolute_root(root):
    source = MarkdownNoteSource(root)
    assert isinstance(source, NoteSource)
    assert source.root == os.path.realpath(root)


def test_scan_lists_markdown_files_and_skips_hidden_and_other_files(root):
    write(root, "Repos/alpha/Notes/retry.md", "# Retry\n")
    write(root, "top.MD", "x")
    write(root, "image.png", "x")
    for hidden in (".ai-memory/gen/x.md", ".git/x.md", ".obsidian/x.md", ".trash/x.md",
                   ".private/x.md", ".hidden.md"):
        write(root, hidden, "x")
    scan = MarkdownNoteSource(root).scan()
    assert list(scan.files) == ["Repos/alpha/Notes/retry.md", "top.MD"]
    info = scan.files["Repos/alpha/Notes/retry.md"]
    stat = (root / "Repos/alpha/Notes/retry.md").stat()
    assert (info.path, info.size, info.mtime_ns) == (
        "Repos/alpha/Notes/retry.md", stat.st_size, stat.st_mtime_ns)
    assert scan.warnings == ()


def test_scan_skips_files_over_the_size_limit_with_a_warning(root):
    write(root, "big.md", "x" * 200)
    write(root, "small.md", "x")
    scan = MarkdownNoteSource(root, max_file_bytes=100).scan()
    assert list(scan.files) == ["small.md"]
    assert len(scan.warnings) == 1 and "big.md" in scan.warnings[0]


def test_scan_skips_symlinks_out_of_the_root_with_a_warning(root, tmp_path):
    outside = tmp_path / "outside"
    write(outside, "secret.md", "secret")
    write(root, "real/inside.md", "x")
    (root / "leak.md").symlink_to(outside / "secret.md")
    (root / "leakdir").symlink_to(outside, target_is_directory=True)
    (root / "alias.md").symlink_to(root / "real/inside.md")
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "broken.md").symlink_to(root / "nowhere.md")
    scan = MarkdownNoteSource(root).scan()
    assert list(scan.files) == ["alias.md", "real/inside.md"]
    joined = "\n".join(scan.warnings)
    assert "leak.md" in joined and "leakdir" in joined and "broken.md" in joined
    assert "loop" not in joined


def test_scan_of_a_missing_root_is_not_found(tmp_path):
    with pytest.raises(NotFound):
        MarkdownNoteSource(tmp_path / "absent").scan()


@pytest.mark.parametrize("bad", [
    "../x.md", "a/../../x.md", "/etc/passwd.md", "~/x.md", "C:\\x.md", "c:x.md",
    "\\\\server\\share\\x.md", "//server/share/x.md", ".git/x.md", "notes.txt", "", "a\x00.md",
])
def test_load_refuses_paths_that_could_leave_the_root(root, bad):
    write(root, "x.md", "x")
    with pytest.raises(InvalidRequest):
        MarkdownNoteSource(root).load(bad)


def test_load_refuses_a_symlink_resolving_outside_and_reports_missing_notes(root, tmp_path):
    write(tmp_path / "outside", "secret.md", "secret")
    (root / "leak.md").symlink_to(tmp_path / "outside/secret.md")
    source = MarkdownNoteSource(root)
    with pytest.raises(InvalidRequest):
        source.load("leak.md")
    with pytest.raises(NotFound):
        source.load("missing.md")
    write(root, "ok.md", "fine")
    assert source.load("./ok.md").note.path == "ok.md"


def test_binary_and_non_utf8_files_raise_invalid_request_naming_the_file(root):
    write(root, "bin.md", b"# x\x00\x01")
    write(root, "latin.md", "caf\u00e9".encode("latin-1"))
    source = MarkdownNoteSource(root)
    for name in ("bin.md", "latin.md"):
        with pytest.raises(InvalidRequest, match=name):
            source.load(name)


def test_bom_is_stripped_and_hash_is_of_the_raw_bytes(root):
    raw = "\ufeff---\ntitle: Bom\n---\nbody\n".encode("utf-8")
    write(root, "bom.md", raw)
    key = ContentKey(b"a test's content key, 32 bytes..")
    doc = MarkdownNoteSource(root, key=key).load("bom.md")
    assert doc.note.title == "Bom" and doc.lines[0] == "---"
    assert doc.note.content_hash == key.hash(raw) != hashlib.sha256(raw).hexdigest()


def test_bad_yaml_still_indexes_the_body_with_a_warning(root):
    write(root, "Repos/alpha/bad.md", "---\ntitle: [unclosed\n---\n# Heading\nthe body\n")
    write(root, "list.md", "---\n- a\n- b\n---\nbody\n")
    source = MarkdownNoteSource(root)
    doc = source.load("Repos/alpha/bad.md")
    assert doc.note.title == "Heading" and doc.note.repository == "alpha"
    assert [c.text for c in doc.chunks] == ["# Heading\nthe body"]
    assert len(doc.warnings) == 1
    assert doc.warnings[0].startswith("Repos/alpha/bad.md: front matter ignored:")
    listed = source.load("list.md")
    assert "expected a mapping" in listed.warnings[0] and listed.chunks[0].text == "body"


def test_yaml_alias_bomb_and_deep_nesting_are_refused_unexpanded(root):
    bomb = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(ord("b"), ord("j")):
        prev = chr(i - 1)
        bomb.append(f"{chr(i)}: &{chr(i)} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},"
                    f"*{prev},*{prev},*{prev}]")
    write(root, "bomb.md", "---\n" + "\n".join(bomb) + "\n---\nstill here\n")
    write(root, "deep.md", "---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\ndeep body\n")
    source = MarkdownNoteSource(root)
    doc = source.load("bomb.md")  # expanded, it would be 9**9 strings
    deep = source.load("deep.md")  # parsed, it would recurse 5,000 levels
    assert "aliases" in doc.warnings[0] and doc.chunks[0].text == "still here"
    assert doc.front_matter == {}
    assert "front matter ignored" in deep.warnings[0] and deep.chunks[0].text == "deep body"


def test_oversized_front_matter_is_ignored_with_a_warning(root):
    write(root, "fat.md", "---\nnote: " + "x" * 500 + "\n---\nbody\n")
    doc = MarkdownNoteSource(root, max_front_matter_bytes=100).load("fat.md")
    assert "over 100 bytes" in doc.warnings[0] and doc.chunks[0].text == "body"


def test_front_matter_fields_become_the_note(root):
    write(root, "Repos/alpha/Notes/retry.md", "\n".join([
        "---",
        "memory_id: mem-retry-001",
        "title: Retry policy",
        "type: memory",
        "root_scope: Personal",
        "status: needs_review",
        "created: 2024-03-01",
        "updated: 2024-03-05T10:20:30",
        "review_after: '2025-01-01'",
        "related: [[Backoff]]",
        "related_repos: Alpha, Beta",
        "superseded_by:",
        "  - '[[Retry policy v2|v2]]'",
        "tags: [retry, '#http']",
        "aliases: retries",
        "provenance: {source: chat, at: 2024-03-01}",
        "---",
        "# Retry policy",
        "Use [[Jitter]] and [the guide](../guide.md).",
    ]) + "\n")
    doc = MarkdownNoteSource(root).load("Repos/alpha/Notes/retry.md")
    note = doc.note
    assert (note.memory_id, note.title, note.root_scope) == ("mem-retry-001", "Retry policy",
                                                           "personal")
    assert note.status is Status.NEEDS_REVIEW
    assert note.effective_status is Status.NEEDS_REVIEW
    assert (note.created, note.updated, note.review_after) == (
        "2024-03-01", "2024-03-05T10:20:30", "2025-01-01")
    assert note.related == ("Backoff",) and note.superseded_by == ("Retry policy v2",)
    assert note.related_repos == ("alpha", "beta") and note.repository == "alpha"
    assert note.tags == ("retry", "http") and note.aliases == ("retries",)
    assert note.links == ("Jitter", "../guide.md", "Backoff")
    assert note.line_count == 19
    assert doc.chunks[0].context == "Retry policy | 2024-03-01"
    assert doc.chunks[0].chunk_id == "mem-retry-001#0"
    assert json.loads(json.dumps(doc.front_matter))["provenance"]["at"] == "2024-03-01"
    assert doc.warnings == ()


def test_bare_file_gets_identity_title_and_scope_from_its_path(root):
    write(root, "Repos/Alpha/Tickets/alpha-142/Notes/Root Cause.md", "plain text\n")
    doc = MarkdownNoteSource(root).load("Repos/Alpha/Tickets/alpha-142/Notes/Root Cause.md")
    note = doc.note
    assert note.memory_id == "repos/alpha/tickets/alpha-142/notes/root cause"
    assert note.title == "Root Cause" and note.type == "memory" and note.root_scope == "work"
    assert (note.scope_kind, note.scope_id, note.repository, note.ticket) == (
        ScopeKind.TICKET, "ALPHA-142", "alpha", "ALPHA-142")


@pytest.mark.parametrize("scope, expected", [
    ("{kind: repository, id: Beta}", (ScopeKind.REPO, "beta", "beta", None, None)),
    ("{kind: ticket, id: beta-9}", (ScopeKind.TICKET, "BETA-9", "alpha", None, "BETA-9")),
    ("{kind: project, id: Apollo}", (ScopeKind.PROJECT, "apollo", None, "apollo", None)),
    ("{kind: tool, id: git}", (ScopeKind.TOOL, "git", None, None, None)),
    ("{kind: repo}", (ScopeKind.REPO, "alpha", "alpha", None, None)),
])
def test_primary_scope_wins_over_the_folder(root, scope, expected):
    write(root, "Repos/alpha/n.md", f"---\nprimary_scope: {scope}\n---\nbody\n")
    note = MarkdownNoteSource(root).load("Repos/alpha/n.md").note
    assert (note.scope_kind, note.scope_id, note.repository, note.project,
            note.ticket) == expected


def test_unusable_fields_are_ignored_with_warnings(root):
    write(root, "Projects/apollo/n.md",
          "---\nprimary_scope: {kind: galaxy, id: x}\nstatus: bogus\ntitle: [a, b]\n---\nb\n")
    doc = MarkdownNoteSource(root).load("Projects/apollo/n.md")
    assert doc.note.project == "apollo" and doc.note.status is Status.ACTIVE
    assert doc.note.title == "n"
    assert len(doc.warnings) == 3
    assert all(w.startswith("Projects/apollo/n.md: ") for w in doc.warnings)


def test_crlf_file_spans_cite_exact_lines(root):
    text = "---\r\ntitle: C\r\n---\r\n# Head\r\n" + "".join(f"line {i}\r\n" for i in range(12))
    write(root, "crlf.md", text)
    doc = MarkdownNoteSource(root).load("crlf.md")
    assert len(doc.lines) == 16 and all("\r" not in line for line in doc.lines)
    assert [(c.start_line, c.end_line) for c in doc.chunks] == [(4, 11), (10, 16)]
    for chunk in doc.chunks:
        assert chunk.text == "\n".join(doc.lines[chunk.start_line - 1:chunk.end_line])
    assert doc.lines[3] == "# Head" and doc.chunks[0].text.startswith("# Head\nline 0")


def test_nothing_is_written_to_the_root(root):
    write(root, "a.md", "---\ntitle: A\n---\nx\n")
    write(root, "Repos/r/b.md", "---\nbad: [\n---\ny\n")
    before = sorted((str(p), p.stat().st_mtime_ns) for p in root.rglob("*"))
    source = MarkdownNoteSource(root)
    for rel in source.scan().files:
        source.load(rel)
    assert sorted((str(p), p.stat().st_mtime_ns) for p in root.rglob("*")) == before


def write_name(root: Path, name: bytes, content: str) -> None:
    path = os.fsencode(root) + b"/" + name
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(content.encode("utf-8"))


@pytest.mark.skipif(sys.platform != "linux", reason="names of any bytes are a Linux thing")
def test_names_that_are_not_text_are_printable_note_paths_that_read_the_file(root):
    names = {b"caf\xe9.md": "caf%E9.md", b"Ordner\xfc/x.md": "Ordner%FC/x.md",
             b"line\nbreak.md": "line%0Abreak.md", b"bell\x07 %41.md": "bell%07 %2541.md",
             "plain %41 é.md".encode(): "plain %41 é.md"}
    for name, _ in names.items():
        write_name(root, name, f"# {name!r}\n\nbody of {name.hex()}\n")
    source = MarkdownNoteSource(root)
    scan = source.scan()
    assert sorted(scan.files) == sorted(names.values()) and scan.warnings == ()
    for name, path in names.items():
        doc = source.load(path)
        assert doc.note.path == path and f"body of {name.hex()}" in doc.lines
        json.dumps(doc.note.path).encode("utf-8")  # no surrogate can reach a writer
    assert source.load(os.fsdecode(b"caf\xe9.md")).note.path == "caf%E9.md"
    with pytest.raises(NotFound):
        source.load("caf%E8.md")


@pytest.mark.skipif(sys.platform != "linux", reason="names of any bytes are a Linux thing")
def test_a_real_file_named_like_a_spelling_wins_and_the_other_is_named(root):
    write_name(root, b"caf\xe9.md", "# latin\n")
    write_name(root, b"caf%E9.md", "# literal\n")
    source = MarkdownNoteSource(root)
    scan = source.scan()
    assert list(scan.files) == ["caf%E9.md"]
    assert "caf%E9.md: skipped, another file is named exactly so" in scan.warnings
    assert source.load("caf%E9.md").note.title == "literal"


def test_front_matter_nested_too_deep_is_ignored_and_the_body_indexed(root):
    write(root, "deep.md", "---\ntitle: Deep\nk: " + "{a: " * 40 + "1" + "}" * 40
          + "\n---\n# Heading\ndeep body\n")
    write(root, "fine.md", "---\nk: " + "{a: " * 20 + "1" + "}" * 20 + "\n---\nfine body\n")
    source = MarkdownNoteSource(root)
    deep = source.load("deep.md")
    assert deep.warnings == ("deep.md: front matter ignored: nested deeper than 32 levels "
                             "(line 3)",)
    assert deep.note.title == "Heading" and deep.front_matter == {}
    assert [c.text for c in deep.chunks] == ["# Heading\ndeep body"]
    assert source.load("fine.md").warnings == ()


def test_secret_values_are_replaced_before_the_note_is_derived(root):
    key = "AKIAPLANTEDKEY7731XZ"
    write(root, "Repos/ops/keys.md", f"---\nmemory_id: {key}\ntitle: Key {key}\naliases: [{key}]"
          f"\nnote: {key}\n---\n# Keys\nThe key {key} rotates.\n[[Other {key}]]\n")
    doc = MarkdownNoteSource(root).load("Repos/ops/keys.md")
    derived = json.dumps([doc.note.memory_id, doc.note.title, doc.note.aliases, doc.note.links,
                          doc.lines, doc.front_matter, [c.text for c in doc.chunks],
                          [c.context for c in doc.chunks], doc.warnings])
    assert key not in derived
    assert doc.note.memory_id == "repos/ops/keys" and doc.note.aliases == ()
    assert doc.note.title == "Key [REDACTED:aws-access-key]"
    assert any("memory_id ignored: looks like a secret" in w for w in doc.warnings)
    assert any("secret-shaped text on line(s) 2, 3, 4, 5, 8, 9" in w for w in doc.warnings)
    assert key in (root / "Repos/ops/keys.md").read_text("utf-8")  # the note is never rewritten


LINKED = {  # a link's path -> what it points at, relative to the root
    "git.md": ".git/config",
    "Notes/state.md": "state/kept.md",
    "hidden.md": ".hidden/n.md",
    "Notes/dot.md": "Notes/.draft.md",
    "Notes/text.md": "Notes/data.txt",
    "deep/a/b/default-state.md": ".ai-memory/index.md",
    "Notes/through-folder.md": "Notes/linked/n.md",  # Notes/linked -> ../.hidden
}


def test_a_link_into_git_a_state_or_hidden_folder_is_never_a_note(root, tmp_path):
    for target in (".git/config", "state/kept.md", ".hidden/n.md", "Notes/.draft.md",
                   "Notes/data.txt", ".ai-memory/index.md"):
        write(root, target, "# Kept\n\nkeptmarker\n")
    write(tmp_path / "elsewhere-state", "kept.md", "# Kept\n\nkeptmarker\n")
    write(root, "Notes/real.md", "# Real\n")
    (root / "Notes/linked").symlink_to("../.hidden", target_is_directory=True)
    for rel, target in {**LINKED, "alias.md": "Notes/real.md"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).symlink_to(os.path.relpath(root / target, (root / rel).parent))
    (root / "outside-state.md").symlink_to(tmp_path / "elsewhere-state/kept.md")
    source = MarkdownNoteSource(root, excluded=[root / "state", tmp_path / "elsewhere-state"])
    scan = source.scan()
    assert list(scan.files) == ["Notes/real.md", "alias.md"]
    joined = "\n".join(scan.warnings)
    assert all(rel in joined for rel in (*LINKED, "outside-state.md")), joined
    assert source.load("alias.md").note.title == "Real"
    for rel in (*LINKED, "outside-state.md", "state/kept.md"):
        assert source.stat(rel) is None, rel
        with pytest.raises(InvalidRequest) as refused:
            source.load(rel)
        assert "keptmarker" not in str(refused.value)


def test_a_note_whose_folder_becomes_a_link_after_the_check_is_not_read(root, tmp_path):
    write(root, "Notes/n.md", "# N\n")
    write(tmp_path / "outside", "n.md", "# Outside\n")
    places = NotePlaces(os.path.realpath(root))
    real = os.path.realpath(root / "Notes/n.md")
    assert places.refusal(real) is None and places.read(real, 100)[0] == b"# N\n"
    os.rename(root / "Notes", root / "Moved")
    (root / "Notes").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(LinkOnTheWay):
        places.read(real, 100)
    with pytest.raises(InvalidRequest):
        MarkdownNoteSource(root).load("Notes/n.md")
