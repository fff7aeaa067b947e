"""The controller's pure reasoning over its state: the next plan when the judge's cannot be
used, what the judge is shown, the final selection and why the loop stopped.

No store writes and no LLM here, so each rule can be tested on its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from graphs.retrieval.admission import QuestionRelevance, admit_later_finds
from graphs.retrieval.context import Backfill, RetrievalContext
from graphs.retrieval.state import State
from memory.models import NodeKind, is_fused_id
from memory.records import ROUND_SEARCH, Candidate
from memory.search.plan import RoundPlan
from memory.store_api import MemoryStoreAPI
from signatures.evidence import EvidenceItem
from signatures.planning_offline import alternative_plans, first_unexecuted

EVIDENCE_EVENTS = 60  # accumulated events shown to the judge, best score first
EVIDENCE_FUSED = 5  # fused summaries shown to the judge
_FACET_PREFIX = re.compile(r"^(entity|keyword|time):\s*")


def queries_of(plan: RoundPlan) -> list[str]:
    return list(dict.fromkeys([plan.focus, *plan.semantic_queries, plan.lexical_query()]))


def facet_terms(missing_facets: list[str]) -> list[str]:
    """Search terms from missing-facet labels ("keyword: milk" → "milk"); time facets drop out."""
    terms = []
    for facet in missing_facets:
        if facet.startswith("time:"):
            continue
        term = _FACET_PREFIX.sub("", facet).strip()
        if term:
            terms.append(term)
    return terms


def derive_plan(state: State, question: str, missing_facets: list[str]) -> RoundPlan | None:
    """A plan unlike every executed one: the missing facets first, then broader variants."""
    first, last = state.plans[0], state.plans[-1]
    keywords = " ".join(first.keywords)
    candidates = [
        *alternative_plans(first, facet_terms(missing_facets) or None),
        *alternative_plans(last),
        RoundPlan.from_query(question.strip() or first.focus),
        *([RoundPlan.from_query(keywords)] if keywords else []),
    ]
    return first_unexecuted(candidates, state.plans)


def evidence_items(store: MemoryStoreAPI, state: State) -> list[EvidenceItem]:
    """The accumulated pool as judge evidence: the best events, then a few fused summaries."""
    ranked = sorted(state.candidates.values(), key=lambda c: (-c.score, c.node_id))
    ranked = ranked[:EVIDENCE_EVENTS]
    events = {e.event_id: e for e in store.get_events([c.node_id for c in ranked])}
    items = [
        EvidenceItem(
            node_id=c.node_id,
            timestamp=events[c.node_id].timestamp,
            device=events[c.node_id].device,
            location=events[c.node_id].location,
            text=events[c.node_id].description,
            characters=list(events[c.node_id].characters),
            score=c.score,
        )
        for c in ranked
        if c.node_id in events
    ]
    fused = sorted(state.fused.values(), key=lambda c: (-c.score, c.node_id))[:EVIDENCE_FUSED]
    for candidate in fused:
        node = store.get_fused(candidate.node_id)
        items.append(
            EvidenceItem(
                node_id=node.node_id,
                kind=NodeKind.FUSED,
                timestamp=node.start,
                end=node.end,
                device=",".join(node.devices),
                text=node.summary,
                characters=list(node.subjects),
                score=candidate.score,
            )
        )
    return items


def final_selection(
    selected_ids: list[str],
    candidates: dict[str, Candidate],
    k: int,
    found: dict[str, tuple[int, int]] | None = None,
    order: Backfill = "history",
    followup_slots: int = 0,
    relevance: QuestionRelevance | None = None,
    reach: int = 0,
    evidence: tuple[int, float] = (0, 0.0),
) -> list[str]:
    """The judged shortlist first, then the rest of the pool, cut to k event ids.

    `history` back-fills in the order the searches found them: round 1's ranking first, and
    the later rounds' new finds take up to `followup_slots` of its last places — each by
    beating the event there on `relevance` (`graphs.retrieval.admission`), or, without it,
    uncontested (round 1 then keeps k − `followup_slots` places and the finds, each round's
    best first, come after them). Without such places a later round could only ever add what
    round 1 left room for, which is nothing: round 1 alone returns k events. `score` orders
    the rest by best score across rounds (scores of different rounds answer different
    queries, so it measured worse). `reach`: see `admit_later_finds`. `evidence` (n, weight):
    the contest reads the question with the first n ids of that order, its best evidence, at
    that weight (`QuestionRelevance.read_with`).
    """
    chosen = [i for i in dict.fromkeys(selected_ids) if i in candidates]
    taken = set(chosen)
    rest = [c for c in candidates.values() if c.node_id not in taken]
    if order == "history" and found:
        history = found_order(found)
        rest.sort(key=history)
        first = [c.node_id for c in rest if history(c)[0] <= 1]
        later = [c.node_id for c in rest if history(c)[0] > 1]
        if relevance is not None:
            merged = [*chosen, *first]
            events, weight = evidence
            # the pull reads the evidence's vectors: only worth it when a find contests a place
            contest = relevance.read_with(merged[:events], weight) if later else relevance
            admitted = admit_later_finds(
                merged, later, k, followup_slots, contest, len(chosen), reach
            )
            return admitted[:k]
        keep = max(0, k - len(chosen) - min(followup_slots, len(later)))
        ranked = [*first[:keep], *later, *first[keep:]]
    else:
        rest.sort(key=lambda c: (-c.score, c.node_id))
        ranked = [c.node_id for c in rest]
    return [*chosen, *ranked][:k]


def spare_order(
    candidates: dict[str, Candidate], found: dict[str, tuple[int, int]], taken: set[str]
) -> list[str]:
    """The pool's events outside the final selection, in the order the searches found them
    (round, then rank): what fills a place the context budget leaves empty. A fourth pack's
    members, past `ContextBudget.max_fused`, are left out of the context; without these the
    context then held 18 events of 20 (three seed-11 questions, `memfuse bench --suite`)."""
    rest = [c for c in candidates.values() if c.node_id not in taken and not is_fused_id(c.node_id)]
    rest.sort(key=found_order(found))
    return [c.node_id for c in rest]


def found_order(
    found: dict[str, tuple[int, int]],
) -> Callable[[Candidate], tuple[int, int, float, str]]:
    """The sort key of the order the searches found the candidates in: round, then rank in
    that round's search (what no round reports comes last), then score and id."""
    last = (len(found) + 1, 0)
    return lambda c: (*found.get(c.node_id, last), -c.score, c.node_id)


def added_by_round(event_ids: list[str], found: dict[str, tuple[int, int]]) -> list[list[str]]:
    """For each round, the final context's events that round was first to find."""
    rounds = max((found[i][0] for i in event_ids if i in found), default=0)
    return [[i for i in event_ids if found.get(i, (0, 0))[0] == r] for r in range(1, rounds + 1)]


def finder_of(candidate: Candidate) -> str:
    """What found a search's candidate: the pivot list its trace names, else the round's own
    search."""
    return candidate.trace.pivot_list() or ROUND_SEARCH


def found_by(
    event_ids: list[str], found: dict[str, tuple[int, int]], finders: dict[str, str]
) -> dict[str, str]:
    """For each of `event_ids` a later round was first to find, what found it."""
    return {
        event_id: finders.get(event_id, ROUND_SEARCH)
        for event_id in event_ids
        if found.get(event_id, (1, 0))[0] > 1
    }


def stop_reason_of(state: State, context: RetrievalContext) -> str:
    if state.stop_reason:
        return state.stop_reason
    if not context.use_controller:
        return "one search round (controller off)"
    if state.judgements and state.judgements[-1].sufficient:
        return f"judged sufficient after round {state.round}"
    if state.round >= context.max_rounds:
        return f"reached the maximum of {context.max_rounds} rounds"
    if state.judgements and state.judgements[-1].next_plan is None:
        return f"no further plan after round {state.round}: missing facets already searched"
    return f"stopped after round {state.round}"
