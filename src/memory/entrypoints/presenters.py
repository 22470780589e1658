"""Plain-text renderings of what the service returns, shared by the CLI and MCP tools."""

from __future__ import annotations

from collections.abc import Mapping

from memory.domain.evidence import EvidencePacket
from memory.domain.refresh import RefreshReport


def packet_text(packet: EvidencePacket, snippet_lines: int = 6) -> str:
    out = []
    if packet.no_answer:
        out.append(f"No answer in memory for {packet.query!r}.")
    for n, item in enumerate(packet.items, 1):
        inner = item.heading.removeprefix(item.title).removeprefix(" > ")
        heading = f" > {inner}" if inner else ""
        out.append(f"{n}. {item.citation}  {item.title}{heading}  [{item.status}]")
        body = item.text.splitlines()
        for line in body[:snippet_lines]:
            out.append(f"     {line}")
        if len(body) > snippet_lines:
            out.append(f"     ... ({len(body) - snippet_lines} more lines)")
    if not packet.items and not packet.no_answer:
        out.append("Nothing found.")
    for w in packet.warnings:
        out.append(f"warning: {w}")
    return "\n".join(out)


def refresh_text(report: RefreshReport) -> str:
    out = [f"refresh ({report.mode}): {'ok' if report.ok else 'FAILED'}"]
    for s in report.stages:
        line = f"  {s.stage}: {s.outcome}"
        if s.generation:
            line += f" -> {s.generation}"
        if s.stage == "index" and s.outcome == "published":
            line += (f" (+{s.added} ~{s.changed} -{s.removed}; embedded {s.embedded},"
                     f" reused {s.reused_vectors}; {s.seconds:.1f}s)")
        elif s.stage == "graph" and s.outcome == "published":
            line += f" ({s.seconds:.1f}s)"
        if s.reason and s.outcome != "published":
            line += f": {s.reason}"
        out.append(line)
    for w in report.warnings:
        out.append(f"  warning: {w}")
    return "\n".join(out)


def get_text(doc: Mapping) -> str:
    out = [f"{doc['path']}  ({doc['memory_id']}, {doc['status']}, sha256 {doc['content_hash'][:12]})"]
    width = len(str(doc["end_line"]))
    out += [f"{line['line']:>{width}}  {line['text']}" for line in doc["lines"]]
    if doc.get("truncated"):
        out.append("... (truncated; ask for a later start_line)")
    return "\n".join(out)


def neighbors_text(result: Mapping) -> str:
    out = [f"neighbors of {result['path']} (depth {result['depth']}):"]
    for n in result["neighbors"]:
        rel = " -> ".join(f"{v['relation']}" for v in n["via"])
        where = n["path"] or n["node"]
        out.append(f"  [{n['depth']}] {n['kind']:<10} {where}  via {rel}")
    if not result["neighbors"]:
        out.append("  (none)")
    return "\n".join(out)


def path_text(result: Mapping) -> str:
    src, dst = result["source"]["path"], result["target"]["path"]
    if not result["connected"]:
        return f"no relationship path between {src} and {dst}"
    out = [f"path {src} -> {dst} ({result['path']['length']} hops):"]
    for hop in result["path"]["hops"]:
        where = f" at {hop['source_path']}" + (f":L{hop['source_line']}" if hop.get("source_line") else "") \
            if hop.get("source_path") else ""
        out.append(f"  {hop['source']} --{hop['relation']}--> {hop['target']}{where}")
    return "\n".join(out)


def health_text(h: Mapping) -> str:
    idx, graph, emb = h["index"], h["graph"], h["embedder"]
    changed = idx.get("files_changed_since", {})
    out = [
        f"{'healthy' if h['healthy'] else 'UNHEALTHY'}: {h['root']}",
        f"  index: {idx.get('id')} ({idx.get('notes', 0)} notes, {idx.get('chunks', 0)} chunks, "
        f"{idx.get('vectors', 0)} vectors); changed since: +{changed.get('added', 0)} "
        f"~{changed.get('modified', 0)} -{changed.get('removed', 0)}"
        + ("; older than the newest note edit" if idx.get("older_than_sources") else ""),
        f"  graph: {graph.get('id')} ({graph.get('nodes', 0)} nodes, {graph.get('edges', 0)} edges)",
        f"  embedder: {emb['model_id']} [{emb['state']}]",
        f"  self-check: {h['self_check'].get('detail')}",
    ]
    for p in [*idx.get("problems", []), *graph.get("problems", [])]:
        out.append(f"  problem: {p}")
    for w in h.get("warnings", []):
        out.append(f"  warning: {w}")
    return "\n".join(out)
