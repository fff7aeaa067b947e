"""Context assembly: ranked candidates → the reader's serialized, time-ordered context.

Budgets (ContextBudget, paper Appendix C): at most `entries` atomic events; at most
`max_fused` fused nodes contribute, each with its summary as one extra line (when
`include_summaries`; with `summaries_take_entries` the summary uses one of the
`entries`, as in the paper) and at most `max_members` member events; atomic events enter
directly; ids a controller pinned come first; everything is deduplicated; the joined
text stays within `max_chars` (the lowest-ranked lines go first); and the result is
ordered by timestamp, because a reader follows a story better in time order than in
score order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.models import NodeKind, is_fused_id
from memory.records import Candidate, ContextEntry
from memory.search.config import ContextBudget
from memory.store_api import MemoryStoreAPI

PINNED = "pinned by the controller"


@dataclass
class _Plan:
    """The entries chosen so far, in rank order, with the per-fused-node counters."""

    budget: ContextBudget
    picks: list[tuple[str, Candidate | None, str | None]]  # (node id, candidate, via_fused)
    seen: set[str]
    open_fused: dict[str, int]  # fused id -> members placed

    def full(self) -> bool:
        """No entry left: summaries count only when the budget says they take entries."""
        if self.budget.summaries_take_entries:
            return len(self.picks) >= self.budget.entries
        events = sum(1 for node_id, _, _ in self.picks if not is_fused_id(node_id))
        return events >= self.budget.entries

    def add(self, node_id: str, candidate: Candidate | None, via_fused: str | None = None) -> None:
        if node_id in self.seen or self.full():
            return
        self.seen.add(node_id)
        self.picks.append((node_id, candidate, via_fused))
        if via_fused is not None:
            self.open_fused[via_fused] += 1

    def open(self, fused_id: str, candidate: Candidate | None) -> bool:
        """Let a fused node contribute (its summary uses one entry); False if over budget."""
        if fused_id in self.open_fused:
            return True
        if len(self.open_fused) >= self.budget.max_fused or self.full():
            return False
        self.open_fused[fused_id] = 0
        if self.budget.include_summaries and fused_id not in self.seen:
            self.seen.add(fused_id)
            self.picks.append((fused_id, candidate, None))
        return True


def _choose(
    candidates: Sequence[Candidate],
    fused: Sequence[Candidate],
    budget: ContextBudget,
    pinned_ids: Sequence[str],
) -> _Plan:
    """Pinned ids, then the ranking; a member of a fused node that may not contribute
    (fused budget or member cap reached) is left out, as the paper's budget demands."""
    by_id = {c.node_id: c for c in candidates}
    fused_by_id = {c.node_id: c for c in fused}
    plan = _Plan(budget=budget, picks=[], seen=set(), open_fused={})
    for node_id in dict.fromkeys(pinned_ids):
        if is_fused_id(node_id):
            plan.open(node_id, fused_by_id.get(node_id))
        else:
            plan.add(node_id, by_id.get(node_id))
    for candidate in candidates:
        if plan.full():
            break
        via = candidate.via_fused if candidate.via_fused in fused_by_id else None
        if via is None:
            plan.add(candidate.node_id, candidate)
            continue
        if not plan.open(via, fused_by_id[via]) or candidate.node_id in plan.seen:
            continue
        if plan.open_fused[via] < budget.max_members:
            plan.add(candidate.node_id, candidate, via)
    return plan


def assemble_context(
    store: MemoryStoreAPI,
    candidates: Sequence[Candidate],
    fused: Sequence[Candidate] = (),
    budget: ContextBudget | None = None,
    *,
    pinned_ids: Sequence[str] = (),
) -> list[ContextEntry]:
    """The reader's context entries, ordered by (timestamp, id).

    `candidates` is the event-level ranking (SearchHits.candidates, or a controller's
    accumulated one); `fused` the fused nodes they were projected from. A candidate
    whose `via_fused` is not in `fused` counts as a plain atomic event.
    """
    budget = budget or ContextBudget()
    plan = _choose(candidates, fused, budget, pinned_ids)
    event_ids = [node_id for node_id, _, _ in plan.picks if not is_fused_id(node_id)]
    events = {e.event_id: e for e in store.get_events(event_ids)}
    entries: list[ContextEntry] = []
    for node_id, candidate, via in plan.picks:
        provenance = candidate.trace.label() if candidate is not None else PINNED
        score = candidate.score if candidate is not None else 0.0
        if is_fused_id(node_id):
            node = store.get_fused(node_id)
            entries.append(
                ContextEntry(
                    kind=NodeKind.FUSED,
                    node_id=node_id,
                    timestamp=node.start,
                    device=",".join(node.devices),
                    location="",
                    text=node.serialize(),
                    score=score,
                    provenance=provenance,
                )
            )
        else:
            entries.append(ContextEntry.for_event(events[node_id], score, provenance, via))
    entries = _within_chars(entries, budget.max_chars)
    return sorted(entries, key=lambda e: (e.timestamp, e.node_id))


def render_context(entries: Sequence[ContextEntry]) -> str:
    """The text the reader sees: one serialized line per entry."""
    return "\n".join(entry.text for entry in entries)


def _within_chars(ranked: list[ContextEntry], max_chars: int) -> list[ContextEntry]:
    """Drop the lowest-ranked entries until the rendered context fits in max_chars."""
    kept = list(ranked)
    total = len(render_context(kept))
    while kept and total > max_chars:
        dropped = kept.pop()
        total -= len(dropped.text) + (1 if kept else 0)  # its text and its line break
    return kept
