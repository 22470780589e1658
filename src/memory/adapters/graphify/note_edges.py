"""Adds to Graphify's graph what notes need and Graphify does not make: one page node per
note carrying its memory_id, declared relations, alias links, repositories, tickets, tags."""

from __future__ import annotations

import re
from collections.abc import Sequence

import networkx as nx

from memory.adapters.graphify.note_names import NoteNames
from memory.domain.identity import assign_identities
from memory.domain.markdown import field_line, front_matter_lines, links
from memory.domain.notes import Note, NoteDocument
from memory.domain.scope import ScopeNames

ORIGIN = "ai-memory"
# When two relations land on the same directed pair, the more specific one names the edge.
_PRECEDENCE = {"supersedes": 5, "superseded_by": 5, "related": 4, "references": 1}


def _norm(path: str) -> str:
    return (path or "").replace("\\", "/")


class NoteEdges:
    """Writes note identity and note relations into one freshly built Graphify DiGraph."""

    def __init__(self, graph: nx.DiGraph, documents: Sequence[NoteDocument]):
        self._g = graph
        self._docs = sorted(documents, key=lambda d: d.note.path)
        self._names = NoteNames([d.note for d in self._docs])
        # A ticket node only for a ticket some note owns: each is one `--ticket` finds.
        self._scope_names = ScopeNames.of(d.note for d in self._docs)
        self._page: dict[str, str] = {}  # note path -> page node id
        self.stats: dict = {"notes": len(self._docs), "own_pages": 0, "added_edges": 0,
                            "unresolved": 0, "unresolved_examples": [], "renamed_ids": []}

    def apply(self) -> dict:
        self._attach_pages()
        self._drop_page_links()
        for doc in self._docs:
            self._declared(doc)
            self._links(doc)
            self._scopes(doc)
        return self.stats

    def _attach_pages(self) -> None:
        """One page node per note, carrying the id the index gives it (a contested id goes
        where identity.assign_identities says, as in the index)."""
        exact: dict[str, str] = {}
        folded: dict[str, str] = {}  # a disk that folds case may report another spelling
        for nid, data in self._g.nodes(data=True):
            if data.get("node_kind") == "page" and data.get("source_file"):
                exact.setdefault(_norm(data["source_file"]), nid)
                folded.setdefault(_norm(data["source_file"]).lower(), nid)
        ids = assign_identities(d.note for d in self._docs)
        claimed: set[str] = set()
        for doc in self._docs:
            note = doc.note
            nid = exact.get(note.path)
            if nid is None or nid in claimed:
                nid = folded.get(note.path.lower())
            if nid is None or nid in claimed:
                nid = self._own_page(note)
            claimed.add(nid)
            self._page[note.path] = nid
            self._g.nodes[nid].update(path=note.path, title=note.title,
                                      memory_id=ids[note.path])
            if ids[note.path] != note.memory_id:
                self.stats["renamed_ids"].append(note.path)

    def _drop_page_links(self) -> None:
        """Links between notes are the ones the index parsed (note.links), not Graphify's
        own reading of the files: one parser decides what a link is, for both."""
        pages = set(self._page.values())
        made = [(u, v) for u, v, data in self._g.edges(data=True)
                if u in pages and v in pages and data.get("origin") != ORIGIN]
        self._g.remove_edges_from(made)
        self.stats["graphify_page_links_replaced"] = len(made)

    def _own_page(self, note: Note) -> str:
        """A page node for a note Graphify did not give one of its own (or merged away)."""
        nid = f"page:{note.path}"
        self._g.add_node(nid, label=note.path.rsplit("/", 1)[-1], file_type="document",
                         node_kind="page", source_file=note.path, source_location="L1",
                         origin=ORIGIN)
        self.stats["own_pages"] += 1
        return nid

    def _declared(self, doc: NoteDocument) -> None:
        note = doc.note
        for relation in ("related", "supersedes", "superseded_by"):
            for raw in getattr(note, relation):
                target, _ = self._names.resolve(raw, note)
                if target is None:
                    self._unresolved(note, raw)
                    continue
                line = field_line(doc.lines, relation, raw.strip().strip("[]").split("|")[0])
                self._link(note, self._page[target.path], relation, line)

    def _links(self, doc: NoteDocument) -> None:
        """The links the index holds for the note (note.links), at the lines they are on."""
        note = doc.note
        at = {link.target: link.line for link in links(doc.lines, _body_start(doc))}
        for raw in note.links:
            line = at.get(raw) or _line_of(doc.lines, raw)
            target, how = self._names.resolve(raw, note)
            if target is None:
                self._unresolved(note, raw)
                continue
            source, dest = self._page[note.path], self._page[target.path]
            if source != dest and not self._g.has_edge(source, dest):
                self._link(note, dest, "references", line, resolved_by=how)

    def _scopes(self, doc: NoteDocument) -> None:
        note = doc.note
        for kind, keys, field in (("repository", note.repositories, "related_repos"),
                                  ("project", note.projects, "related_projects")):
            for key in sorted(keys):
                self._link(note, self._concept(kind, key), kind, field_line(doc.lines, field, key))
        if note.ticket:
            self._link(note, self._concept("ticket", note.ticket.upper()), "ticket", None)
        start = _body_start(doc) - 1
        for ticket in self._scope_names.tickets_in("\n".join((note.title, *doc.lines[start:]))):
            if ticket != (note.ticket or "").upper():
                self._link(note, self._concept("ticket", ticket), "mentions",
                           _line_of(doc.lines, ticket, start=start))
        for tag in note.tags:
            key = tag.strip().lstrip("#").lower()
            if key:
                line = field_line(doc.lines, "tags", tag)
                self._link(note, self._concept("tag", key), "tagged", line)

    def _concept(self, kind: str, key: str) -> str:
        nid = f"{kind}:{key}"
        if nid not in self._g:
            self._g.add_node(nid, label=key, file_type="concept", node_kind=kind,
                             source_file="", origin=ORIGIN)
        return nid

    def _link(self, note: Note, target: str, relation: str, line: int | None, **extra) -> None:
        source = self._page[note.path]
        if source == target:
            return
        mine = {"relation": relation, "confidence": "EXTRACTED", "confidence_score": 1.0,
                "source_file": note.path, "source_location": f"L{line}" if line else None,
                "weight": 1.0, "origin": ORIGIN, **extra}
        if not self._g.has_edge(source, target):
            self._g.add_edge(source, target, **mine)
            self.stats["added_edges"] += 1
            return
        edge = self._g.edges[source, target]
        relations = sorted({edge.get("relation", ""), relation, *edge.get("relations", ())} - {""})
        if _PRECEDENCE.get(relation, 3) > _PRECEDENCE.get(edge.get("relation"), 3):
            edge.update(mine)
        edge["relations"] = relations

    def _unresolved(self, note: Note, raw: str) -> None:
        self.stats["unresolved"] += 1
        if len(self.stats["unresolved_examples"]) < 20:
            self.stats["unresolved_examples"].append(f"{note.path} -> {raw}")


def _body_start(doc: NoteDocument) -> int:
    return front_matter_lines(doc.lines)[1]


def _line_of(lines: Sequence[str], needle: str, start: int = 0) -> int | None:
    """1-based line of the first occurrence of needle at or after index start."""
    pattern = re.compile(re.escape(needle), re.IGNORECASE)
    for i in range(start, len(lines)):
        if pattern.search(lines[i]):
            return i + 1
    return None
