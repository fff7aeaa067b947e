"""Moments: a dialogue turn read together with the turns around it.

A turn often says little on its own. "Definitely Dune, you'll love the sandworms" answers a
question asked one turn before ("which book should I take on the flight?"), and a question
about Gina's flight reading shares no word and little meaning with the answer alone. Each
pair of consecutive turns is one *moment*: both turns' index texts, in order, embedded as
one text. A turn that has a moment is scored against a query by the mean of three cosines —
its own, its moment with the turn before, its moment with the turn after (a missing one
counts as its own cosine) — so an answer ranks by what it answers, and a question by what
it was answered with.

What pairs: two dialogue turns (`Modality.DIALOGUE`) at the same place with the same
visibility, one right after the other among those, at most `MOMENT_GAP` apart. The same
visibility keeps a moment from carrying a turn's words to a reader who may not see that turn:
both turns of a moment are visible to exactly the same people, so a moment is visible exactly
when its turn is. A reader's time is the other limit: the moment with the turn after counts
only when that turn was recorded at or before the reader's time (`Moments.scores`), so a
question asked mid-conversation is not ranked with what was said after it. A reader sees the
moments of a memory that never held what they may not read (`tests/memory/test_moments.py`).

What they change is measured in `SearchConfig.use_moments` (`memfuse bench --suite`, memfuse
against memfuse_no_moments). The same reading for every event at one place (a sensor's
reading with the next one in the room), tried as a temporary patch, lowered the generated
benchmark (seed 7 0.454 → 0.442, seed 11 0.459 → 0.439): in a household the events next to
each other in a room are mostly unrelated; in a conversation they are one exchange.

The vectors are never written to the embedding cache: forgetting a turn must leave no trace
of its text, and a moment quotes two turns. They are held in memory, rebuilt when the store
changes; a moment already embedded is kept by its two turns' ids (events never change), so a
rebuild embeds only the new ones, and forgets those whose turns are gone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise

import numpy as np

from memory.embeddings import l2_normalise
from memory.models import Event, Modality

_EPOCH = datetime(1970, 1, 1)  # stored times are naive UTC (`memory.models`)
MOMENT_GAP = timedelta(minutes=5)
"""How far apart two consecutive turns at one place may be and still make one moment. A
conversation's turns are seconds to a minute apart and its sessions days apart; 5, 30 and 120
minutes gave the same recall on every dev source but household_dev2 (0.825 at 5 and 30, 0.820
at 120: two speaker dialogues an hour apart are not one exchange). `memfuse bench --suite`."""

Embed = Callable[[list[str]], np.ndarray]
Pair = tuple[str, str]


def moment_pairs(
    turns: Sequence[Event], visibility_of: Callable[[str], str], gap: timedelta = MOMENT_GAP
) -> list[tuple[Event, Event]]:
    """The (before, after) pairs of dialogue turns that make a moment (see module doc), in
    place, audience and time order: consecutive among the turns at one place that the same
    people may see, so an aside only one speaker may see neither pairs with the turns around
    it nor keeps them apart."""
    groups: dict[tuple[str, str], list[Event]] = {}
    for turn in turns:
        if turn.modality == Modality.DIALOGUE:
            key = (turn.location, visibility_of(turn.event_id))
            groups.setdefault(key, []).append(turn)
    pairs: list[tuple[Event, Event]] = []
    for key in sorted(groups):
        ordered = sorted(groups[key], key=lambda e: (e.timestamp, e.event_id))
        pairs.extend((b, a) for b, a in pairwise(ordered) if a.timestamp - b.timestamp <= gap)
    return pairs


def moment_text(before: Event, after: Event) -> str:
    return f"{before.index_text()} {after.index_text()}"


@dataclass(frozen=True)
class Moments:
    """The turns that have a moment, each with three unit vectors: its own, its moment with
    the turn before and its moment with the turn after (its own where it has none)."""

    ids: tuple[str, ...] = ()
    own: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    before: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    after: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    after_time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """When the turn after was recorded (seconds since 1970, naive UTC; the turn's own time
    where it has no moment with a turn after)."""
    own_time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """When each turn was recorded (seconds since 1970, naive UTC)."""
    rows: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def scores(
        self, queries: np.ndarray, as_of: datetime | None, rows: np.ndarray | None = None
    ) -> np.ndarray:
        """Per turn (all, or `rows`), the best over `queries` of the mean of its three
        cosines; a moment with a turn recorded after `as_of` counts as the turn's own."""
        queries = np.atleast_2d(np.asarray(queries, dtype=np.float32))
        if not len(self) or queries.size == 0:
            return np.zeros(0 if rows is None else len(rows), dtype=np.float32)
        pick = slice(None) if rows is None else rows
        own = self.own[pick] @ queries.T
        before = self.before[pick] @ queries.T
        after = self.after[pick] @ queries.T
        if as_of is not None:
            later = self.after_time[pick] > _seconds(as_of)
            after[later] = own[later]
        best: np.ndarray = ((own + before + after) / 3.0).max(axis=1)
        return best

    def top(self, query: np.ndarray, n: int, as_of: datetime | None) -> list[tuple[str, float]]:
        """The `n` best turns for one query by their moments (ties by id), among those
        recorded by `as_of`. A turn whose moments all lie after `as_of` scores its own
        cosine, as in a memory that never held them."""
        if n <= 0 or not len(self):
            return []
        scores = self.scores(query, as_of)
        rows = np.arange(len(self))
        if as_of is not None:
            rows = rows[self.own_time <= _seconds(as_of)]
        if rows.size > n:  # only rows at or above the n-th best score can make the cut
            cutoff = np.partition(scores[rows], rows.size - n)[rows.size - n]
            rows = rows[scores[rows] >= cutoff]
        ranked = sorted(rows.tolist(), key=lambda r: (-float(scores[r]), self.ids[r]))[:n]
        return [(self.ids[r], float(scores[r])) for r in ranked]

    def cosines(
        self, queries: np.ndarray, node_ids: Sequence[str], as_of: datetime | None
    ) -> dict[str, float]:
        """Moment scores (`scores`) of those of `node_ids` that are turns with a moment (the
        caller has checked the reader may see them)."""
        known = [i for i in node_ids if i in self.rows]
        if not known:
            return {}
        rows = np.fromiter((self.rows[i] for i in known), dtype=np.int64, count=len(known))
        return dict(zip(known, (float(x) for x in self.scores(queries, as_of, rows))))


class MomentBuilder:
    """Builds a store's `Moments`, keeping each moment's vector across rebuilds (by its two
    turns' ids) so that only new moments are embedded."""

    def __init__(self, embed: Embed):
        self._embed = embed
        self._held: dict[Pair, np.ndarray] = {}

    @property
    def held(self) -> set[Pair]:
        """The (before, after) ids of the moments whose vectors it holds."""
        return set(self._held)

    def forget(self, event_ids: Sequence[str]) -> None:
        """Drop every held moment of these turns now (a forget), not at the next build."""
        gone = set(event_ids)
        self._held = {k: v for k, v in self._held.items() if not gone.intersection(k)}

    def build(
        self,
        turns: Sequence[Event],
        visibility_of: Callable[[str], str],
        vectors_of: Callable[[list[str]], np.ndarray],
    ) -> Moments:
        pairs = moment_pairs(turns, visibility_of)
        keys = [(b.event_id, a.event_id) for b, a in pairs]
        new = [(k, p) for k, p in zip(keys, pairs) if k not in self._held]
        if new:
            vectors = _unit(self._embed([moment_text(*p) for _, p in new]), len(new))
            self._held.update((k, v) for (k, _), v in zip(new, vectors))
        self._held = {k: self._held[k] for k in keys}  # a forgotten turn's moments go
        if not pairs:
            return Moments()
        by_id = {e.event_id: e for pair in pairs for e in pair}
        ids = tuple(sorted(by_id, key=lambda i: (by_id[i].timestamp, i)))
        rows = {i: r for r, i in enumerate(ids)}
        own = _unit(np.asarray(vectors_of(list(ids)), dtype=np.float32), len(ids))
        before, after = own.copy(), own.copy()
        own_time = np.array([_seconds(by_id[i].timestamp) for i in ids])
        after_time = own_time.copy()
        for key in keys:
            vector = self._held[key]
            first, second = rows[key[0]], rows[key[1]]
            after[first] = vector
            after_time[first] = own_time[second]
            before[second] = vector
        return Moments(
            ids=ids,
            own=own,
            before=before,
            after=after,
            after_time=after_time,
            rows=rows,
            own_time=own_time,
        )


def _unit(vectors: np.ndarray, expected: int) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != expected:
        raise ValueError(f"expected {expected} vectors, got an array of shape {vectors.shape}")
    return l2_normalise(vectors)


def _seconds(moment: datetime) -> float:
    return (moment.replace(tzinfo=None) - _EPOCH).total_seconds()
