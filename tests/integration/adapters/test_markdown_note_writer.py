"""MarkdownNoteWriter on real files: atomic, lock-guarded, and the root unchanged on refusal."""

import datetime as dt
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from filelock import FileLock

from memory.adapters.markdown import atomic_files
from memory.adapters.markdown.note_source import MarkdownNoteSource
from memory.adapters.markdown.note_writer import MarkdownNoteWriter
from memory.domain.capture_errors import EditConflict, NoteAlreadyExists, WriteBusy
from memory.domain.errors import InvalidRequest, NotFound
from memory.domain.new_note import Author, NewNote
from memory.domain.note_edits import Move, SetFields
from memory.domain.settable_fields import FieldChanges
from memory.domain.note_text import NoteText
from memory.domain.notes import ScopeKind, Status
from memory.domain.placement import WriteScope
from memory.ports.errors import StoreError
from root_snapshot import snapshot

from memory.adapters.markdown.process_key import PROCESS_KEY

file_hash = PROCESS_KEY.hash  # the key of a writer built without one

SRC = str(Path(__file__).resolve().parents[3] / "src")
NOTE = "Repos/api/Notes/retries.md"
TEXT = b"---\r\nmemory_id: api-retries\r\n# a person's comment\r\n---\r\n# Retries\r\n"


@pytest.fixture
def root(tmp_path):
    folder = tmp_path / "memory"
    (folder / "Repos/api/Notes").mkdir(parents=True)
    (folder / NOTE).write_bytes(TEXT)
    return folder


@pytest.fixture
def writer(root):
    return MarkdownNoteWriter(root, lock_timeout_s=5)


def test_create_writes_exact_bytes_through_a_temporary_file_that_does_not_stay(writer, root):
    written = writer.create("Decisions/sub/use-postgres.md", b"# Use Postgres\n")
    assert written.path == "Decisions/sub/use-postgres.md"
    assert (root / written.path).read_bytes() == b"# Use Postgres\n"
    assert written.content_hash == file_hash(b"# Use Postgres\n")
    assert sorted(p.name for p in (root / "Decisions/sub").iterdir()) == ["use-postgres.md"]
    assert (root / ".ai-memory/.gitignore").read_text() == "*\n"


def test_create_never_overwrites(writer, root):
    before = snapshot(root)
    with pytest.raises(NoteAlreadyExists):
        writer.create(NOTE, b"other")
    assert snapshot(root) == before


@pytest.mark.parametrize("path", ["../escape.md", "/tmp/abs.md", ".ai-memory/x.md",
                                  ".git/x.md", "Repos/.obsidian/x.md", "Decisions/AUX.md",
                                  "Decisions/a:b.md", "Decisions/x\x01.md"])
def test_refused_paths_leave_the_root_unchanged(writer, root, path):
    (root / ".git").mkdir()
    before = snapshot(root)
    with pytest.raises(InvalidRequest):
        writer.create(path, b"x")
    assert snapshot(root) == before
    assert not (root.parent / "escape.md").exists()


def test_a_symlinked_folder_is_refused_wherever_it_points(writer, root, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "Repos/out").symlink_to(outside, target_is_directory=True)
    (root / "Repos/alias").symlink_to(root / "Repos/api", target_is_directory=True)
    before = snapshot(root)
    for path in ("Repos/out/x.md", "Repos/alias/Notes/x.md"):
        with pytest.raises(InvalidRequest, match="symbolic link"):
            writer.create(path, b"x")
    with pytest.raises(InvalidRequest, match="symbolic link"):
        writer.replace("Repos/alias/Notes/retries.md", b"x", expected_hash=file_hash(TEXT))
    assert snapshot(root) == before and list(outside.iterdir()) == []


def test_a_state_folder_inside_the_root_is_refused(root):
    (root / "state").mkdir()
    writer = MarkdownNoteWriter(root, excluded=[root / "state"])
    with pytest.raises(InvalidRequest, match="state"):
        writer.create("state/x.md", b"x")
    assert list((root / "state").iterdir()) == []


def test_replace_applies_only_to_the_version_read(writer, root):
    (root / NOTE).chmod(0o640)
    with pytest.raises(EditConflict) as caught:
        writer.replace(NOTE, b"new", expected_hash=file_hash(b"stale"))
    assert caught.value.current_hash == file_hash(TEXT)
    assert (root / NOTE).read_bytes() == TEXT
    written = writer.replace(NOTE, b"new", expected_hash=file_hash(TEXT))
    assert (root / NOTE).read_bytes() == b"new" and written.content_hash == file_hash(b"new")
    assert (root / NOTE).stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in (root / "Repos/api/Notes").iterdir()) == ["retries.md"]
    with pytest.raises(NotFound):
        writer.replace("Repos/api/Notes/gone.md", b"x", expected_hash=file_hash(b""))


def test_move_puts_the_note_at_its_new_path_and_nowhere_else(writer, root):
    (root / "Decisions").mkdir()
    (root / "Decisions/taken.md").write_bytes(b"taken")
    before = snapshot(root)
    with pytest.raises(NoteAlreadyExists):
        writer.move(NOTE, "Decisions/taken.md", TEXT, expected_hash=file_hash(TEXT))
    with pytest.raises(EditConflict):
        writer.move(NOTE, "Areas/new/x.md", TEXT, expected_hash=file_hash(b"stale"))
    assert snapshot(root) == before
    moved = writer.move(NOTE, "Areas/new/x.md", TEXT + b"more\n", expected_hash=file_hash(TEXT))
    assert moved.path == "Areas/new/x.md" and not (root / NOTE).exists()
    assert (root / "Areas/new/x.md").read_bytes() == TEXT + b"more\n"


def test_a_failing_rename_leaves_no_temporary_file_and_no_new_folder(writer, root,
                                                                      monkeypatch):
    def full_disk(*_, **__):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(atomic_files.os, "link", full_disk)
    monkeypatch.setattr(atomic_files.os, "replace", full_disk)
    before = snapshot(root)
    with pytest.raises(StoreError, match="No space left"):
        writer.create("Projects/new/Notes/x.md", b"x")
    with pytest.raises(StoreError, match="No space left"):
        writer.replace(NOTE, b"x", expected_hash=file_hash(TEXT))
    with pytest.raises(StoreError, match="No space left"):
        writer.move(NOTE, "Areas/a/b.md", b"x", expected_hash=file_hash(TEXT))
    assert snapshot(root) == before


def test_a_held_lock_makes_writers_wait_then_give_up_cleanly(root):
    writer = MarkdownNoteWriter(root, lock_timeout_s=0.2)
    writer.create("Decisions/first.md", b"x")  # makes the lock folder
    before = snapshot(root)
    with FileLock(str(root / ".ai-memory/locks/write.lock")):
        with pytest.raises(WriteBusy):
            writer.replace(NOTE, b"y", expected_hash=file_hash(TEXT))
    assert snapshot(root) == before


def test_existing_folders_keep_their_spelling(writer, root):
    (root / "Repos").rename(root / "repos")
    written = writer.create("Repos/api/Notes/new.md", b"x")
    assert written.path == "repos/api/Notes/new.md"
    assert (root / "repos/api/Notes/new.md").read_bytes() == b"x"


def test_notes_named_before_the_rules_stay_editable(writer, root):
    (root / "Decisions").mkdir()
    (root / "Decisions/a:b.md").write_bytes(b"old")
    writer.replace("Decisions/a:b.md", b"new", expected_hash=file_hash(b"old"))
    assert (root / "Decisions/a:b.md").read_bytes() == b"new"


def test_what_is_written_is_what_the_index_reads(writer, root):
    scope = WriteScope.parse(repository="payments-api", ticket="PAY-7")
    note = NewNote(memory_id="pay-7-retry: \"keys\"", title="Retry keys: yes, #1",
                   body=("# Retry keys", "", "Reuse the key."), scope=scope,
                   author=Author.named("codex"), today=dt.date(2026, 1, 15),
                   status=Status.NEEDS_REVIEW, tags=("payments", "null", "retry keys"),
                   related=("api-retries",), supersedes=("pay-7-old",))
    path = scope.place(note.title)
    writer.create(path, note.text().encode())
    source = MarkdownNoteSource(root)
    doc = source.load(path)
    read = doc.note
    assert doc.warnings == ()
    assert (read.memory_id, read.title, read.type, read.status) == \
        (note.memory_id, note.title, "memory", Status.NEEDS_REVIEW)
    assert (read.scope_kind, read.repository, read.ticket) == \
        (ScopeKind.TICKET, "payments-api", "PAY-7")
    assert (read.created, read.updated) == ("2026-01-15", "2026-01-15")
    assert read.tags == ("payments", "null", "retry keys")
    assert read.related == ("api-retries",) and read.supersedes == ("pay-7-old",)
    assert doc.front_matter["provenance"] == {"source": "ai-session", "agent": "codex"}
    assert read.content_hash == writer.read(path).content_hash

    changes = FieldChanges.parse({"status": "archived", "review_after": "2026-07-01"})
    current = writer.read(path)
    edited = SetFields(changes=changes).apply(NoteText.decode(current.data, path),
                                              dt.date(2026, 2, 1))
    writer.replace(path, edited.encode(), expected_hash=current.content_hash)
    reread = source.load(path).note
    assert (reread.status, reread.review_after, reread.updated) == \
        (Status.ARCHIVED, "2026-07-01", "2026-02-01")


def test_a_moved_note_without_a_memory_id_keeps_the_one_it_was_known_by(writer, root):
    (root / "Decisions").mkdir()
    (root / "Decisions/bare.md").write_bytes(b"# Bare\n")
    source = MarkdownNoteSource(root)
    known = source.load("Decisions/bare.md").note.memory_id
    current = writer.read("Decisions/bare.md")
    text = Move(new_path="Areas/bare.md", memory_id=known).apply(
        NoteText.decode(current.data, "Decisions/bare.md"), dt.date(2026, 1, 1))
    writer.move("Decisions/bare.md", "Areas/bare.md", text.encode(),
                expected_hash=current.content_hash)
    assert source.load("Areas/bare.md").note.memory_id == known


AGENT = """
import json, os, sys, time
from memory.adapters.markdown.note_writer import MarkdownNoteWriter
from memory.domain.capture_errors import EditConflict
writer = MarkdownNoteWriter(sys.argv[1], lock_timeout_s=30)
accepted, conflicts = [], []
while not os.path.exists(sys.argv[5]):  # all start together, so their edits overlap
    time.sleep(0.001)
for turn in range(int(sys.argv[3])):
    line = f"agent {sys.argv[2]} turn {turn}"
    current = writer.read(sys.argv[4])
    try:
        writer.replace(sys.argv[4], current.data + line.encode() + b"\\n",
                       expected_hash=current.content_hash)
        accepted.append(line)
    except EditConflict:
        conflicts.append(line)
print(json.dumps({"accepted": accepted, "conflicts": conflicts}))
"""


def test_four_processes_appending_with_the_hash_they_read_lose_nothing(root, tmp_path):
    env = {**os.environ, "PYTHONPATH": SRC}
    go = tmp_path / "go"
    agents = [subprocess.Popen([sys.executable, "-c", AGENT, str(root), str(n), "40", NOTE,
                                str(go)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
              for n in range(4)]
    go.touch()
    outcomes = []
    for agent in agents:
        out, err = agent.communicate(timeout=120)
        assert agent.returncode == 0, err.decode()  # any other outcome than the two fails
        outcomes.append(json.loads(out))
    accepted = [line for o in outcomes for line in o["accepted"]]
    conflicts = [line for o in outcomes for line in o["conflicts"]]
    assert len(accepted) + len(conflicts) == 160 and accepted
    lines = (root / NOTE).read_bytes().decode().split("\r\n")[-1].split("\n")
    assert sorted(line for line in lines if line.startswith("agent ")) == sorted(accepted)
    assert (root / NOTE).read_bytes().startswith(TEXT)


def test_four_threads_on_one_writer_lose_nothing(writer, root):
    accepted, conflicts, other = [], [], []

    def agent(number: int) -> None:
        for turn in range(30):
            line = f"thread {number} turn {turn}"
            current = writer.read(NOTE)
            try:
                writer.replace(NOTE, current.data + line.encode() + b"\n",
                               expected_hash=current.content_hash)
                accepted.append(line)
            except EditConflict:
                conflicts.append(line)
            except Exception as e:  # noqa: BLE001 - any other outcome fails the test
                other.append(repr(e))

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = (root / NOTE).read_bytes().decode().split("\n")
    assert other == [] and len(accepted) + len(conflicts) == 120 and accepted
    assert sorted(line for line in lines if line.startswith("thread ")) == sorted(accepted)


EDITS = 2000  # a few seconds; a check-then-open writer loses this race many times over


def test_a_folder_swapped_for_a_link_during_writes_never_sends_one_outside(root, tmp_path):
    """A racer swaps the note's folder for a link out of the root and back, again and again,
    while edits run: each edit lands in the note's own folder or is refused, none reaches
    the file the link points at (it even holds the same bytes, so a hash check passes)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "retries.md").write_bytes(TEXT)
    folder, held = root / "Repos/api/Notes", root / "Repos/api/held"
    writer = MarkdownNoteWriter(root, lock_timeout_s=30)
    stop, swaps = threading.Event(), []

    def racer() -> None:
        while not stop.is_set() and len(swaps) < 20_000:
            os.rename(folder, held)
            os.symlink(outside, folder)
            os.unlink(folder)
            os.rename(held, folder)
            swaps.append(1)

    thread = threading.Thread(target=racer)
    thread.start()
    current, last, landed, refused = file_hash(TEXT), TEXT, 0, 0
    try:
        for i in range(EDITS):
            data = TEXT + f"edit {i}\n".encode()
            try:
                current = writer.replace(NOTE, data, expected_hash=current).content_hash
            except (InvalidRequest, NotFound) as e:
                assert "symbolic link" in str(e) or "no note" in str(e), e
                refused += 1
                continue
            last, landed = data, landed + 1
    finally:
        stop.set()
        thread.join()
    assert os.listdir(outside) == ["retries.md"] and (outside / "retries.md").read_bytes() == TEXT
    assert (root / NOTE).read_bytes() == last and landed + refused == EDITS and swaps
    assert sorted(os.listdir(folder)) == ["retries.md"]  # no temporary file stayed behind


def test_steps_in_an_opened_folder_stay_there_when_its_name_becomes_a_link(tmp_path):
    """The mechanism under the writer: once a folder is opened, renaming it away and putting
    a link in its place moves nothing that follows; a new walk refuses the link."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "a/b").mkdir(parents=True)
    outside.mkdir()
    with atomic_files.walked(root, ["a", "b"]) as (folder, _):
        os.rename(root / "a", root / "moved")
        os.symlink(outside, root / "a", target_is_directory=True)
        folder.rename_no_replace(folder.write_temp("n.md", b"x"), "n.md")
        assert folder.read("n.md", 10)[0] == b"x"
    assert (root / "moved/b/n.md").read_bytes() == b"x" and os.listdir(outside) == []
    with pytest.raises(atomic_files.LinkOnTheWay):
        with atomic_files.walked(root, ["a", "b"]):
            pass
    assert os.listdir(outside) == []
