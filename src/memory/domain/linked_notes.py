"""The hop step: notes the best results link to, lifted just below the note that links."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from memory.domain.candidates import Candidate, Query, best_chunk
from memory.domain.graph import Neighbor
from memory.domain.notes import Chunk, Note
from memory.domain.text import QueryFeatures


@frozen(kw_only=True)
class Link:
    """A note a parent links to, the parent's line that says so (if known) and its chunks."""

    note: Note
    line: int | None
    chunks: tuple[Chunk, ...]


@frozen(kw_only=True)
class ParentLinks:
    """One of the best notes of a search: its lines and the notes it links to in scope."""

    parent: str  # memory_id
    lines: tuple[str, ...]
    links: tuple[Link, ...]


@frozen(kw_only=True)
class HopConfig:
    """Multi-hop: linked notes that also speak to the query follow their parent."""

    parents: int = 2
    children: int = 2
    decay: float = 0.85
    min_relevance: float = 0.3  # share of query words the link line + target cover
    relations: tuple[str, ...] = ("references", "related", "supersedes", "superseded_by")

    def parents_of(self, ranked: Sequence[Candidate]) -> tuple[str, ...]:
        """The notes whose links are followed: the best `parents` notes."""
        return tuple(dict.fromkeys(c.note.memory_id for c in ranked))[: max(self.parents, 0)]

    def linked(self, memory_id: str,
               neighbors: Sequence[Neighbor]) -> list[tuple[str, int | None]]:
        """Notes a note links to or relates with, and the line of its own that says so."""
        out = []
        for n in neighbors:
            via = [r for r in n.via if r.relation in self.relations]
            if n.kind == "note" and via:
                line = next((r.source_line for r in via if r.source == memory_id), None)
                out.append((n.node, line))
        return out

    def lift(self, ranked: Sequence[Candidate], parents: Sequence[ParentLinks],
             query: Query, position: dict[str, int]) -> tuple[Candidate, ...]:
        """Each parent's most relevant linked notes, placed at `decay` times its score.

        `position` orders chunks as the provider lists found them (CandidateLists.position).
        """
        if not ranked:
            return tuple(ranked)
        best = {c.note.memory_id: c for c in reversed(ranked)}  # each note's best candidate
        lifted: dict[str, Candidate] = {}
        for parent in parents:
            target = best[parent.parent].score * self.decay
            children = [child for link in parent.links
                        if (child := self._child(parent, link, best, lifted, target,
                                                 query.features, position)) is not None]
            children.sort(key=lambda x: -x[0])
            for _, base in children[: self.children]:
                lifted[base.note.memory_id] = base.with_bonus(target - base.score,
                                                              f"linked-from:{parent.parent}")
        if not lifted:
            return tuple(ranked)
        keep = [c for c in ranked if not (c.note.memory_id in lifted and
                                          c.chunk == lifted[c.note.memory_id].chunk)]
        return tuple(sorted([*keep, *lifted.values()], key=lambda c: -c.score))

    def _child(self, parent: ParentLinks, link: Link, best: dict[str, Candidate],
               lifted: dict[str, Candidate], target: float, features: QueryFeatures,
               position: dict[str, int]) -> tuple[float, Candidate] | None:
        """(relevance, candidate to lift) for a linked note worth lifting, else None."""
        note = link.note
        current = best.get(note.memory_id)
        if note.memory_id in lifted or (current is not None and current.score >= target):
            return None
        chunk = best_chunk(link.chunks, features, position)
        if chunk is None:
            return None
        # The sentence that links says why: "Project lead: [[Lena Fischer]]".
        context = max((features.coverage(line) for line in mentions(parent.lines, note, link.line)),
                      default=0.0)
        relevance = features.coverage(chunk.indexed_text) + context
        if relevance < self.min_relevance:
            return None
        base = current if current is not None and current.chunk == chunk else \
            Candidate(chunk=chunk, note=note)
        return relevance, base


def mentions(lines: Sequence[str], note: Note, line_no: int | None) -> list[str]:
    """Lines of a parent note that name a linked note (or the line the graph says links)."""
    names = [n.lower() for n in (note.title, *note.aliases) if n and len(n) > 2]
    found = [line for line in lines if any(name in line.lower() for name in names)]
    if line_no and 0 < line_no <= len(lines):
        found.append(lines[line_no - 1])
    return found
