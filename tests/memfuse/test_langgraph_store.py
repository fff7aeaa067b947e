"""MemFuseStore behaves as a LangGraph store: one behaviour suite, run against LangGraph's own
`InMemoryStore` (which shows the suite states LangGraph's semantics), against MemFuse in this
process, and against MemFuse served by `langgraph dev` (its store API, over HTTP).

Then what only MemFuse does: items are memory events (searchable beside every device's
events, audited, visible by the household's policy), and namespaces map to people.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from memfuse.api import MemFuse
from memfuse.langgraph_store import ITEM_DEVICE, MemFuseStore, item_id
from memfuse.settings import load_settings
from memory.errors import InvalidQueryError, PermissionDeniedError
from tests.support.http_store import HttpStore


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemFuse]:
    data_dir = tmp_path_factory.mktemp("store")
    with MemFuse.open(data_dir, settings=load_settings(data_dir=data_dir, user=None)) as opened:
        yield opened


@pytest.fixture(params=["langgraph", "memfuse", "served"])
def store(request: pytest.FixtureRequest, memory: MemFuse) -> Iterator[BaseStore]:
    """LangGraph's reference store; MemFuse's in this process (household items read as Anna);
    or MemFuse's served by a real `langgraph dev`, called over HTTP (namespaces owned by their
    first label, the test's own root: one person per test). Each test writes under a
    namespace root of its own, so tests do not see each other's items."""
    if request.param == "langgraph":
        yield InMemoryStore()
    elif request.param == "memfuse":
        yield MemFuseStore(memory, owner_at=None, user="Anna")
    else:
        server, _ = request.getfixturevalue("served_memory")
        yield HttpStore(server.client())


def _root(request: pytest.FixtureRequest) -> str:
    return "t" + str(abs(hash(request.node.nodeid)) % 10**9)


# --- the behaviour suite ---------------------------------------------------------------


def test_put_then_get_returns_the_item(store: BaseStore, request: pytest.FixtureRequest) -> None:
    ns = (_root(request), "docs")
    store.put(ns, "a", {"text": "the boiler was serviced", "n": 1})
    item = store.get(ns, "a")
    assert item is not None
    assert (tuple(item.namespace), item.key) == (ns, "a")
    assert item.value == {"text": "the boiler was serviced", "n": 1}
    assert item.created_at.tzinfo is not None and item.created_at <= item.updated_at


def test_get_of_a_missing_key_is_none(store: BaseStore, request: pytest.FixtureRequest) -> None:
    assert store.get((_root(request), "docs"), "nothing here") is None


def test_a_second_put_replaces_the_value(store: BaseStore, request: pytest.FixtureRequest) -> None:
    ns = (_root(request), "docs")
    store.put(ns, "a", {"text": "first"})
    first = store.get(ns, "a")
    store.put(ns, "a", {"text": "second"})
    second = store.get(ns, "a")
    assert first is not None and second is not None
    assert second.value == {"text": "second"}
    assert second.updated_at >= first.updated_at  # created_at: kept (Postgres) or not (memory)
    assert [i.value for i in store.search(ns)] == [{"text": "second"}]


def test_delete_removes_and_deleting_twice_is_harmless(
    store: BaseStore, request: pytest.FixtureRequest
) -> None:
    ns = (_root(request), "docs")
    store.put(ns, "a", {"text": "to go"})
    store.delete(ns, "a")
    assert store.get(ns, "a") is None
    store.delete(ns, "a")
    store.put(ns, "b", {"text": "gone by a None value"})
    store.put(ns, "b", None)  # type: ignore[arg-type]
    assert store.search(ns) == []


def test_search_stays_inside_the_namespace_prefix(
    store: BaseStore, request: pytest.FixtureRequest
) -> None:
    root = _root(request)
    store.put((root, "docs", "x"), "1", {"text": "one"})
    store.put((root, "docs", "y"), "2", {"text": "two"})
    store.put((root, "other"), "3", {"text": "three"})
    assert {i.key for i in store.search((root, "docs"))} == {"1", "2"}
    assert {i.key for i in store.search((root,))} == {"1", "2", "3"}
    assert {i.key for i in store.search((root, "docs", "y"))} == {"2"}


@pytest.mark.parametrize(
    ("wanted", "keys"),
    [
        ({"kind": "report"}, {"r1", "r2"}),
        ({"kind": "report", "n": 2}, {"r2"}),
        ({"n": {"$gt": 1}}, {"r2", "m3"}),
        ({"n": {"$lte": 1}}, {"r1"}),
        ({"kind": {"$ne": "report"}}, {"m3"}),
        ({"meta": {"lang": "de"}}, {"m3"}),
    ],
)
def test_filters_follow_langgraph_semantics(
    store: BaseStore, request: pytest.FixtureRequest, wanted: dict[str, Any], keys: set[str]
) -> None:
    ns = (_root(request), "f")
    store.put(ns, "r1", {"text": "report one", "kind": "report", "n": 1})
    store.put(ns, "r2", {"text": "report two", "kind": "report", "n": 2})
    store.put(ns, "m3", {"text": "memo", "kind": "memo", "n": 3, "meta": {"lang": "de"}})
    assert {i.key for i in store.search(ns, filter=wanted)} == keys


def test_limit_and_offset_page_through_every_item_once(
    store: BaseStore, request: pytest.FixtureRequest
) -> None:
    ns = (_root(request), "pages")
    for n in range(5):
        store.put(ns, f"k{n}", {"text": f"page item {n}"})
    pages = [store.search(ns, limit=2, offset=offset) for offset in (0, 2, 4)]
    assert [len(p) for p in pages] == [2, 2, 1]
    assert sorted(i.key for p in pages for i in p) == [f"k{n}" for n in range(5)]


def test_list_namespaces_matches_prefix_suffix_and_depth(
    store: BaseStore, request: pytest.FixtureRequest
) -> None:
    root = _root(request)
    for ns in [(root, "a", "v1"), (root, "a", "v2"), (root, "b", "v1"), (root, "c")]:
        store.put(ns, "k", {"text": "x"})
    assert store.list_namespaces(prefix=(root,)) == [
        (root, "a", "v1"),
        (root, "a", "v2"),
        (root, "b", "v1"),
        (root, "c"),
    ]
    assert store.list_namespaces(prefix=(root,), suffix=("v1",)) == [
        (root, "a", "v1"),
        (root, "b", "v1"),
    ]
    assert store.list_namespaces(prefix=(root, "*", "v2")) == [(root, "a", "v2")]
    assert store.list_namespaces(prefix=(root,), max_depth=2) == [
        (root, "a"),
        (root, "b"),
        (root, "c"),
    ]
    assert store.list_namespaces(prefix=(root,), limit=2, offset=1) == [
        (root, "a", "v2"),
        (root, "b", "v1"),
    ]


def test_the_async_methods_do_the_same(store: BaseStore, request: pytest.FixtureRequest) -> None:
    ns = (_root(request), "async")

    async def scenario() -> tuple[Any, Any, Any]:
        await store.aput(ns, "a", {"text": "asynchronously stored"})
        got = await store.aget(ns, "a")
        found = await store.asearch(ns)
        await store.adelete(ns, "a")
        return got, found, await store.aget(ns, "a")

    got, found, after = asyncio.run(scenario())
    assert got is not None and got.value == {"text": "asynchronously stored"}
    assert [i.key for i in found] == ["a"] and after is None


# --- what only MemFuse does --------------------------------------------------------------


def test_a_query_ranks_the_item_that_answers_it_first(memory: MemFuse) -> None:
    store = MemFuseStore(memory, owner_at=None, user="Anna")
    ns = ("rank", "prefs")
    store.put(ns, "coffee", {"text": "Anna takes her coffee with oat milk"})
    store.put(ns, "car", {"text": "the car is due for its inspection in March"})
    store.put(ns, "plants", {"text": "water the fern on the balcony every Sunday"})
    found = store.search(ns, query="when does the car need inspecting")
    assert found[0].key == "car" and found[0].score is not None
    assert {i.key for i in found} == {"coffee", "car", "plants"}  # the rest follow


def test_items_are_memory_events_with_an_audit_trail(memory: MemFuse) -> None:
    store = MemFuseStore(memory, owner_at=None, user="Anna")
    ns = ("events", "notes")
    store.put(ns, "k", {"text": "the spare key is under the blue pot"})
    record = memory.get(item_id(ns, "k"), user="Anna")
    assert record is not None and record.event.device == ITEM_DEVICE
    assert record.event.description == "the spare key is under the blue pot"
    ops = [e.op for e in memory.history(item_id(ns, "k"), user="Anna")]
    assert ops[0] == "ingest"


def test_a_namespace_names_its_owner_and_others_cannot_read_it(memory: MemFuse) -> None:
    anna_ns = ("memories", "Anna")
    by_namespace = MemFuseStore(memory)  # reads as the person the namespace names
    by_namespace.put(anna_ns, "diary", {"text": "Anna feels anxious about the exam"})
    assert by_namespace.get(anna_ns, "diary") is not None
    assert memory.get(item_id(anna_ns, "diary"), user="Anna") is not None
    assert memory.get(item_id(anna_ns, "diary"), user="Tom") is None
    as_tom = MemFuseStore(memory, user="Tom")
    assert as_tom.get(anna_ns, "diary") is None
    assert as_tom.search(("memories",), query="exam") == []
    assert ("memories", "Anna") not in as_tom.list_namespaces(prefix=("memories",))
    with pytest.raises(PermissionDeniedError, match="Tom may not write into Anna's"):
        as_tom.put(anna_ns, "diary", {"text": "overwritten"})
    assert by_namespace.get(anna_ns, "diary").value["text"].startswith("Anna feels")  # type: ignore[union-attr]


def test_a_read_that_names_nobody_is_refused(memory: MemFuse) -> None:
    with pytest.raises(InvalidQueryError, match="say who asks"):
        MemFuseStore(memory).search(("recipes",))


def test_admin_reads_are_audited(memory: MemFuse) -> None:
    before = len(memory.audit.entries())
    MemFuseStore(memory, admin=True).search(("memories",))
    after = memory.audit.entries()
    assert len(after) == before + 1 and after[-1].op == "admin_read"
