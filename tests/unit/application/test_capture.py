"""CaptureService with fakes: rules checked before any byte is written, then one-note indexing."""

import datetime as dt
import threading

import pytest
import yaml

from capture_fakes import FakeIndex
from memory.adapters.inmemory import FixedClock
from memory.adapters.inmemory.note_writer import InMemoryNoteHistory, InMemoryNoteWriter
from memory.application.capture.service import CaptureService
from memory.application.capture.requests import EditRequest, WriteRequest
from memory.domain.capture_errors import (DuplicateCandidate, DuplicateKnowledge, EditConflict,
                                          NoteAlreadyExists, SecretInNote, SupersedeIncomplete)
from memory.domain.markdown import split_front_matter
from memory.domain.errors import InvalidRequest, NotFound
from memory.domain.new_note import Author
from memory.adapters.inmemory.note_writer import TEST_KEY

file_hash = TEST_KEY.hash  # the fake writer's key

CLIENT = Author.named("claude-code")
OLD = b"---\nmemory_id: api-retry-v1\ntitle: Retry keys\n---\n# Retry keys\n\nPer attempt.\n"


@pytest.fixture
def root():
    return InMemoryNoteWriter({"Repos/api/Notes/retry-v1.md": OLD})


@pytest.fixture
def index(root):
    index = FakeIndex(root)
    index.index_all()
    index.indexed.clear()
    return index


@pytest.fixture
def history():
    return InMemoryNoteHistory()


@pytest.fixture
def service(root, index, history):
    return CaptureService(writer=root, catalogue=index, similar=index, indexer=index,
                          evidence=index, clock=FixedClock("2026-01-15T12:00:00Z"),
                          history=history)


def write(service, **raw):
    raw.setdefault("title", "Idempotent retries")
    raw.setdefault("body", "# Idempotent retries\n\nReuse the key on every retry.\n")
    return service.write(WriteRequest.parse(**raw), CLIENT)


def edit(service, identity, content_hash, operation, **raw):
    return service.edit(EditRequest.parse(identity=identity, content_hash=content_hash,
                                          operation=operation, **raw), CLIENT)


def front(data: bytes) -> dict:
    return yaml.safe_load(split_front_matter(data.decode())[0])


def test_a_write_lands_in_its_scope_folder_with_front_matter_and_is_indexed_alone(
        service, root, index, history):
    result = write(service, repository="API", tags=["payments"], related=["Retry keys"])
    assert result.path == "Repos/api/Notes/idempotent-retries.md"
    data = root.files[result.path]
    assert result.content_hash == file_hash(data) and result.indexed
    assert front(data) == {
        "memory_id": "api-idempotent-retries", "title": "Idempotent retries",
        "type": "memory", "primary_scope": {"kind": "repo", "id": "api"}, "status": "active",
        "created": dt.date(2026, 1, 15), "updated": dt.date(2026, 1, 15), "tags": ["payments"],
        "related": ["[[api-retry-v1]]"],
        "provenance": {"source": "ai-session", "agent": "claude-code"}}
    assert data.decode().endswith("\n# Idempotent retries\n\nReuse the key on every retry.\n")
    assert index.indexed == [(result.path,)]
    assert [i.path for i in result.items] == [result.path]
    assert history.commits == [((result.path,), "memory_write: Idempotent retries",
                                "claude-code")]


def test_a_ticket_write_goes_under_its_repository(service):
    result = write(service, repository="api", ticket="pay-12")
    assert result.path == "Repos/api/Tickets/PAY-12/Notes/idempotent-retries.md"
    assert result.memory_id == "pay-12-idempotent-retries"


def test_an_explicit_path_is_used_as_given(service, root):
    result = write(service, path="Areas/oncall/pager.md")
    assert result.path == "Areas/oncall/pager.md" and "primary_scope" not in \
        front(root.files[result.path])


def test_the_same_title_in_the_scope_is_refused_and_allowed_on_request(service, root, index):
    first = write(service, repository="api")
    with pytest.raises(DuplicateKnowledge) as caught:
        write(service, repository="api", title="IDEMPOTENT RETRIES")
    assert [c.path for c in caught.value.candidates] == [first.path]
    assert "same title" in str(caught.value)
    second = write(service, repository="api", allow_duplicate=True)
    assert second.path == "Repos/api/Notes/idempotent-retries-2.md"
    assert second.memory_id == "api-idempotent-retries-2"
    assert write(service, repository="web").path == "Repos/web/Notes/idempotent-retries.md"


def test_a_near_duplicate_found_by_the_index_is_refused_with_why(service, root, index):
    index.near = [DuplicateCandidate(memory_id="api-retry-v1", path="Repos/api/Notes/retry-v1.md",
                                     title="Retry keys", reason="similar text (semantic 0.91)")]
    files = dict(root.files)
    with pytest.raises(DuplicateKnowledge, match=r"similar text \(semantic 0.91\)"):
        write(service, repository="api")
    assert root.files == files
    assert index.asked[-1][1].repository == "api"
    assert write(service, repository="api", allow_duplicate=True).indexed


def test_an_unindexed_file_at_the_name_is_never_overwritten(service, root):
    root.files["Repos/api/Notes/idempotent-retries.md"] = b"a person's note\n"
    with pytest.raises(NoteAlreadyExists):
        write(service, repository="api")
    assert root.files["Repos/api/Notes/idempotent-retries.md"] == b"a person's note\n"


@pytest.mark.parametrize("raw, error, message", [
    ({"ticket": "PAY-1"}, InvalidRequest, "needs its repository"),
    ({}, InvalidRequest, "say where the note belongs"),
    ({"repository": "api", "related": ["no such note"]}, InvalidRequest, "no known note"),
    ({"repository": "api", "supersedes": "no such note"}, InvalidRequest, "no known note"),
    ({"repository": "api", "body": "AWS key AKIAABCDEFGHIJKLMNOP here"}, SecretInNote,
     r"line 1\d \(aws-access-key\)"),
    ({"repository": "api", "title": "password: hunter2hunter2"}, SecretInNote, "line 3"),
    ({"repository": "api", "body": "x" * (256 * 1024 + 1)}, InvalidRequest, "256 KB"),
    ({"path": ".ai-memory/x.md"}, InvalidRequest, "hidden"),
    ({"path": "../x.md"}, InvalidRequest, "inside the memory root"),
    ({"path": "Decisions/CON.md"}, InvalidRequest, "reserved"),
    ({"repository": "api", "body": "---\ntitle: x\n---\nbody"}, InvalidRequest, "front matter"),
    ({"repository": "api", "body": "  \n"}, InvalidRequest, "empty"),
    ({"repository": "api", "tags": "payments"}, InvalidRequest, "must be a list"),
    ({"repository": "api", "status": "done"}, InvalidRequest, "status must be one of"),
    ({"repository": "api", "allow_duplicate": "yes"}, InvalidRequest, "true or false"),
])
def test_bad_writes_are_refused_with_the_root_unchanged(service, root, index, raw, error,
                                                        message):
    files = dict(root.files)
    with pytest.raises(error, match=message) as caught:
        write(service, **raw)
    assert root.files == files and index.indexed == []
    assert "hunter2" not in str(caught.value) and "AKIAABCDEFGHIJKLMNOP" not in \
        str(caught.value)


def test_supersedes_marks_the_old_note_in_the_same_call(service, root, index, history):
    result = write(service, repository="api", title="Retry keys", supersedes="api-retry-v1")
    old = front(root.files["Repos/api/Notes/retry-v1.md"])
    assert old["status"] == "superseded" and old["superseded_by"] == [result.memory_id]
    assert front(root.files[result.path])["supersedes"] == ["api-retry-v1"]
    assert result.superseded.path == "Repos/api/Notes/retry-v1.md" and result.superseded.indexed
    assert result.superseded.content_hash == file_hash(root.files["Repos/api/Notes/retry-v1.md"])
    assert index.indexed == [(result.path, "Repos/api/Notes/retry-v1.md")]
    assert len(history.commits) == 1 and len(history.commits[0][0]) == 2


def test_a_failed_supersede_keeps_the_new_note_and_says_so(service, root, index):
    root.failing.add("Repos/api/Notes/retry-v1.md")
    with pytest.raises(SupersedeIncomplete) as caught:
        write(service, repository="api", title="Retry keys v2", supersedes="api-retry-v1")
    assert caught.value.path in root.files and caught.value.path in str(caught.value)
    assert root.files["Repos/api/Notes/retry-v1.md"] == OLD
    assert index.indexed == [(caught.value.path,)]


def test_an_edit_on_the_current_hash_changes_the_note_and_indexes_it(service, root, index,
                                                                     history):
    path = "Repos/api/Notes/retry-v1.md"
    result = edit(service, "api-retry-v1", file_hash(OLD), "append", text="Now per charge.")
    assert root.files[path].endswith(b"Per attempt.\nNow per charge.\n")
    assert result.content_hash == file_hash(root.files[path]) and result.indexed
    assert index.indexed == [(path,)] and history.commits[-1][1] == f"memory_edit append: {path}"


def test_a_stale_hash_is_refused_with_the_current_hash_and_the_persons_text_intact(service,
                                                                                   root):
    path = "Repos/api/Notes/retry-v1.md"
    read_hash = file_hash(OLD)
    root.files[path] = OLD + b"A person's line.\n"  # saved in an editor after memory_get
    with pytest.raises(EditConflict) as caught:
        edit(service, path, read_hash, "set_fields", fields={"status": "archived"})
    assert caught.value.current_hash == file_hash(root.files[path])
    assert root.files[path] == OLD + b"A person's line.\n"


def test_a_note_the_index_does_not_know_yet_is_edited_by_its_path(service, root, index):
    root.files["Decisions/new.md"] = b"# New\n"
    result = edit(service, "Decisions/new.md", file_hash(b"# New\n"), "archive")
    assert front(root.files["Decisions/new.md"])["status"] == "archived"
    assert result.memory_id is None
    with pytest.raises(NotFound):
        edit(service, "no such title", file_hash(b""), "archive")


def test_move_keeps_the_identity_and_reindexes_both_paths(service, root, index):
    result = edit(service, "api-retry-v1", file_hash(OLD), "move",
                  new_path="Repos/api/Notes/old/retry-v1.md")
    assert "Repos/api/Notes/retry-v1.md" not in root.files
    assert front(root.files[result.path])["memory_id"] == "api-retry-v1"
    assert index.indexed == [("Repos/api/Notes/retry-v1.md", "Repos/api/Notes/old/retry-v1.md")]
    assert index.find("api-retry-v1").path == result.path


def test_supersede_and_set_fields_refuse_notes_that_do_not_exist(service, root):
    with pytest.raises(InvalidRequest, match="no known note"):
        edit(service, "api-retry-v1", file_hash(OLD), "supersede", superseded_by="nothing")
    with pytest.raises(InvalidRequest, match="no known note"):
        edit(service, "api-retry-v1", file_hash(OLD), "set_fields",
             fields={"related": ["nothing"]})
    assert root.files["Repos/api/Notes/retry-v1.md"] == OLD


def test_an_edit_that_changes_nothing_writes_and_commits_nothing(service, root, history):
    first = edit(service, "api-retry-v1", file_hash(OLD), "archive")
    again = edit(service, "api-retry-v1", first.content_hash, "archive")
    assert not again.changed and again.content_hash == first.content_hash
    assert len(history.commits) == 1


def test_index_and_commit_failures_are_reported_after_the_write(service, index, history):
    index.failing = history.failing = True
    result = write(service, repository="api")
    assert not result.indexed and result.items == () and result.commit is None
    assert any("not committed" in w for w in result.warnings)
    assert "embedder not loaded" in result.warnings


def test_four_threads_appending_with_the_hash_they_read_lose_nothing(service, root):
    path = "Repos/api/Notes/retry-v1.md"
    accepted, conflicts, other = [], [], []

    def agent(number: int) -> None:
        for turn in range(25):
            line = f"agent {number} turn {turn}"
            try:
                edit(service, path, file_hash(root.read(path).data), "append", text=line)
                accepted.append(line)
            except EditConflict:
                conflicts.append(line)
            except Exception as e:  # noqa: BLE001 - any other outcome fails the test
                other.append(repr(e))

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = root.files[path].decode().splitlines()
    assert other == []
    assert len(accepted) + len(conflicts) == 100 and accepted
    assert sorted(line for line in lines if line.startswith("agent ")) == sorted(accepted)


def test_a_secret_is_refused_before_a_duplicate_search_sees_the_text(service, index):
    index.near = [DuplicateCandidate(memory_id="api-retry-v1", path="Repos/api/Notes/retry-v1.md",
                                     title="Retry keys", reason="similar text")]
    with pytest.raises(SecretInNote):
        write(service, repository="api", body="AWS key AKIAABCDEFGHIJKLMNOP here")
    assert index.asked == []
