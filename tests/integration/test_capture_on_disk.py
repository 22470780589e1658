"""CaptureService on real files and the real note parser: what it writes the index reads, and
what it refuses leaves the root byte for byte as it was."""

import pytest

from memory.adapters.inmemory import FixedClock
from memory.adapters.markdown.note_source import MarkdownNoteSource
from memory.adapters.markdown.note_writer import MarkdownNoteWriter
from memory.application.capture.service import CaptureService
from memory.application.capture.requests import EditRequest, WriteRequest
from memory.domain.capture_errors import EditConflict, SecretInNote
from memory.domain.errors import AiMemoryError, InvalidRequest
from memory.domain.evidence import EvidenceItem, Signals
from memory.domain.new_note import Author
from memory.domain.notes import Status
from memory.ports.capture_index import IndexOutcome
from root_snapshot import snapshot

CLIENT = Author.named("opencode")
PERSON = "Repos/api/Notes/person.md"
PERSON_TEXT = b"# Deploys\r\n\r\nRun `make deploy`.\r\n"


class SourceIndex:
    """The Protocols capture needs, answered by parsing the root (tests only: O(notes))."""

    def __init__(self, source: MarkdownNoteSource):
        self._source = source
        self.indexed: list[tuple[str, ...]] = []

    def _notes(self):
        return [self._source.load(p).note for p in self._source.scan().files]

    def find(self, identity):
        return next((n for n in self._notes()
                     if identity in (n.memory_id, n.path) or identity.lower() == n.title.lower()),
                    None)

    def titled(self, title):
        return [n for n in self._notes() if n.title.lower() == title.lower()]

    def similar(self, *, title, body, scope):
        return []

    def index_paths(self, paths):
        self.indexed.append(tuple(paths))
        return IndexOutcome(indexed=True)

    def items(self, path):
        doc = self._source.load(path)
        return [EvidenceItem(memory_id=c.memory_id, path=c.path, title=doc.note.title,
                             heading=c.heading, start_line=c.start_line, end_line=c.end_line,
                             text=c.text, score=1.0, signals=Signals(),
                             status=doc.note.status.value) for c in doc.chunks]


@pytest.fixture
def root(tmp_path):
    folder = tmp_path / "memory"
    (folder / "Repos/api/Notes").mkdir(parents=True)
    (folder / PERSON).write_bytes(PERSON_TEXT)
    return folder


@pytest.fixture
def source(root):
    return MarkdownNoteSource(root)


@pytest.fixture
def service(root, source):
    index = SourceIndex(source)
    return CaptureService(writer=MarkdownNoteWriter(root), catalogue=index, similar=index,
                          indexer=index, evidence=index, clock=FixedClock())


def write(service, **raw):
    values = {"title": "Retry keys", "body": "# Retry keys\n\nReuse the key.\n", **raw}
    return service.write(WriteRequest.parse(**values), CLIENT)


def edit(service, identity, content_hash, operation, **raw):
    return service.edit(EditRequest.parse(identity=identity, content_hash=content_hash,
                                          operation=operation, **raw), CLIENT)


def test_write_edit_move_and_supersede_read_back_through_the_parser(service, source, root):
    first = write(service, repository="api", tags=["payments"], related=[PERSON])
    note = source.load(first.path).note
    assert (note.memory_id, note.repository, note.related) == \
        ("api-retry-keys", "api", ("repos/api/notes/person",))
    assert [i.heading for i in first.items] == ["Retry keys"]
    assert [i.text for i in first.items] == ["# Retry keys\n\nReuse the key."]

    appended = edit(service, first.memory_id, first.content_hash, "append",
                    text="Keys live 24 h.", heading="Lifetime")
    assert source.load(first.path).lines[-2:] == ("## Lifetime", "Keys live 24 h.")
    moved = edit(service, first.memory_id, appended.content_hash, "move",
                 new_path="Repos/api/Notes/payments/retry-keys.md")
    assert source.load(moved.path).note.memory_id == "api-retry-keys"
    assert not (root / first.path).exists()

    second = write(service, repository="api", title="Retry keys v2", supersedes=first.memory_id)
    old = source.load(moved.path).note
    assert old.status is Status.SUPERSEDED and old.superseded_by == (second.memory_id,)
    assert source.load(second.path).note.supersedes == (first.memory_id,)


@pytest.mark.parametrize("raw, error", [
    ({"repository": "api", "body": "token ghp_" + "x1Y2" * 10}, SecretInNote),
    ({"repository": "api", "body": "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n"}, SecretInNote),
    ({"repository": "api", "body": "x" * (300 * 1024)}, InvalidRequest),
    ({"path": "../outside.md"}, InvalidRequest), ({"path": ".ai-memory/x.md"}, InvalidRequest),
    ({"path": ".git/x.md"}, InvalidRequest), ({"path": "Decisions/LPT1.md"}, InvalidRequest),
    ({"path": "Decisions/trailing.md."}, InvalidRequest),
    ({"path": "Decisions/a\x1fb.md"}, InvalidRequest),
    ({"path": "Decisions/" + "n" * 300 + ".md"}, InvalidRequest),
    ({"ticket": "API-1"}, InvalidRequest),
    ({"repository": "api", "tags": [{"nested": 1}]}, InvalidRequest),
    ({"repository": "api", "related": ["nobody"]}, InvalidRequest),
])
def test_refused_writes_leave_the_root_unchanged(service, root, raw, error):
    before = snapshot(root)
    with pytest.raises(error):
        write(service, **raw)
    assert snapshot(root) == before


@pytest.mark.parametrize("operation, raw", [
    ("set_fields", {"fields": {"colour": "red"}}), ("set_fields", {"fields": {"tags": "x"}}),
    ("set_fields", {"fields": {"memory_id": "other"}}),
    ("append", {"text": "password = hunter2hunter2"}),
    ("append", {"text": "y" * (257 * 1024)}), ("replace_lines", {"start_line": 9,
                                                                 "end_line": 9}),
    ("move", {"new_path": "../x.md"}), ("move", {"new_path": "Repos/api/Notes/person.md"}),
    ("supersede", {"superseded_by": "nobody"}),
])
def test_refused_edits_leave_the_root_unchanged(service, source, root, operation, raw):
    before = snapshot(root)
    current = source.load(PERSON).note.content_hash
    with pytest.raises(AiMemoryError):
        edit(service, PERSON, current, operation, **raw)
    assert snapshot(root) == before


def test_a_persons_edit_after_the_read_wins_and_the_agent_learns_the_new_hash(service, source,
                                                                            root):
    read_hash = source.load(PERSON).note.content_hash
    (root / PERSON).write_bytes(PERSON_TEXT + b"Only on Tuesdays.\r\n")
    with pytest.raises(EditConflict) as caught:
        edit(service, PERSON, read_hash, "append", text="Agent's line")
    assert caught.value.current_hash == source.load(PERSON).note.content_hash
    assert (root / PERSON).read_bytes() == PERSON_TEXT + b"Only on Tuesdays.\r\n"
