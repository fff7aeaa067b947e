"""The read/write surface of the memory store, as a Protocol.

`memory.store.MemoryStore` implements it; the search engine, the fusion commit and
the graphs depend only on this surface, so tests can reason about it in one place. Its
lifecycle (where it lives, catching up, flushing, transactions, closing) is part of the
surface too, so callers use it directly instead of probing for it with `getattr`.
All vectors are L2-normalised float32 numpy arrays, so cosine = dot product.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from pydantic import BaseModel, Field

from memory.models import Edge, EdgeType, Event, FusedNode, Link, NodeKind

PlanStatus = Literal["pending", "done", "rejected"]


class AddReport(BaseModel):
    """Outcome of an add_events batch."""

    added: list[str] = Field(default_factory=list, description="Ids written now.")
    unchanged: list[str] = Field(
        default_factory=list, description="Ids already stored with identical content."
    )


class StoreStats(BaseModel):
    events: int
    fused_nodes: int
    mean_members: float
    edges: dict[str, int]
    devices: int
    people: int
    first_event: datetime | None
    last_event: datetime | None
    pending_plans: int = 0
    pending_fusion: int = 0


class MemoryStoreAPI(Protocol):
    # --- lifecycle ---
    @property
    def data_dir(self) -> Path:
        """The data dir it was opened from (its embedding cache, embedded Chroma, lock, log)."""

    @property
    def namespace(self) -> str: ...

    @property
    def read_only(self) -> bool:
        """Opened from a data dir we may not write: reads work, writes are refused."""

    def refresh(self) -> bool:
        """Catch up with writes other processes committed; True when something changed."""

    def flush(self) -> None:
        """Write buffered vectors through now (also done on close)."""

    def settle(self) -> None:
        """The end of one write call: buffered vectors through now where other processes
        read them, else with the next full buffer or the close."""

    def transaction(self) -> AbstractContextManager[Any]:
        """Group writes into one atomic commit; an exception inside undoes all of them."""

    def close(self) -> None: ...

    # --- events (immutable) ---
    def add_events(
        self,
        events: Sequence[Event],
        progress: bool = False,
        pending: bool = False,
        visibility: Mapping[str, str] | None = None,
    ) -> AddReport:
        """All-or-nothing: a conflicting id (same id, other content) raises EventConflictError
        before anything is written; identical re-adds are no-ops. `pending` queues the new
        events for fusion in the same write; `visibility` gives new events' visibilities."""

    def check_events(self, events: Sequence[Event]) -> AddReport:
        """What add_events would add / leave unchanged, with the same errors; writes nothing."""

    # --- the fusion queue ---
    def pending_fusion(self) -> list[str]:
        """Stored events still waiting for fusion, oldest first."""

    def mark_fused(self, event_id: str) -> None:
        """Take an event off the fusion queue."""

    def note_pending(self, event_id: str, reason: str) -> None:
        """Record why a queued event's fusion did not finish."""

    def has_node(self, node_id: str) -> bool: ...
    def visibility_of(self, event_id: str) -> str:
        """Who may see the event: `household`, `private:<p>` or `people:<a>,<b>`."""

    def get_event(self, event_id: str) -> Event: ...
    def get_events(self, event_ids: Iterable[str]) -> list[Event]: ...
    def all_events(self) -> list[Event]:
        """Every event, ordered by (timestamp, event_id)."""

    def set_visibility(self, changes: Mapping[str, str]) -> list[str]:
        """New canonical visibilities by event id, in one write; the ids that changed."""

    def forget_events(self, event_ids: Sequence[str]) -> dict[str, int]:
        """Remove events from every table and index (packs are the caller's to re-fuse, in
        the same transaction); counts of what went."""

    def scrub_forgotten(self, texts: Sequence[str]) -> dict[str, int]:
        """After a committed forget: scrub deleted bytes from the files (vectors, cache, WAL)."""

    # --- fused nodes ---
    def get_fused(self, node_id: str) -> FusedNode: ...
    def all_fused(self) -> list[FusedNode]: ...
    def fused_of(self, event_id: str) -> list[str]:
        """Fused nodes the event belongs to."""

    def put_fused(self, node: FusedNode) -> None:
        """Insert or replace a fused node: re-embed and re-index its summary, rewrite its belong
        edges."""

    def delete_fused(self, node_id: str) -> None: ...

    # --- edges ---
    def add_edge(self, edge: Edge) -> bool:
        """Adds a causal or semantic edge (belong edges follow put_fused); False if it already
        exists."""

    def remove_edge(self, edge: Edge) -> bool:
        """Removes a causal or semantic edge; False if it was not there."""

    def has_edge(self, src: str, dst: str, edge_type: EdgeType) -> bool: ...
    def neighbors(self, node_id: str, edge_type: EdgeType | None = None) -> list[Edge]:
        """Edges touching node_id in either direction."""

    def links(self, node_id: str) -> list[Link]:
        """`neighbors(node_id)` as seen from the node, in the same order (a walk's read)."""

    def edge_counts(self) -> dict[str, int]: ...

    # --- indexes ---
    def embed_query(self, text: str) -> np.ndarray: ...
    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...
    def vector(self, node_id: str) -> np.ndarray: ...
    def dense_search(
        self,
        query_vector: np.ndarray,
        n: int,
        kind: NodeKind | None = None,
        between: tuple[datetime, datetime] | None = None,
    ) -> list[tuple[str, float]]:
        """Nearest nodes by cosine similarity, best first; `between` restricts events by time."""

    def lexical_search(
        self,
        query: str,
        n: int,
        kind: NodeKind | None = None,
        between: tuple[datetime, datetime] | None = None,
        common_share: float | None = None,
    ) -> list[tuple[str, float]]:
        """BM25L over the same texts; only positive scores, best first; `between` keeps the
        nodes whose time span meets it (scored against the whole memory all the same); with
        `common_share`, a node that shares with the query only tokens found in more than that
        share of the documents is no hit (a query whose tokens are all that common keeps every
        hit; one whose other tokens no document holds has none)."""

    def moment_search(
        self, query_vector: np.ndarray, n: int, as_of: datetime | None = None
    ) -> list[tuple[str, float]]:
        """The `n` best events read by their moments (`memory.moments`): a dialogue turn
        that has a moment by its moments, any other event by its cosine; as a reader at
        `as_of` reads them. Empty when the memory holds no moment."""

    def moment_cosines(
        self, query_vectors: np.ndarray, node_ids: Sequence[str]
    ) -> dict[str, float]:
        """The moment scores of those of `node_ids` that have a moment."""

    def common_terms(self, text: str, share: float) -> list[str]:
        """The distinct tokens of `text` (the lexical index's tokenizer) found in more than
        `share` of the memory's records, in order."""

    def term_rarity(self, text: str) -> dict[str, float]:
        """Each distinct token of `text` (the lexical index's tokenizer) and its idf there."""

    def event_centroid(self) -> np.ndarray | None:
        """The mean vector of the memory's events (None without events)."""

    def events_between(self, start: datetime, end: datetime) -> list[str]:
        """Event ids with start <= timestamp <= end, in time order."""

    def device_events_between(self, device: str, start: datetime, end: datetime) -> list[str]:
        """`events_between` for one device's events only, in time order."""

    def count_events_between(self, start: datetime, end: datetime) -> int:
        """How many events lie in [start, end]."""

    def nth_latest_time(self, end: datetime, n: int) -> datetime | None:
        """The timestamp of the n-th latest event at or before `end` (n >= 1; n = 1 the
        latest); None when fewer than n events lie there."""

    def adjacent_events(
        self, event_id: str, radius: int, by: Literal["device", "person"]
    ) -> list[str]:
        """Up to `radius` events before and after, on the same device (or sharing a person)."""

    # --- what the store knows ---
    def known_people(self) -> set[str]: ...
    def known_devices(self) -> set[str]: ...
    def stats(self) -> StoreStats: ...

    # --- plan log (the fusion commit's write-ahead log) ---
    def log_plan(self, plan_id: str, event_id: str | None, payload: dict[str, Any]) -> bool:
        """Record a plan as `pending` before it is applied; False if plan_id is already logged."""

    def mark_plan(self, plan_id: str, status: PlanStatus, reason: str | None = None) -> None:
        """Set a logged plan's status: `done` or `rejected` (with the reason)."""

    def pending_plans(self) -> list[tuple[str, dict[str, Any]]]:
        """(plan_id, payload) of every plan still pending, in log order (replayed on open)."""

    def plan_attempts(self, event_id: str) -> int:
        """How many plans the log holds for one event (its earlier fusion attempts)."""

    def plan_counts(self) -> dict[str, int]:
        """Plans by status: pending, done, rejected."""
