"""Which of the later rounds' finds enter the final context: those that beat the round-1
event whose place they would take.

Round 1 ranks its events for the question itself; a later round searches from the evidence
(a pivot on it, its distinctive words), and its finds are ranked for those queries, so the
two rankings' scores do not compare. Both are put on one scale instead: an event's cosine
to the question, less `redundancy` times how near a copy it is of an event ranked above the
contested place (0 below cosine `NEAR_COPY`, rising to 1 at an exact copy). A find takes the
last round-1 place still held only by scoring above the event holding it, so the fifth
reading of the same self-test gives way to the oven left on in the next room, and a find
that is merely less relevant never does.

Before this, the later rounds' finds took a fixed share of the context (4 of 20 places)
uncontested, and one round beat the controller on three of five dev sources: on the
generated benchmark those finds were gold 3.2 % of the time against 4.8 % for the round-1
events they pushed out. Measured with `memfuse bench` on the dev sources (household_dev,
household_dev2, conversation_dev, seed 7; recall@20): uncontested 0.841 / 0.774 / 0.691 /
0.413; cosine alone 0.862 / 0.785 / 0.707 / 0.426; discounting every overlap (maximal
marginal relevance) by 0.25 / 0.4 / 0.6: 0.862 / 0.790 / 0.717 / 0.429, 0.862 / 0.785 /
0.720 / 0.427, 0.854 / 0.768 / 0.733 / 0.424; near copies only, by 0.5 (the default):
0.862 / 0.789 / 0.715 / 0.422, and 0.417 on seed 11 (0.408 uncontested). Only the near-copy
rule both lets such a cause in (`tests/graphs/test_retrieval_graph.py`) and is below the
uncontested rule and below one round (`memfuse_no_ar`) on none of them, at three decimals.

The question is read with its best evidence (`QuestionRelevance.read_with`: the question's
vector pulled toward the judged and best round-1 events, `RetrievalContext.
followup_evidence_weight`): what the later rounds find belongs with that evidence (the repair
visit's other records, another day's reading of the record found) more often than with the
question's bare words, which is why round 1 did not rank it. It values the finds and the
places they contest alike, and leaves round 1's ranking alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date

import numpy as np

NO_VECTOR = float("-inf")
NEAR_COPY = 0.8
"""Cosine to an event ranked above from which an event starts counting as a copy of it."""


@dataclass
class QuestionRelevance:
    """Cosines to the question and between events, from the store's own vectors (fetched
    once each, on demand: only the contested places and the finds are ever read)."""

    question: np.ndarray
    vector_of: Callable[[str], np.ndarray | None]
    """An event's unit vector, None when the index has none (it then never wins a place
    and never loses one)."""
    redundancy: float = 0.5
    day_of: Callable[[str], date | None] | None = None
    """An event's day, when copies count only within one day (None: across any days). The
    same record on another day — the next day's step count or screen time — is news to a
    question over several days, not a copy."""
    _vectors: dict[str, np.ndarray | None] = field(default_factory=dict, repr=False)
    _days: dict[str, date | None] = field(default_factory=dict, repr=False)

    def vector(self, node_id: str) -> np.ndarray | None:
        if node_id not in self._vectors:
            self._vectors[node_id] = self.vector_of(node_id)
        return self._vectors[node_id]

    def day(self, node_id: str) -> date | None:
        if self.day_of is None:
            return None
        if node_id not in self._days:
            self._days[node_id] = self.day_of(node_id)
        return self._days[node_id]

    def read_with(self, evidence: Sequence[str], weight: float) -> QuestionRelevance:
        """The same scale with the question read in the light of its best evidence: its unit
        vector plus `weight` times the unit mean of the `evidence` events' vectors (events
        without one are skipped), made unit again; itself when there is nothing to add.
        Vectors already fetched are shared."""
        vectors = [v for v in (self.vector(i) for i in evidence) if v is not None]
        if weight <= 0 or not vectors:
            return self
        centre = np.mean(np.stack(vectors), axis=0)
        question_norm, centre_norm = np.linalg.norm(self.question), np.linalg.norm(centre)
        if question_norm == 0 or centre_norm == 0:
            return self
        read = self.question / question_norm + weight * centre / centre_norm
        return replace(
            self,
            question=(read / np.linalg.norm(read)).astype(np.float32),
            _vectors=self._vectors,
            _days=self._days,
        )

    def similarity(self, node_id: str) -> float:
        vector = self.vector(node_id)
        return NO_VECTOR if vector is None else float(vector @ self.question)

    def values(self, node_ids: Sequence[str], above: Sequence[str]) -> list[float]:
        """Each id's similarity to the question, less `redundancy` × how near a copy it is of
        its closest event in `above` (one matrix product for all of them)."""
        vectors = [self.vector(i) for i in node_ids]
        present = {i: v for i, v in zip(node_ids, vectors) if v is not None}
        known = {i: v for i in above if (v := self.vector(i)) is not None}
        if not present:
            return [NO_VECTOR] * len(node_ids)
        rows = np.stack(list(present.values()))
        scores = rows @ self.question
        if known:
            overlap = rows @ np.stack(list(known.values())).T
            if self.day_of is not None:
                same_day = [[self.day(r) == self.day(a) for a in known] for r in present]
                overlap = np.where(np.array(same_day, dtype=bool), overlap, -1.0)
            closest = np.max(overlap, axis=1)
            copy = np.clip((closest - NEAR_COPY) / (1.0 - NEAR_COPY), 0.0, 1.0)
            scores = scores - self.redundancy * copy
        found = iter(scores.tolist())
        return [NO_VECTOR if v is None else next(found) for v in vectors]


def admit_later_finds(
    ranked: Sequence[str],
    later: Sequence[str],
    k: int,
    slots: int,
    relevance: QuestionRelevance,
    protected: int = 0,
    reach: int = 0,
) -> list[str]:
    """`ranked` (the judged ids, then round 1's order) with later finds let in: free places
    up to `k` are filled first, uncontested, most similar to the question first; then, at
    most `slots` times, the find of highest value takes the last contested place if its
    value is above the event's there (values against the events ranked above that place and
    the finds already let in below it: a copy of one of those is no news either). The first
    `protected` places (the judged ids) are never contested. With `reach`, the contest walks
    the last `reach` places instead, passing over a holder no find beats rather than
    stopping there. Returns every id once: the k chosen first, then the displaced, the rest
    of `ranked` and the finds left out."""
    head = list(ranked[:k])
    taken = set(ranked)
    waiting = sorted(
        dict.fromkeys(i for i in later if i not in taken),
        key=lambda i: (-relevance.similarity(i), i),
    )
    while len(head) < k and waiting:
        head.append(waiting.pop(0))
    displaced: list[str] = []
    floor = max(protected, len(head) - reach) if reach else protected
    position = len(head) - 1
    admitted: list[str] = []
    while waiting and len(displaced) < slots and position >= floor:
        # a find let in lower down counts as above too: its copy says nothing new either
        above = head[:position] + admitted
        *finds, holder = relevance.values([*waiting, head[position]], above)
        if relevance.vector(head[position]) is None:
            holder = float("inf")  # nothing to weigh it by: it keeps its place
        best = max(range(len(waiting)), key=lambda j: (finds[j], -j))
        if finds[best] > holder:
            displaced.append(head[position])
            head[position] = waiting.pop(best)
            admitted.append(head[position])
        elif not reach:
            break
        position -= 1
    return [*head, *displaced, *ranked[k:], *waiting]
