"""Plain-text renderings of search results for the model (MCP text blocks) and the CLI.

Many clients show the model only this text, so it states everything that changes what
the results mean: the scope and where each filter came from, freshness, no-answer and
why, warnings, and each item's citation (with the lines the budget cut), and leads for a
question memory cannot answer, marked as such. Every name is escaped (text_safety.shown): a
title cannot start a line of its own.
"""

from __future__ import annotations

from memory.domain.evidence import AppliedScope, EvidenceItem, EvidencePacket, Generation
from memory.domain.explanation import ExplainedCandidate, Explanation, IdentityExplanation
from memory.entrypoints.text_safety import shown

SCOPE_ORDER = ("root_scope", "repository", "project", "ticket", "path_prefix", "status")


def scope_lines(scope: AppliedScope) -> list[str]:
    """One `scope:` line per filter applied, saying where an inferred one came from."""
    out = []
    for name in SCOPE_ORDER:
        value = getattr(scope, name)
        if not value:
            continue
        origin = scope.inferred.get(name)
        out.append(f"scope: {name}={shown(value)}"
                   + (f" (inferred from {shown(origin)})" if origin else ""))
    if scope.query_tickets:
        out.append(f"query tickets: {', '.join(shown(t) for t in scope.query_tickets)} "
                   "(ranked first, not a filter)")
    return out


def generation_line(generation: Generation) -> str:
    return f"generation: index {generation.index or 'none'}, graph {generation.graph or 'none'}"


def warning_lines(warnings) -> list[str]:
    return [f"warning: {shown(w)}" for w in warnings]


def packet_text(packet: EvidencePacket, snippet_lines: int = 6) -> str:
    out = [*scope_lines(packet.scope), f"freshness: {packet.freshness}",
           generation_line(packet.generation)]
    if packet.no_answer:
        out.append(f"no answer: {shown(packet.no_answer_reason or 'nothing relevant enough')}")
    out += warning_lines(packet.warnings)
    for n, item in enumerate(packet.items, 1):
        out += _item_lines(f"{n}.", item, snippet_lines)
    if packet.leads:
        out.append(f"leads ({len(packet.leads)}, not answers: notes near the question, "
                   "never the value asked for):")
    for n, item in enumerate(packet.leads, 1):
        out += _item_lines(f"lead {n}.", item, snippet_lines)
    if not packet.items and not packet.no_answer:
        out.append("nothing found")
    return "\n".join(out)


def _item_lines(label: str, item: EvidenceItem, snippet_lines: int) -> list[str]:
    inner = item.heading.removeprefix(item.title).removeprefix(" > ")
    heading = f" > {shown(inner)}" if inner else ""
    cut = f"  [cut to fit: line {', '.join(map(str, item.cut_lines))}]" if item.cut_lines else ""
    dated = f"  dated {shown(item.date)}" if item.date else ""
    out = [f"{label} {shown(item.citation)}  {shown(item.title)}{heading}  [{item.status}]"
           f"{dated}{cut}"]
    body = item.text.split("\n")
    out += [f"     {shown(line)}" for line in body[:snippet_lines]]
    if len(body) > snippet_lines:
        out.append(f"     ... ({len(body) - snippet_lines} more lines)")
    return out


def explain_text(e: Explanation) -> str:
    out = [f"explain: {shown(e.query)}", *scope_lines(e.scope), generation_line(e.generation)]
    if e.no_answer:
        out.append(f"no answer: {shown(e.no_answer_reason or 'nothing relevant enough')}")
    out += warning_lines(e.warnings)
    weights = ", ".join(f"{k} {v:g}" for k, v in e.weights.items())
    out += [f"query terms: {', '.join(shown(t) for t in e.terms) or '(none)'}; identifiers: "
            f"{', '.join(shown(i) for i in e.identifiers) or '(none)'}",
            f"fusion: {e.fusion} ({weights}; rrf_k {e.rrf_k})",
            f"found: lexical {e.counts.lexical}, semantic {e.counts.semantic}, "
            f"graph {e.counts.graph}",
            f"candidates ({len(e.candidates)}):"]
    out += [line for c in e.candidates for line in _candidate_lines(c)]
    if e.identity is not None:
        out.append(_identity_line(e.identity))
    return "\n".join(out)


def _candidate_lines(c: ExplainedCandidate) -> list[str]:
    signals = ", ".join(f"{name} #{s.rank}" for name, s in
                        (("lexical", c.signals.lexical), ("semantic", c.signals.semantic),
                         ("graph", c.signals.graph)) if s.rank is not None)
    returned = "returned" if c.returned else "not returned"
    lines = [f"{c.rank:>3}. {shown(c.citation)}  {shown(c.memory_id)}  score {c.score:.3f} "
             f"(fused {c.fused:.3f} + bonus {c.bonus:.3f})  [{returned}]",
             f"     signals: {signals or 'none'}; status {c.status}"]
    if c.reasons:
        lines.append(f"     reasons: {', '.join(shown(r) for r in c.reasons)}")
    if c.matched_terms:
        lines.append(f"     matched: {', '.join(shown(t) for t in c.matched_terms)}")
    return lines


def _identity_line(i: IdentityExplanation) -> str:
    where = f" ({shown(i.path)}, best rank {i.best_rank})" if i.best_rank else \
        f" ({shown(i.path)})" if i.path else ""
    state = "returned" if i.returned else "not found" if not i.found else "not returned"
    why = "" if i.why == state else f": {shown(i.why)}"
    return f"identity {shown(i.name)}: {state}{where}{why}"
