"""MemoryStore: the persistent dual-layer memory (events, fused nodes, typed edges, indexes).

Layout of a data directory:

    <data_dir>/<namespace>.sqlite   events, fused nodes, edges, plan log (the source of truth)
    <data_dir>/chroma/              embedded Chroma (absent when a Chroma server is used)
    <data_dir>/embeddings.sqlite    embedding cache (default embedder)

With a database URL (MEMFUSE_DATABASE_URL) the first line is the namespace's schema on a
PostgreSQL server instead (`memory.backends`); everything below says SQLite for either backend.

SQLite is authoritative; everything else is derived from it on open: BM25L and the
temporal index are rebuilt, and the dense index is reconciled with Chroma (missing or
stale vectors are re-embedded through the cache, orphans dropped). So a crash between
the SQLite commit and a Chroma write loses nothing.

Every write validates first and writes second, inside one `Database` transaction whose
undo log also restores the in-memory indexes: a failure leaves nothing half-written.

The store is one class composed of one part per job, each a module of this package:
`core` (the in-memory state, refreshing it, closing), `opening` (`MemoryStore.open`),
`events`, `visibility`, `queue` (the fusion queue), `packs` (fused nodes and edges),
`plans` (the plan log), `audit` (the audit outbox), `forget` (forgetting and scrubbing)
and `search` (what the search engine reads). Each part is a mixin over `StoreCore`
that inherits the parts it calls; none imports this module.
"""

from __future__ import annotations

from memory.store.audit import AuditOutbox
from memory.store.core import StoreCore
from memory.store.events import EventLog
from memory.store.forget import Forgetting
from memory.store.opening import StoreOpening, prepare_data_dir
from memory.store.packs import FusedPacks
from memory.store.plans import PlanLog
from memory.store.queue import FusionQueue
from memory.store.search import SearchIndexes
from memory.store.visibility import EventVisibility

__all__ = ["MemoryStore", "prepare_data_dir"]


class MemoryStore(
    StoreOpening,
    Forgetting,
    SearchIndexes,
    EventLog,
    EventVisibility,
    FusionQueue,
    FusedPacks,
    PlanLog,
    AuditOutbox,
    StoreCore,
):
    """The MemoryStoreAPI implementation. Open with `MemoryStore.open(...)`; close when done."""
