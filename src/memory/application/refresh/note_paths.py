"""What a refresh of named notes (a write, an edit) needs: whether the current generation
can take them one at a time, and whether they are already indexed as their files are."""

from __future__ import annotations

from collections.abc import Mapping

from memory.application.refresh.run import NoteEdits
from memory.domain.model_state import described
from memory.domain.notes import NoteDocument
from memory.domain.refresh import GenerationInfo, ManifestEntry, SourceFile
from memory.ports.embedder import Embedder
from memory.ports.index_generations import IndexGenerations


def not_editable(current: GenerationInfo | None, index: IndexGenerations, chunking: str,
                 embedder: Embedder, model_wait_s: float) -> str | None:
    """Why the current generation cannot take one more note as it is; None if it can."""
    if current is None:
        return "no index yet: a whole refresh builds it"
    damage = index.check_current()
    if damage:
        return f"the current index is damaged ({damage[0]}): a whole refresh rebuilds it"
    if current.chunking != chunking:
        return "notes are chunked another way now: a whole refresh rebuilds the index"
    if current.model_id is None:
        return None  # an index without vectors takes notes without vectors
    if current.model_id != embedder.model_id:
        return "the embedding model changed: a whole refresh re-embeds the index"
    embedder.warm()
    if not embedder.wait_ready(model_wait_s):
        return ("the embedding model is not ready "
                f"({described(embedder.state(), embedder.failure())})")
    return None


def as_indexed(edits: NoteEdits, files: Mapping[str, SourceFile],
               previous: Mapping[str, ManifestEntry]) -> bool:
    """Every note is in the manifest with its bytes and its stat: nothing to publish."""
    def same(doc: NoteDocument) -> bool:
        path, entry = doc.note.path, previous.get(doc.note.path)
        return entry is not None and path in files and entry.content_hash == \
            doc.note.content_hash and (entry.size, entry.mtime_ns) == (files[path].size,
                                                                        files[path].mtime_ns)
    return not edits.removed and all(same(d) for d in edits.docs)
