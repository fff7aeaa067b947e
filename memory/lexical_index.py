"""BM25L over the same texts as the dense index, as an inverted index kept up incrementally.

Scores equal `rank_bm25.BM25L(corpus).get_scores(query)` for the current corpus (the tests
check this against the library itself, on random corpora and random add/remove sequences),
but nothing is proportional to the corpus:

* an add or remove costs O(distinct tokens of the document): each token's postings are
  growable numpy arrays (append at the end, remove by moving the last posting into the
  hole), and the corpus-wide numbers BM25L needs — document count, total length, each
  token's document frequency — are counters kept alongside, so IDF and avgdl are computed
  at query time from them instead of by a rebuild;
* a query touches only the postings of its own tokens: it scores those documents, sums
  per document in query-token order (as rank_bm25 does, so the floats come out the same)
  in a scratch array of which it then resets only the touched entries, applies the kind
  filter to the hits only, and ranks only the hits.

`postings_scored` counts the postings every query has touched, so tests can check the
work per query without timing it.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from memory.models import NodeKind
from memory.text import tokenize

_KIND_CODE = {NodeKind.EVENT: 1, NodeKind.FUSED: 2}


@dataclass(frozen=True)
class BM25Params:
    """rank_bm25.BM25L's defaults: term saturation k1, length normalisation b, shift delta."""

    k1: float = 1.5
    b: float = 0.75
    delta: float = 0.5


class _Postings:
    """One token's postings: document slots and term frequencies in growable numpy arrays
    (an append or a removal costs O(1) amortized; a query reads views, copying nothing)."""

    __slots__ = ("n", "slots", "tfs", "where")

    def __init__(self) -> None:
        self.slots = np.empty(2, dtype=np.int64)
        self.tfs = np.empty(2, dtype=np.float64)
        self.n = 0
        self.where: dict[int, int] = {}  # slot -> its position in the arrays

    def add(self, slot: int, tf: int) -> None:
        n = self.n
        if n == self.slots.shape[0]:  # double (a view held by a query keeps the old ones)
            slots, tfs = np.empty(2 * n, dtype=np.int64), np.empty(2 * n, dtype=np.float64)
            slots[:n], tfs[:n] = self.slots, self.tfs
            self.slots, self.tfs = slots, tfs
        self.slots[n] = slot
        self.tfs[n] = tf
        self.where[slot] = n
        self.n = n + 1

    def remove(self, slot: int) -> None:
        hole = self.where.pop(slot)
        self.n = last = self.n - 1
        if hole != last:  # the last posting fills the hole
            moved = int(self.slots[last])
            self.slots[hole] = moved
            self.tfs[hole] = self.tfs[last]
            self.where[moved] = hole


class LexicalIndex:
    """BM25L over events and fused summaries, filterable by kind."""

    def __init__(
        self,
        params: BM25Params | None = None,
        tokenizer: Callable[[str], list[str]] = tokenize,
    ):
        self.params = params or BM25Params()
        self._tokenize = tokenizer
        self._lock = threading.RLock()
        self._slot_of: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._free: list[int] = []
        self._doc_len = np.zeros(0, dtype=np.float64)
        self._kind = np.zeros(0, dtype=np.int8)
        # per-query scratch, all zero / False between queries: only touched slots are reset
        self._acc = np.zeros(0, dtype=np.float64)
        self._seen = np.zeros(0, dtype=bool)
        self._terms: dict[str, tuple[Counter[str], NodeKind]] = {}
        self._postings: dict[str, _Postings] = {}
        self._total_len = 0
        self.postings_scored = 0
        """Postings touched by all queries so far (work counter for tests; never reset)."""

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._slot_of

    # --- writes -----------------------------------------------------------------------

    def add(self, node_id: str, text: str, kind: NodeKind) -> Callable[[], None]:
        """Index (or re-index) one node; returns a function that restores the previous state."""
        return self._set(node_id, (Counter(self._tokenize(text)), kind))

    def remove(self, node_id: str) -> Callable[[], None]:
        return self._set(node_id, None)

    def _set(self, node_id: str, doc: tuple[Counter[str], NodeKind] | None) -> Callable[[], None]:
        with self._lock:
            previous = self._terms.get(node_id)
            if previous is not None:
                self._unindex(node_id, previous[0])
            if doc is not None:
                self._index(node_id, *doc)

        def restore() -> None:
            self._set(node_id, previous)

        return restore

    def _index(self, node_id: str, counts: Counter[str], kind: NodeKind) -> None:
        if self._free:
            slot = self._free.pop()
            self._ids[slot] = node_id
        else:
            slot = len(self._ids)
            self._ids.append(node_id)
            if slot >= self._doc_len.shape[0]:
                capacity = max(1024, 2 * self._doc_len.shape[0])
                self._doc_len = np.resize(self._doc_len, capacity)
                self._kind = np.resize(self._kind, capacity)
                self._acc = np.zeros(capacity, dtype=np.float64)
                self._seen = np.zeros(capacity, dtype=bool)
        self._slot_of[node_id] = slot
        length = sum(counts.values())
        self._doc_len[slot] = length
        self._kind[slot] = _KIND_CODE[kind]
        self._total_len += length
        self._terms[node_id] = (counts, kind)
        index = self._postings
        for term, tf in counts.items():
            postings = index.get(term)
            if postings is None:
                postings = index[term] = _Postings()
            postings.add(slot, tf)

    def _unindex(self, node_id: str, counts: Counter[str]) -> None:
        slot = self._slot_of.pop(node_id)
        self._total_len -= int(self._doc_len[slot])
        self._doc_len[slot] = 0
        self._kind[slot] = 0
        self._ids[slot] = None
        self._free.append(slot)
        del self._terms[node_id]
        for term in counts:
            postings = self._postings[term]
            postings.remove(slot)
            if postings.n == 0:
                del self._postings[term]

    # --- queries ----------------------------------------------------------------------

    def _totals(self, query: str, kind: NodeKind | None) -> tuple[np.ndarray, np.ndarray]:
        """(slots, scores) of the documents of `kind` that share a token with the query.
        Work: the postings of the query's tokens, nothing else."""
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
        n_docs = len(self._slot_of)
        tokens = self._tokenize(query)
        if not tokens or n_docs == 0 or self._total_len == 0:
            return empty
        k1, b, delta = self.params.k1, self.params.b, self.params.delta
        avgdl = self._total_len / n_docs
        log_n = math.log(n_docs + 1)
        parts: list[tuple[np.ndarray, np.ndarray]] = []
        for term in tokens:  # a repeated query token counts again, as in rank_bm25
            postings = self._postings.get(term)
            if postings is None:
                continue
            slots, tf = postings.slots[: postings.n], postings.tfs[: postings.n]
            self.postings_scored += postings.n
            # rank_bm25.BM25L term by term, in the same operation order (the same floats)
            idf = log_n - math.log(postings.n + 0.5)
            ctd = tf / (1 - b + b * self._doc_len[slots] / avgdl)
            parts.append((slots, idf * tf * (k1 + 1) * (ctd + delta) / (k1 + ctd + delta)))
        if not parts:
            return empty
        if len(parts) == 1:  # a token's postings hold each document once
            hit, totals = parts[0]
        else:  # sum per document, in query-token order, in the zeroed scratch arrays
            acc, seen = self._acc, self._seen
            found = [parts[0][0]]
            seen[found[0]] = True
            try:
                acc[found[0]] = parts[0][1]
                for slots, score in parts[1:]:
                    new = slots[~seen[slots]]
                    seen[new] = True
                    found.append(new)
                    acc[slots] += score
                hit = np.concatenate(found)
                totals = acc[hit]
            finally:  # reset only the touched entries, whatever happened
                touched = np.concatenate(found)
                acc[touched] = 0.0
                seen[touched] = False
        keep = totals > 0
        if kind is not None:
            keep &= self._kind[hit] == _KIND_CODE[kind]
        return hit[keep], totals[keep]

    def scores(self, query: str, kind: NodeKind | None = None) -> dict[str, float]:
        """BM25L score of every document (of `kind`) that shares a token with the query."""
        with self._lock:
            slots, values = self._totals(query, kind)
            return {str(self._ids[s]): float(v) for s, v in zip(slots, values)}

    def search(self, query: str, n: int, kind: NodeKind | None = None) -> list[tuple[str, float]]:
        """Top-n positive BM25L scores, best first (ties by id, for reproducible ranks)."""
        if n <= 0:
            return []
        with self._lock:
            slots, values = self._totals(query, kind)
            if slots.size > n:
                # keep every document tied with the n-th score so the id tie-break is exact
                cutoff = np.partition(values, slots.size - n)[slots.size - n]
                keep = values >= cutoff
                slots, values = slots[keep], values[keep]
            ranked = sorted(
                ((str(self._ids[s]), float(v)) for s, v in zip(slots, values)),
                key=lambda item: (-item[1], item[0]),
            )
            return ranked[:n]
