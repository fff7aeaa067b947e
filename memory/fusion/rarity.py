"""How much *rare* vocabulary two events share — the offline twin's evidence of a real link.

Household logs repeat boilerplate ("signal strength was 4 bars", "battery 39%"), so raw word
overlap and even embedding similarity link unrelated events. Words that few past events use
(a thermometer reading of "38.9", "misfire", a shop name) are what a cause and its effect, or
two devices observing one scene, have in common. Document frequencies are counted once per
store from the events already past fusion, then grow with every event the fusion graph
processes. Events still waiting in the fusion queue are not counted: they are the future of the
event being fused, and counting them would make a decision depend on how the stream was batched
(an ingest that stored 256 events before fusing the first would see all 256).
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import Counter
from collections.abc import Iterable

from memory.models import Event
from memory.store_api import MemoryStoreAPI
from memory.text import tokenize


def content_tokens(event: Event) -> set[str]:
    """The event's description words, without its people's names and device ids."""
    names = set(tokenize(" ".join((*event.characters, event.device))))
    return {t for t in tokenize(event.description) if t not in names}


TOKEN_CACHE = 65_536
"""Events whose content tokens are kept (the most recently tokenized): fusion compares an event
with recent ones, and a cache of every event's tokens held ~1.5 KB an event, 1.5 GB at 1M."""


class DocumentFrequency:
    """Token document frequencies over the events counted so far."""

    def __init__(self, events: Iterable[Event] = ()):
        self.df: Counter[str] = Counter()
        self.seen: set[str] = set()
        # events are immutable: tokenized once while they are recent (insertion order: the
        # oldest tokenized leaves first)
        self._tokens: dict[str, frozenset[str]] = {}
        self._lock = threading.Lock()
        for event in events:
            self.add(event)

    @property
    def documents(self) -> int:
        return len(self.seen)

    def tokens(self, event: Event) -> frozenset[str]:
        """`content_tokens(event)`, cached by event id."""
        cached = self._tokens.get(event.event_id)
        if cached is None:
            if len(self._tokens) >= TOKEN_CACHE:
                self._tokens.pop(next(iter(self._tokens)), None)
            cached = self._tokens[event.event_id] = frozenset(content_tokens(event))
        return cached

    def add(self, event: Event) -> None:
        with self._lock:
            if event.event_id not in self.seen:
                self.seen.add(event.event_id)
                self.df.update(self.tokens(event))

    def shared_rarity(
        self,
        a: frozenset[str] | set[str],
        b: frozenset[str] | set[str],
        rare_share: float,
        min_df: int,
    ) -> float:
        """Σ log((N + 1) / df) over the shared tokens used by at most max(rare_share·N, min_df)
        documents; 0 when nothing rare is shared."""
        n = max(self.documents, 1)
        limit = max(rare_share * n, min_df)
        total = 0.0
        for token in a & b:
            df = self.df.get(token, 0)
            if 0 < df <= limit:
                total += math.log((n + 1) / df)
        return total


_CACHE: weakref.WeakKeyDictionary[object, DocumentFrequency] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def frequencies_for(store: MemoryStoreAPI) -> DocumentFrequency:
    """The store's frequency table (built on first use from the events not waiting for fusion,
    then kept and grown by the fusion graph)."""
    with _CACHE_LOCK:
        table = _CACHE.get(store)
        if table is None:
            waiting = set(store.pending_fusion())
            table = DocumentFrequency(e for e in store.all_events() if e.event_id not in waiting)
            _CACHE[store] = table
        return table
