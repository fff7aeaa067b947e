"""The guard: no planner output may push the plain question's best evidence out of the context.

A round plan (from the offline rules or an LLM) adds seed lists, priors and selection
constraints. Each is a reading of the question, and a wrong reading used to cost more
than a right one bought: on data our generator did not write, constrained MemFuse fell
below plain hybrid retrieval. So a share of the final slots is reserved, by
construction, for the *unconstrained* ranking — reciprocal rank fusion of the dense and
BM25L hits for the asker's own words (not the plan's rewritten focus), the `hybrid`
baseline's lists less the BM25L hits that share only common words with the question
(`SearchConfig.common_word_share`), or the dense hits alone (`naive_rag`'s) with
`GuardConfig.lexical` off — and the plan's ranking fills the rest. Where the memory holds
dialogue moments and the recipe reads them (`SearchConfig.use_moments`), one more
unconstrained list joins them: the same dense hits with each turn scored by its moments
(`memory.moments`), still no plan in it.

The reserved share shrinks as the planner grows surer: with no constraint applied it is
``share_unconstrained`` (the graph and fused packs still get the other slots), at
confidence 1.0 it is ``share_confident``, linear in between. Pure functions; the engine
supplies the rankings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from memory.search.config import GuardConfig


def reserved_slots(k: int, confidence: float, guard: GuardConfig) -> int:
    """How many of k slots the unconstrained ranking keeps for a plan of this confidence."""
    if not guard.enabled or k <= 0:
        return 0
    confidence = min(max(confidence, 0.0), 1.0)
    share = (
        guard.share_unconstrained - (guard.share_unconstrained - guard.share_confident) * confidence
    )
    return min(k, math.ceil(k * share - 1e-9))


def guarded_order(
    constrained: Sequence[str], unconstrained: Sequence[str], k: int, reserve: int
) -> list[str]:
    """k ids: the unconstrained top `reserve` always, the constrained ranking for the rest.

    The result is ordered by the better of an id's two positions (ties: constrained
    first), so both rankings keep their heads near the top and a caller that cuts the
    list shorter still keeps the best of each.
    """
    reserved = list(dict.fromkeys(unconstrained))[:reserve]
    chosen = set(reserved)
    for node_id in dict.fromkeys(constrained):
        if len(chosen) >= k:
            break
        chosen.add(node_id)
    for node_id in dict.fromkeys(unconstrained):  # constrained ranking ran short
        if len(chosen) >= k:
            break
        chosen.add(node_id)
    far = len(constrained) + len(unconstrained)
    position_c = {node_id: i for i, node_id in enumerate(dict.fromkeys(constrained))}
    position_u = {node_id: i for i, node_id in enumerate(dict.fromkeys(unconstrained))}
    return sorted(
        chosen,
        key=lambda i: (
            min(position_c.get(i, far), position_u.get(i, far)),
            i not in position_c,
            position_c.get(i, far),
            i,
        ),
    )


def keep_reserved(order: Sequence[str], reserved: Sequence[str], k: int) -> list[str]:
    """`order` cut to k, with every reserved id in it: a missing one takes the place of the
    lowest-ranked id that is not reserved. The head of `order` (e.g. a judge's picks)
    keeps its place; the reserved ids that had to be added come last.
    """
    kept = list(dict.fromkeys(order))[:k]
    protected = set(list(dict.fromkeys(reserved))[:k])
    must = [i for i in dict.fromkeys(reserved) if i in protected and i not in kept]
    for node_id in must:
        if len(kept) >= k:
            victim = next((i for i in reversed(kept) if i not in protected), None)
            if victim is None:
                break
            kept.remove(victim)
        kept.append(node_id)
    return kept
