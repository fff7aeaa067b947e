"""BM25L over the same texts as the dense index, maintained incrementally.

Scores equal `rank_bm25.BM25L(corpus).get_scores(query)` for the current corpus (the
tests check this against the library itself), but the index is an inverted index that
absorbs one insert in O(tokens of the document): ingest adds events one at a time and
the fusion agent searches after each of them, so rebuilding a `BM25L` object per query
would cost O(corpus) per event. A query only touches the postings of its own tokens;
each token's postings are turned into numpy arrays lazily and re-made only when a
document containing that token changed (a per-token dirty flag).
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
        self._terms: dict[str, tuple[Counter[str], NodeKind]] = {}
        self._postings: dict[str, dict[int, int]] = {}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._dirty: set[str] = set()
        self._total_len = 0

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
        self._slot_of[node_id] = slot
        length = sum(counts.values())
        self._doc_len[slot] = length
        self._kind[slot] = _KIND_CODE[kind]
        self._total_len += length
        self._terms[node_id] = (counts, kind)
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[slot] = tf
            self._dirty.add(term)

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
            del postings[slot]
            if not postings:
                del self._postings[term]
            self._dirty.add(term)

    # --- queries ----------------------------------------------------------------------

    def _posting_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        if term in self._dirty:
            self._dirty.discard(term)
            self._arrays.pop(term, None)
            postings = self._postings.get(term)
            if postings:
                slots = np.fromiter(postings.keys(), dtype=np.int64, count=len(postings))
                tfs = np.fromiter(postings.values(), dtype=np.float64, count=len(postings))
                self._arrays[term] = (slots, tfs)
        return self._arrays.get(term)

    def _totals(self, query: str, kind: NodeKind | None) -> tuple[np.ndarray, np.ndarray]:
        """(slots, scores) of the documents of `kind` that share a token with the query."""
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
        n_docs = len(self._slot_of)
        tokens = self._tokenize(query)
        if not tokens or n_docs == 0 or self._total_len == 0:
            return empty
        k1, b, delta = self.params.k1, self.params.b, self.params.delta
        avgdl = self._total_len / n_docs
        totals = np.zeros(len(self._ids), dtype=np.float64)
        for term in tokens:  # a repeated query token counts again, as in rank_bm25
            arrays = self._posting_arrays(term)
            if arrays is None:
                continue
            slots, tf = arrays
            idf = math.log(n_docs + 1) - math.log(slots.shape[0] + 0.5)
            ctd = tf / (1 - b + b * self._doc_len[slots] / avgdl)
            totals[slots] += idf * tf * (k1 + 1) * (ctd + delta) / (k1 + ctd + delta)
        keep = totals > 0
        if kind is not None:
            keep &= self._kind[: len(self._ids)] == _KIND_CODE[kind]
        hit = np.flatnonzero(keep)
        return hit, totals[hit]

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
