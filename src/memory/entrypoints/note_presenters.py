"""Plain-text renderings of a note read and of graph answers (neighbours, paths)."""

from __future__ import annotations

from memory.domain.graph import Relation
from memory.domain.reading import Neighbourhood, NoteRead, RelationPath
from memory.domain.write_receipts import MIN_PREFIX_CHARS  # a prefix edit takes
from memory.entrypoints.presenters import scope_lines, warning_lines
from memory.entrypoints.text_safety import shown


def get_text(doc: NoteRead) -> str:
    out = [f"note: {shown(doc.path)} (memory_id {shown(doc.memory_id)}, {doc.status}, "
           f"content_hash {doc.content_hash[:MIN_PREFIX_CHARS]})",
           f"title: {shown(doc.title)}", _range_line(doc)]
    if doc.redacted_lines:
        out.append(f"redacted lines: {', '.join(map(str, doc.redacted_lines))}")
    if doc.cut_lines:
        out.append(f"cut lines: {', '.join(map(str, doc.cut_lines))} (longer than one read "
                   "holds; each ends in its cut marker)")
    out += warning_lines(doc.warnings)
    width = len(str(doc.end_line))
    out += [f"{line.line:>{width}}  {shown(line.text)}" for line in doc.lines]
    return "\n".join(out)


def _range_line(doc: NoteRead) -> str:
    if not doc.lines:
        return f"lines: none of {doc.line_count}"
    line = f"lines: {doc.start_line}-{doc.end_line} of {doc.line_count}"
    if doc.next_start_line is not None:
        return line + f"; truncated: continue with start_line {doc.next_start_line}"
    return line + ("; truncated: a line was cut" if doc.truncated else "")


def _where(relation: Relation) -> str:
    """ at path:Lline, where the relation is written (when the graph knows it)."""
    if not relation.source_path:
        return ""
    line = f":L{relation.source_line}" if relation.source_line else ""
    return f" at {shown(relation.source_path)}{line}"


def neighbors_text(result: Neighbourhood) -> str:
    out = [*scope_lines(result.scope), *warning_lines(result.warnings),
           f"neighbors of {shown(result.path)} (memory_id {shown(result.memory_id)}), "
           f"depth {result.depth}, graph {result.graph_generation or 'none'}:"]
    for n in result.neighbors:
        where = shown(n.path or n.node)
        out.append(f"  [{n.depth}] {shown(n.kind):<10} {where}  via "
                   + " -> ".join(f"{shown(v.relation)}{_where(v)}" for v in n.via))
    if not result.neighbors:
        out.append("  (none)")
    return "\n".join(out)


def path_text(result: RelationPath) -> str:
    src, dst = shown(result.source.path), shown(result.target.path)
    out = [*scope_lines(result.scope), *warning_lines(result.warnings)]
    if result.path is None:
        return "\n".join([*out, f"no relationship path between {src} and {dst} "
                                 f"(graph {result.graph_generation or 'none'})"])
    out.append(f"path {src} -> {dst} ({result.path.length} hops, "
               f"graph {result.graph_generation or 'none'}):")
    for hop in result.path.hops:
        out.append(f"  {shown(hop.source)} --{shown(hop.relation)}--> {shown(hop.target)}"
                   f"{_where(hop)}")
    return "\n".join(out)
