"""CaptureService: agents write and edit notes; each call is checked, written, then indexed.

Nothing reaches the root before every rule passed; the note is indexed before the call
returns, so the next search finds it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from attrs import evolve

from memory.application.capture.requests import (EditOperation, EditRequest, EditResult,
                                                 WriteRequest, WriteResult)
from memory.domain.capture_errors import (DuplicateCandidate, DuplicateKnowledge,
                                          NoteAlreadyExists, SupersedeIncomplete)
from memory.domain.errors import AiMemoryError, InvalidRequest, NotFound
from memory.domain.messages import Action, Message
from memory.domain.new_note import Author, NewNote
from memory.domain.note_edits import (Append, Archive, Move, NoteEdit, ReplaceLines, SetFields,
                                      Supersede, checked)
from memory.domain.note_text import NoteFile, NoteText
from memory.domain.notes import Note, note_path
from memory.domain.placement import ScopeKey, WriteScope, derive_memory_id
from memory.domain.write_receipts import WriteReceipt, edit_base
from memory.ports.capture_index import (NoteCatalogue, NoteEvidence, SimilarNotes,
                                        SingleNoteIndexer)
from memory.ports.clock import Clock
from memory.ports.note_history import HistoryError, NoteHistory
from memory.ports.errors import StoreError
from memory.ports.note_writer import NoteWriter
from memory.ports.write_receipts import WriteReceipts


MAX_NAME_TRIES = 20


class _TakenIds:
    """memory_ids in use, as the catalogue knows them (a title or alias counts as taken)."""

    def __init__(self, catalogue: NoteCatalogue):
        self._catalogue = catalogue

    def __contains__(self, memory_id: object) -> bool:
        return isinstance(memory_id, str) and self._catalogue.find(memory_id) is not None


class CaptureService:
    def __init__(self, *, writer: NoteWriter, catalogue: NoteCatalogue, similar: SimilarNotes,
                 indexer: SingleNoteIndexer, evidence: NoteEvidence, clock: Clock,
                 history: NoteHistory | None = None, receipts: WriteReceipts | None = None):
        self._writer, self._catalogue, self._similar = writer, catalogue, similar
        self._indexer, self._evidence, self._clock = indexer, evidence, clock
        self._history = history  # None: writes are not committed
        self._receipts = receipts  # None: a conflict cannot tell one's own earlier edit

    # -- memory_write ----------------------------------------------------------------------

    def write(self, request: WriteRequest, author: Author) -> WriteResult:
        scope = request.scope.key if request.scope else ScopeKey.of_path(_path(request))
        related = tuple(self._known(name, "related").memory_id for name in request.related)
        old = self._known(request.supersedes, "supersedes") if request.supersedes else None
        note = NewNote(title=request.title, body=request.body, scope=request.scope,
                       memory_id=derive_memory_id(request.title, scope,
                                                  _TakenIds(self._catalogue)),
                       author=author, today=self._today(), note_type=request.note_type,
                       status=request.status, tags=request.tags, related=related,
                       supersedes=(old.memory_id,) if old else ())
        data = checked(None, note.text())  # a secret is refused before any search sees it
        if not request.allow_duplicate:
            self._refuse_duplicates(request, scope, old)
        written = self._create(request, data)
        superseded = self._mark_superseded(old, note, written, author) if old else None
        paths = (written.path, *((superseded.path,) if superseded else ()))
        commit, warnings = self._commit(paths, f"memory_write: {note.title}", author)
        warnings += self._receipt(WriteReceipt.of(path=written.path, base_hash=None,
                                                  content_hash=written.content_hash,
                                                  author=author))
        warnings += superseded.warnings if superseded else ()
        outcome = self._indexer.index_paths(paths)
        items = tuple(self._evidence.items(written.path)) if outcome.indexed else ()
        if superseded is not None:
            superseded = evolve(superseded, indexed=outcome.indexed)
        return WriteResult(path=written.path, memory_id=note.memory_id,
                           content_hash=written.content_hash, indexed=outcome.indexed,
                           items=items, superseded=superseded, commit=commit,
                           warnings=(*warnings, *outcome.warnings))

    def _create(self, request: WriteRequest, data: bytes) -> NoteFile:
        """Never over another file; a duplicate the caller allowed takes the next free name."""
        number = 1
        while True:
            try:
                return self._writer.create(
                    request.path or _scope(request).place(request.title, number), data)
            except NoteAlreadyExists:
                if request.path or not request.allow_duplicate or number == MAX_NAME_TRIES:
                    raise
                number += 1

    def _refuse_duplicates(self, request: WriteRequest, scope: ScopeKey,
                           old: Note | None) -> None:
        """Same title in the scope, or near duplicates by the index's own signals."""
        same = [DuplicateCandidate(memory_id=n.memory_id, path=n.path, title=n.title,
                                   reason="same title in this scope")
                for n in self._catalogue.titled(request.title)
                if ScopeKey.of_note(n) == scope and n.effective_status.is_current]
        near = self._similar.similar(title=request.title, body="\n".join(request.body),
                                     scope=scope)
        replaced = old.memory_id if old else None
        found = {c.memory_id: c for c in (*same, *near) if c.memory_id != replaced}
        if found:
            raise DuplicateKnowledge(list(found.values()))

    def _mark_superseded(self, old: Note, new: NewNote, written: NoteFile,
                         author: Author) -> EditResult:
        """The second file of a superseding write; the new note is kept whatever happens."""
        try:
            current = self._writer.read(old.path)
            edit = Supersede(superseded_by=tuple(dict.fromkeys(
                (*old.superseded_by, new.memory_id))))
            return self._apply(old.path, old.memory_id, current, edit, current.content_hash,
                               author)
        except AiMemoryError as e:
            self._indexer.index_paths((written.path,))
            raise SupersedeIncomplete(path=written.path, memory_id=new.memory_id,
                                      content_hash=written.content_hash, old=old.path,
                                      reason=str(e)) from e

    # -- memory_edit -----------------------------------------------------------------------

    def edit(self, request: EditRequest, author: Author) -> EditResult:
        note = self._catalogue.find(request.identity)
        path = note.path if note else self._unindexed_path(request.identity)
        current = self._writer.read(path)
        base = edit_base(path, request.content_hash, current.content_hash, author, self._made)
        result = self._apply(path, note.memory_id if note else None, current,
                             self._operation(request, note), base, author)
        paths = tuple(dict.fromkeys((path, result.path)))
        message = f"memory_edit {request.operation.value}: {result.path}"
        commit, warnings = self._commit(paths, message, author) if result.changed else (None, ())
        outcome = self._indexer.index_paths(paths)
        return evolve(result, indexed=outcome.indexed, commit=commit,
                      warnings=(*warnings, *result.warnings, *outcome.warnings))

    def _unindexed_path(self, identity: str) -> str:
        """A note the index does not know yet can still be edited by its path."""
        try:
            return note_path(identity)
        except InvalidRequest:
            raise NotFound(Message(f"no note named {identity!r}: give its memory_id, path or "
                                   "title as ", Action.SEARCH, " or ", Action.GET,
                                   " showed it")) from None

    def _operation(self, request: EditRequest, note: Note | None) -> NoteEdit:
        op = request.operation
        if op is EditOperation.APPEND:
            return Append(lines=request.lines, heading=request.heading)
        if op is EditOperation.REPLACE_LINES:
            return ReplaceLines(start_line=request.start_line, end_line=request.end_line,
                                lines=request.lines)
        # EditRequest.parse refuses an operation without the argument it needs (asserted).
        if op is EditOperation.SET_FIELDS:
            assert request.fields is not None
            names = {n: self._known(n, "fields").memory_id
                     for n in request.fields.identities()}
            return SetFields(changes=request.fields.resolved(names))
        if op is EditOperation.SUPERSEDE:
            assert request.superseded_by is not None
            by = self._known(request.superseded_by, "superseded_by").memory_id
            earlier = note.superseded_by if note else ()
            return Supersede(superseded_by=tuple(dict.fromkeys((*earlier, by))))
        if op is EditOperation.ARCHIVE:
            return Archive()
        assert request.new_path is not None
        return Move(new_path=request.new_path, memory_id=note.memory_id if note else None)

    def _apply(self, path: str, memory_id: str | None, current: NoteFile, edit: NoteEdit,
               expected: str, author: Author) -> EditResult:
        """The edit written, with its receipt kept (a warning in the result if it was not)."""
        before = NoteText.decode(current.data, path)
        data = checked(before, edit.apply(before, self._today()))
        if isinstance(edit, Move):
            written = self._writer.move(path, edit.new_path, data, expected_hash=expected)
        elif data == current.data:
            return EditResult(path=path, memory_id=memory_id, content_hash=current.content_hash,
                              indexed=False, changed=False)
        else:
            written = self._writer.replace(path, data, expected_hash=expected)
        kept = self._receipt(WriteReceipt.of(path=written.path, base_hash=expected,
                                             content_hash=written.content_hash, author=author))
        return EditResult(path=written.path, memory_id=memory_id,
                          content_hash=written.content_hash, indexed=False, warnings=kept)

    # -- shared ----------------------------------------------------------------------------

    def _known(self, identity: str, field: str) -> Note:
        found = self._catalogue.find(identity)
        if found is None:
            raise InvalidRequest(Message(f"{field} names {identity!r}, which is no known note: "
                                         "give a memory_id, path or title ", Action.SEARCH,
                                         " returned"))
        return found

    def _commit(self, paths: Sequence[str], message: str,
                author: Author) -> tuple[str | None, tuple[str, ...]]:
        if self._history is None:
            return None, ()
        try:
            return self._history.record(paths, message, author), ()
        except HistoryError as e:
            return None, (f"written but not committed: {e}",)

    def _receipt(self, receipt: WriteReceipt) -> tuple[str, ...]:
        if self._receipts is None:
            return ()
        try:
            self._receipts.record(receipt)
        except StoreError as e:
            return (f"written, but its receipt was not kept ({e}): if a later edit conflicts, "
                    "the message cannot tell your own earlier edit from someone else's",)
        return ()

    def _made(self, content_hash: str) -> WriteReceipt | None:
        """The receipt that returned this hash; None also when receipts cannot be read (the
        conflict then reads as someone else's, which is what it says without receipts)."""
        if self._receipts is None:
            return None
        try:
            return self._receipts.made(content_hash)
        except StoreError:
            return None

    def _today(self) -> dt.date:
        return dt.date.fromisoformat(self._clock.now_iso()[:10])


# WriteRequest.parse refuses a request that names neither a scope nor a path.
def _path(request: WriteRequest) -> str:
    assert request.path is not None
    return request.path


def _scope(request: WriteRequest) -> WriteScope:
    assert request.scope is not None
    return request.scope
