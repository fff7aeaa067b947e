"""MemFuse as a LangGraph `BaseStore`: an agent's put/get/search/delete become memory events.

An item is one event (device `langgraph_store`, modality dialogue) whose metadata keeps the
item's namespace, key, value and creation time; its text is the value's `text`, `content`,
`memory` or `data` field (else the value as JSON), so `search` with a query runs MemFuse
retrieval over it beside everything else the household's devices recorded. The event id is
derived from (namespace, key), so a key names one event; a put with a new value forgets the
old event (with every trace, audited) and stores the new one — events stay immutable.

Namespaces map to people: the label at `owner_at` (MEMFUSE_STORE_OWNERS: the last, when the
namespace has two labels or more, as in `("memories", "Anna")`; or the first, as in
`("Anna", "memories")`) owns the items written there, so they are private to that person by
the household's policy; a namespace that names nobody (`("recipes",)` when owners are last)
holds household items. Who reads: the store's `user` when given (an agent acting for one
person sees what that person may see, and may not write into another person's namespace), else
the person the namespace names — LangGraph's own model, where the server's auth handlers tie
namespaces to the authenticated user. `admin=True` reads everything, each read audited.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memory.errors import InvalidQueryError, PermissionDeniedError
from memory.models import Event, Modality, SourceKind, utc_now
from memory.selection import EventFilter

if TYPE_CHECKING:
    from memfuse.api import MemFuse

ITEM_DEVICE = "langgraph_store"
ITEM_PREFIX = "item_"
ITEM_KEY = "store_item"  # the event metadata field holding namespace, key, value, created_at
TEXT_FIELDS = ("text", "content", "memory", "data")
OWNER_LABELS: dict[str, int | None] = {"last": -1, "first": 0, "none": None}
SEARCH_DEPTH = 20  # retrieval depth of a query search, at least


def item_id(namespace: tuple[str, ...], key: str) -> str:
    """One event id per (namespace, key): a put to the same key replaces that event."""
    digest = hashlib.sha256(json.dumps([list(namespace), key]).encode("utf-8")).hexdigest()
    return ITEM_PREFIX + digest[:24]


def item_text(value: Mapping[str, Any]) -> str:
    """What retrieval reads of a value: its text field, else the value as JSON."""
    for name in TEXT_FIELDS:
        text = value.get(name)
        if isinstance(text, str) and text.strip():
            return text
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def matches_filter(value: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics: equality, nested objects, and $eq/$ne/$gt/$gte/$lt/$lte."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_compare(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, dict) and all(
            matches_filter(value.get(k), v) for k, v in wanted.items()
        )
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(matches_filter(v, w) for v, w in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


def _compare(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    if value is None:
        return False
    comparisons = {
        "$gt": lambda a, b: a > b,
        "$gte": lambda a, b: a >= b,
        "$lt": lambda a, b: a < b,
        "$lte": lambda a, b: a <= b,
    }
    if op not in comparisons:
        raise InvalidQueryError(f"unsupported filter operator {op!r}")
    return bool(comparisons[op](float(value), float(operand)))


def namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """A prefix or suffix condition, `*` matching any one label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise InvalidQueryError(f"unsupported namespace match type {condition.match_type!r}")
    return all(want == "*" or have == want for have, want in pairs)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class MemFuseStore(BaseStore):
    """A LangGraph store over one MemFuse memory (see the module docstring)."""

    __slots__ = ("_serial", "admin", "memory", "owner_at", "system", "user")

    def __init__(
        self,
        memory: MemFuse,
        *,
        owner_at: int | None | Literal["settings"] = "settings",
        user: str | None = None,
        admin: bool = False,
        system: str = "memfuse",
    ) -> None:
        """`owner_at`: which namespace label names the owner (None: items are the household's;
        default: the settings' `store_owners`);
        `user`: who every read and write is (default MEMFUSE_USER; None: the namespace's
        owner);
        `system`: the retrieval behind query searches (`memfuse`, or a baseline)."""
        self.memory = memory
        self.owner_at = (
            OWNER_LABELS[memory.settings.store_owners] if owner_at == "settings" else owner_at
        )
        self.user = user or memory.settings.user
        self.admin = admin
        self.system = system
        self._serial = threading.Lock()  # one operation at a time: abatch runs on threads

    # --- who ----------------------------------------------------------------------------

    def owner_of(self, namespace: tuple[str, ...]) -> str | None:
        """The person a namespace (or a prefix of one) names, if any. Counted from the front,
        the label is there once the namespace is long enough; counted from the back, only a
        namespace of two labels or more names one (`("recipes",)` is the household's), and a
        prefix cannot tell whose its namespaces are."""
        at = self.owner_at
        if at is None:
            return None
        if at >= 0:
            return namespace[at] if len(namespace) > at else None
        return namespace[at] if len(namespace) >= max(2, -at) else None

    def _who(self, namespace: tuple[str, ...]) -> str | None:
        """Who reads and writes under a namespace: the store's user, else its owner."""
        return self.user or self.owner_of(namespace)

    # --- the operations -------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        with self._serial:
            self.memory.store.refresh()  # another process may have written since
            return [self._run(op) for op in ops]

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            with self.memory.holding_writer():
                self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise InvalidQueryError(f"unknown store operation {type(op).__name__}")

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """The same operations off the event loop: store calls are blocking I/O."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _get(self, op: GetOp) -> Item | None:
        record = self.memory.get(
            item_id(op.namespace, op.key), user=self._who(op.namespace), admin=self.admin
        )
        return _item(record.event) if record is not None else None

    def _put(self, op: PutOp) -> None:
        """Store, replace or (value None) delete one item. Replacing forgets the old event
        first, so two values never coexist under one key."""
        node_id = item_id(op.namespace, op.key)
        who = self._who(op.namespace)
        owner = self.owner_of(op.namespace)
        if self.user and owner and owner != self.user and not self.admin:
            raise PermissionDeniedError(
                f"{self.user} may not write into {owner}'s namespace {'/'.join(op.namespace)}"
            )
        old = self.memory.get(node_id, user=who, admin=self.admin)
        if op.value is None:
            if old is not None:
                self.memory.delete(node_id, user=who, admin=self.admin)
            return
        value = json.loads(json.dumps(dict(op.value), default=str))
        if old is not None:
            if old.event.metadata[ITEM_KEY]["value"] == value:
                return  # the same value again: nothing changes
            created = old.event.metadata[ITEM_KEY]["created_at"]
            self.memory.delete(node_id, user=who, admin=self.admin)
        else:
            created = None
        self.memory.ingest([self._event(op.namespace, op.key, value, created)], user=who)

    def _event(
        self, namespace: tuple[str, ...], key: str, value: dict[str, Any], created: str | None
    ) -> Event:
        now = utc_now()
        owner = self.owner_of(namespace)
        item = {
            "namespace": list(namespace),
            "key": key,
            "value": value,
            "created_at": created or now.isoformat(),
        }
        return Event(
            event_id=item_id(namespace, key),
            timestamp=now,
            device=ITEM_DEVICE,
            modality=Modality.DIALOGUE,
            description=item_text(value),
            characters=(owner,) if owner else (),
            source=SourceKind.USER,
            owner=owner,
            metadata={ITEM_KEY: item},
        )

    def _items(self, prefix: tuple[str, ...]) -> list[Event]:
        """The item events under a namespace prefix that the reader may see, oldest first."""
        records = self.memory.events(
            EventFilter(device=ITEM_DEVICE), user=self._who(prefix), admin=self.admin
        )
        return [
            r.event
            for r in records
            if tuple(r.event.metadata[ITEM_KEY]["namespace"][: len(prefix)]) == prefix
        ]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        """Filtered items; with a query, MemFuse retrieval ranks them (best first) and the
        items it did not reach follow unscored, as LangGraph's own store does."""
        items = [
            e
            for e in self._items(op.namespace_prefix)
            if not op.filter or matches_filter(e.metadata[ITEM_KEY]["value"], op.filter)
        ]
        scores: dict[str, float] = {}
        if op.query and items:
            found = self.memory.search(
                op.query,
                user=self._who(op.namespace_prefix),
                admin=self.admin,
                system=self.system,
                k=max(SEARCH_DEPTH, op.offset + op.limit),
            )
            wanted = {e.event_id for e in items}
            for entry in found.context:
                if entry.node_id in wanted and entry.node_id not in scores:
                    scores[entry.node_id] = entry.score
        else:
            items.sort(key=lambda e: (e.timestamp, e.event_id), reverse=True)
        # best score first, the unscored after them; the sort is stable, so ties keep order
        ranked = sorted(items, key=lambda e: -scores.get(e.event_id, float("-inf")))
        window = ranked[op.offset : op.offset + op.limit]
        return [SearchItem(**_item_fields(e), score=scores.get(e.event_id)) for e in window]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        """Namespaces of the items the reader may see: the store's user, else the person the
        prefix condition names (up to its first wildcard)."""
        prefix: tuple[str, ...] = ()
        for condition in op.match_conditions or ():
            if condition.match_type == "prefix":
                labels = list(condition.path)
                prefix = tuple(labels[: labels.index("*")] if "*" in labels else labels)
                break
        found = {tuple(e.metadata[ITEM_KEY]["namespace"]) for e in self._items(prefix)}
        if op.match_conditions:
            conditions = op.match_conditions
            found = {ns for ns in found if all(namespace_matches(c, ns) for c in conditions)}
        if op.max_depth is not None:
            found = {ns[: op.max_depth] for ns in found}
        return sorted(found)[op.offset : op.offset + op.limit]


def _item_fields(event: Event) -> dict[str, Any]:
    stored = event.metadata[ITEM_KEY]
    return {
        "namespace": tuple(stored["namespace"]),
        "key": stored["key"],
        "value": stored["value"],
        "created_at": _utc(datetime.fromisoformat(stored["created_at"])),
        "updated_at": _utc(event.timestamp),
    }


def _item(event: Event) -> Item:
    return Item(**_item_fields(event))


_SERVED: list[MemFuseStore] = []
_SERVED_LOCK = threading.Lock()


def generate_store() -> MemFuseStore:
    """The store `langgraph dev` serves (langgraph.json `store.path`): the settings' memory
    (MEMFUSE_DATA_DIR, MEMFUSE_NAMESPACE, MEMFUSE_USER, MEMFUSE_STORE_OWNERS). One per
    process: the server asks once per worker thread, and one memory holds one writer lock."""
    from memfuse.api import MemFuse

    with _SERVED_LOCK:
        if not _SERVED:
            _SERVED.append(MemFuseStore(MemFuse()))
        return _SERVED[0]
