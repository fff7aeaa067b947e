"""BM25L over the same texts as the dense index, as an inverted index kept up incrementally.

Scores equal `rank_bm25.BM25L(corpus).get_scores(query)` for the current corpus (the tests
check this against the library itself, on random corpora and random add/remove sequences),
but nothing is proportional to the corpus:

* an add or remove costs O(distinct tokens of the document): each token's postings are
  growable numpy arrays (append at the end, remove by moving the last posting into the
  hole), each document knows where its postings are (so a remove finds them without a
  scan, and the posting moved into a hole is re-pointed in its own document), and the
  corpus-wide numbers BM25L needs — document count, total length, each token's document
  frequency (its postings' length) — are counters kept alongside, so IDF and avgdl are
  computed at query time from them instead of by a rebuild;
* a query touches only the postings of its own tokens: it scores those documents, sums
  per document in query-token order (as rank_bm25 does, so the floats come out the same)
  in a scratch array of which it then resets only the touched entries, applies the kind
  filter to the hits only, and ranks only the hits. The last query's unfiltered scores
  are kept until the next write: one search asks the same BM25L query twice (its seed
  list over all kinds, its guard list over events), and the second call then only filters.

Memory is a few bytes per posting, because at a million documents every per-posting or
per-document Python object costs gigabytes: tokens are small ints (one vocabulary dict,
ids never reused, so an undo snapshot's ids stay valid), a posting is an int32 document
slot plus a uint8 term frequency (widened in place for the rare longer run), a document
is one int32 array of its token ids followed by its postings' positions. Frequencies are
integers, so scoring them in float64 gives the very floats rank_bm25 computes.

`postings_scored` counts the postings every query has touched, so tests can check the
work per query without timing it.
"""

from __future__ import annotations

import math
import threading
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memory.models import NodeKind
from memory.text import tokenize
from memory.vector_table import epoch_seconds

_KIND_CODE = {NodeKind.EVENT: 1, NodeKind.FUSED: 2}
_KIND_OF_CODE = {code: kind for kind, code in _KIND_CODE.items()}
_TOKEN_ID = np.int32  # token ids and document slots
_TF = np.uint8  # term frequencies until one does not fit
_TF_MAX = int(np.iinfo(_TF).max)
_WIDE_TF = np.int64
_ALWAYS = (-math.inf, math.inf)  # the time span of a document added without one


@dataclass(frozen=True)
class BM25Params:
    """rank_bm25.BM25L's defaults: term saturation k1, length normalisation b, shift delta."""

    k1: float = 1.5
    b: float = 0.75
    delta: float = 0.5


@dataclass(frozen=True)
class _Doc:
    """One document as the index holds it: distinct token ids, their frequencies, its kind
    and time span (what an undo re-indexes; token ids are never reused, so it stays valid)."""

    tokens: np.ndarray
    tfs: np.ndarray
    kind: NodeKind
    span: tuple[float, float] = _ALWAYS
    """Its first and last time, in `epoch_seconds` (a document added without one: always)."""


class _Postings:
    """One token's postings: document slots and term frequencies in growable numpy arrays
    (an append or a removal costs O(1) amortized; a query reads views, copying nothing)."""

    __slots__ = ("n", "slots", "tfs")

    def __init__(self) -> None:
        self.slots = np.empty(2, dtype=_TOKEN_ID)
        self.tfs = np.empty(2, dtype=_TF)
        self.n = 0

    def add(self, slot: int, tf: int) -> int:
        """Append a posting; returns its position."""
        n = self.n
        if n == self.slots.shape[0]:  # double (a view held by a query keeps the old ones)
            slots, tfs = np.empty(2 * n, dtype=self.slots.dtype), np.empty(2 * n, self.tfs.dtype)
            slots[:n], tfs[:n] = self.slots, self.tfs
            self.slots, self.tfs = slots, tfs
        if tf > _TF_MAX and self.tfs.dtype != _WIDE_TF:
            self.tfs = self.tfs.astype(_WIDE_TF)
        self.slots[n] = slot
        self.tfs[n] = tf
        self.n = n + 1
        return n

    def remove(self, hole: int) -> tuple[int, int]:
        """Take the posting at `hole` out; the last posting fills the hole. Returns the
        removed tf and the slot of the document whose posting now sits at `hole` (the
        removed one's own slot when it was the last)."""
        tf = int(self.tfs[hole])
        self.n = last = self.n - 1
        moved = int(self.slots[last])
        self.slots[hole] = moved
        self.tfs[hole] = self.tfs[last]
        return tf, moved


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
        self._token_id: dict[str, int] = {}
        self._tokens: list[str] = []  # token id -> token
        self._postings: list[_Postings] = []  # token id -> its postings (kept when emptied)
        self._slot_of: dict[str, int] = {}
        self._ids: list[str | None] = []
        # slot -> its k distinct token ids, then the positions of its k postings
        self._doc_postings: list[array[int] | None] = []
        self._free: list[int] = []
        self._doc_len = np.zeros(0, dtype=np.float64)
        self._kind = np.zeros(0, dtype=np.int8)
        # slot -> its time span (epoch seconds): a search through a time cut keeps the hits
        # inside it, so a question asked early in a long memory is not handed the later hits
        # to drop one by one (and to ask again for four times as many)
        self._start = np.zeros(0, dtype=np.float64)
        self._end = np.zeros(0, dtype=np.float64)
        # per-query scratch, all zero / False between queries: only touched slots are reset
        self._acc = np.zeros(0, dtype=np.float64)
        self._seen = np.zeros(0, dtype=bool)
        self._total_len = 0
        # the last query's tokens and unfiltered (slots, scores); any write clears it
        self._last: tuple[list[str], tuple[np.ndarray, np.ndarray]] | None = None
        self.postings_scored = 0
        """Postings touched by all queries so far (work counter for tests; never reset)."""

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._slot_of

    def term_counts(self, node_id: str) -> Counter[str] | None:
        """The token counts indexed for `node_id` (None if absent), for consistency checks:
        it scans the postings of the node's tokens, so it is not meant for hot paths."""
        with self._lock:
            slot = self._slot_of.get(node_id)
            if slot is None:
                return None
            tokens, positions = self._postings_of(slot)
            return Counter(
                {
                    self._tokens[t]: int(self._postings[t].tfs[p])
                    for t, p in zip(tokens, positions, strict=True)
                }
            )

    # --- writes -----------------------------------------------------------------------

    def add(
        self,
        node_id: str,
        text: str,
        kind: NodeKind,
        span: tuple[datetime, datetime] | None = None,
    ) -> Callable[[], None]:
        """Index (or re-index) one node; returns a function that restores the previous state.
        `span`: its first and last time (an event's timestamp twice), which a search `between`
        two times filters on; a node without one is inside every window."""
        counts = Counter(self._tokenize(text))
        times = _ALWAYS if span is None else (epoch_seconds(span[0]), epoch_seconds(span[1]))
        with self._lock:
            return self._set(node_id, self._encode(counts, kind, times))

    def remove(self, node_id: str) -> Callable[[], None]:
        return self._set(node_id, None)

    def _encode(self, counts: Counter[str], kind: NodeKind, span: tuple[float, float]) -> _Doc:
        """Token counts as token ids (new tokens get the next ids) and frequencies."""
        token_id = self._token_id
        tokens = np.empty(len(counts), dtype=_TOKEN_ID)
        for i, term in enumerate(counts):
            tid = token_id.get(term)
            if tid is None:
                tid = token_id[term] = len(self._tokens)
                self._tokens.append(term)
                self._postings.append(_Postings())
            tokens[i] = tid
        return _Doc(tokens, np.fromiter(counts.values(), np.int64, len(counts)), kind, span)

    def _set(self, node_id: str, doc: _Doc | None) -> Callable[[], None]:
        with self._lock:
            self._last = None
            previous = self._unindex(node_id) if node_id in self._slot_of else None
            if doc is not None:
                self._index(node_id, doc)

        def restore() -> None:
            self._set(node_id, previous)

        return restore

    def _new_slot(self, node_id: str) -> int:
        if self._free:
            slot = self._free.pop()
            self._ids[slot] = node_id
            return slot
        slot = len(self._ids)
        self._ids.append(node_id)
        self._doc_postings.append(None)
        if slot >= self._doc_len.shape[0]:
            capacity = max(1024, 2 * self._doc_len.shape[0])
            self._doc_len = np.resize(self._doc_len, capacity)
            self._kind = np.resize(self._kind, capacity)
            self._start = np.resize(self._start, capacity)
            self._end = np.resize(self._end, capacity)
            self._acc = np.zeros(capacity, dtype=np.float64)
            self._seen = np.zeros(capacity, dtype=bool)
        return slot

    def _index(self, node_id: str, doc: _Doc) -> None:
        slot = self._new_slot(node_id)
        self._slot_of[node_id] = slot
        length = int(doc.tfs.sum())
        self._doc_len[slot] = length
        self._kind[slot] = _KIND_CODE[doc.kind]
        self._start[slot], self._end[slot] = doc.span
        self._total_len += length
        postings = self._postings
        tokens = doc.tokens.tolist()
        positions = [
            postings[tid].add(slot, tf) for tid, tf in zip(tokens, doc.tfs.tolist(), strict=True)
        ]
        self._doc_postings[slot] = array("i", tokens + positions)

    def _postings_of(self, slot: int) -> tuple[array[int], array[int]]:
        """(token ids, positions of its postings) of the document at `slot`."""
        packed = self._doc_postings[slot]
        assert packed is not None, "a free slot has no postings"
        k = len(packed) // 2
        return packed[:k], packed[k:]

    def _unindex(self, node_id: str) -> _Doc:
        """Take a node out; returns what it was, for an undo."""
        slot = self._slot_of.pop(node_id)
        tokens, positions = self._postings_of(slot)
        tfs = [self._unpost(slot, tid, hole) for tid, hole in zip(tokens, positions, strict=True)]
        removed = _Doc(
            np.array(tokens, dtype=_TOKEN_ID),
            np.array(tfs, dtype=np.int64),
            _KIND_OF_CODE[int(self._kind[slot])],
            (float(self._start[slot]), float(self._end[slot])),
        )
        self._total_len -= int(self._doc_len[slot])
        self._doc_len[slot] = 0
        self._kind[slot] = 0
        self._ids[slot] = None
        self._doc_postings[slot] = None
        self._free.append(slot)
        return removed

    def _unpost(self, slot: int, tid: int, hole: int) -> int:
        """Remove `slot`'s posting of token `tid` at position `hole`; re-point the document
        whose posting moved into the hole. Returns the removed tf."""
        tf, moved = self._postings[tid].remove(hole)
        if moved != slot:
            other = self._doc_postings[moved]
            assert other is not None, "a posting points at a free slot"
            other[len(other) // 2 + other.index(tid)] = hole  # ids come first: index finds it
        return tf

    # --- queries ----------------------------------------------------------------------

    def _totals(
        self,
        query: str,
        kind: NodeKind | None,
        between: tuple[datetime, datetime] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(slots, scores) of the documents of `kind`, with a time span meeting `between`,
        that share a token with the query. Work: the postings of the query's tokens (none when
        it repeats the last query since the last write), then the filters over the hits."""
        tokens = self._tokenize(query)
        if self._last is None or self._last[0] != tokens:
            self._last = (tokens, self._score(tokens))
        hit, totals = self._last[1]
        if kind is None and between is None:
            return hit, totals
        keep = np.ones(hit.size, dtype=bool)
        if kind is not None:
            keep &= self._kind[hit] == _KIND_CODE[kind]
        if between is not None:
            lo, hi = epoch_seconds(between[0]), epoch_seconds(between[1])
            keep &= (self._start[hit] <= hi) & (self._end[hit] >= lo)
        return hit[keep], totals[keep]

    def rarity(self, text: str) -> dict[str, float]:
        """BM25L's idf of each distinct token of `text` (absent tokens get the highest), so
        a caller can tell a distinctive word from boilerplate by the index's own measure."""
        with self._lock:
            log_n = math.log(len(self._slot_of) + 1)
            rarity: dict[str, float] = {}
            for term in dict.fromkeys(self._tokenize(text)):
                tid = self._token_id.get(term)
                df = 0 if tid is None else self._postings[tid].n
                rarity[term] = log_n - math.log(df + 0.5)
            return rarity

    def common(self, text: str, share: float) -> list[str]:
        """The distinct tokens of `text` found in more than `share` of the documents, in
        order: words every record of a kind carries (a speaker's name in each of their turns)
        say nothing about which record is meant."""
        with self._lock:
            return self._common(list(dict.fromkeys(self._tokenize(text))), share)

    def _common(self, tokens: list[str], share: float) -> list[str]:
        limit = share * len(self._slot_of)
        return [
            term
            for term in tokens
            if (tid := self._token_id.get(term)) is not None and self._postings[tid].n > limit
        ]

    def _uncommon_holders(self, query: str, common_share: float) -> np.ndarray | None:
        """Slots of the documents holding a query token found in at most `common_share` of
        the documents (a token the index lacks is uncommon and held by none); None when no
        query token is common, or every one is (nothing to tell hits apart by)."""
        tokens = list(dict.fromkeys(self._tokenize(query)))
        common = set(self._common(tokens, common_share))
        if not common or len(common) == len(tokens):
            return None
        uncommon = [
            postings.slots[: postings.n]
            for term in tokens
            if term not in common
            and (tid := self._token_id.get(term)) is not None
            and (postings := self._postings[tid]).n
        ]
        return np.concatenate(uncommon) if uncommon else np.zeros(0, dtype=_TOKEN_ID)

    def _score(self, tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(slots, positive BM25L scores) of every document sharing a token with the query."""
        empty = (np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float64))
        n_docs = len(self._slot_of)
        if not tokens or n_docs == 0 or self._total_len == 0:
            return empty
        k1, b, delta = self.params.k1, self.params.b, self.params.delta
        avgdl = self._total_len / n_docs
        log_n = math.log(n_docs + 1)
        parts: list[tuple[np.ndarray, np.ndarray]] = []
        for term in tokens:  # a repeated query token counts again, as in rank_bm25
            tid = self._token_id.get(term)
            postings = None if tid is None else self._postings[tid]
            if postings is None or postings.n == 0:
                continue
            # widened once here: numpy indexes with intp, and BM25L computes in float64
            slots = postings.slots[: postings.n].astype(np.intp)
            tf = postings.tfs[: postings.n].astype(np.float64)
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
        return hit[keep], totals[keep]

    def scores(self, query: str, kind: NodeKind | None = None) -> dict[str, float]:
        """BM25L score of every document (of `kind`) that shares a token with the query."""
        with self._lock:
            slots, values = self._totals(query, kind)
            return {str(self._ids[s]): v for s, v in zip(slots.tolist(), values.tolist())}

    def search(
        self,
        query: str,
        n: int,
        kind: NodeKind | None = None,
        between: tuple[datetime, datetime] | None = None,
        common_share: float | None = None,
    ) -> list[tuple[str, float]]:
        """Top-n positive BM25L scores, best first (ties by id, for reproducible ranks), of
        the nodes of `kind` whose time span meets `between` (scored over the whole corpus).

        With `common_share`, a node that shares with the query only tokens found in more than
        that share of the documents is no hit (scores stay BM25L's): a short turn matching
        nothing but its speaker's name, which every turn of theirs carries, would otherwise
        head the list. A query whose tokens are all that common keeps every hit; one whose
        other tokens no document holds has none (its common words alone tell nothing)."""
        if n <= 0:
            return []
        with self._lock:
            slots, values = self._totals(query, kind, between)
            if common_share is not None:
                holders = self._uncommon_holders(query, common_share)
                if holders is not None:
                    keep = np.isin(slots, holders)
                    slots, values = slots[keep], values[keep]
            if slots.size > n:
                # keep every document tied with the n-th score so the id tie-break is exact
                cutoff = np.partition(values, slots.size - n)[slots.size - n]
                keep = values >= cutoff
                slots, values = slots[keep], values[keep]
            ranked = sorted(
                ((str(self._ids[s]), v) for s, v in zip(slots.tolist(), values.tolist())),
                key=lambda item: (-item[1], item[0]),
            )
            return ranked[:n]
