"""SearchConfig: the search steps in order, each with its own small frozen configuration."""

from __future__ import annotations

from attrs import frozen

from memory.domain.citing import ContextConfig, LineFocus
from memory.domain.fusion import FusionConfig
from memory.domain.item_order import LineOrder
from memory.domain.linked_notes import HopConfig
from memory.domain.no_answer import NoAnswerPolicy
from memory.domain.outcome_sections import OutcomeSections
from memory.domain.query_gate import QueryGate
from memory.domain.ranking import RerankPolicy
from memory.domain.selection import SelectConfig


@frozen(kw_only=True)
class GatherConfig:
    """What the engine asks the stores for: list depths and which signals run at all."""

    lexical_depth: int = 50
    semantic_depth: int = 50
    graph_depth: int = 20
    graph_seeds: int = 5
    # A related note counts only if its proximity is this many times the median proximity
    # of what the graph returned (see candidates.standing_out).
    graph_contrast: float = 2.0
    semantic_wait_s: float = 2.0  # how long a search waits for the model to load
    use_lexical: bool = True
    use_semantic: bool = True
    use_graph: bool = True


@frozen(kw_only=True)
class SearchConfig:
    """Gate, gather, then fuse, rerank, hop, no-answer, outcome, select, order, focus,
    expand (and always redact and bound to the budget).

    Defaults are measured on the eval sets (docs/benchmarks.md). A step set to None is
    skipped (gate, hop, outcome, order, focus); any step may be replaced by a value with the
    same method.
    """

    gate: QueryGate | None = QueryGate()
    gather: GatherConfig = GatherConfig()
    fusion: FusionConfig = FusionConfig()
    rerank: RerankPolicy = RerankPolicy()
    hop: HopConfig | None = HopConfig()
    no_answer: NoAnswerPolicy = NoAnswerPolicy()
    outcome: OutcomeSections | None = OutcomeSections()
    select: SelectConfig = SelectConfig()
    order: LineOrder | None = LineOrder()
    focus: LineFocus | None = LineFocus()
    context: ContextConfig = ContextConfig()
