"""What only a real Chroma server shows: where the vectors live, two data dirs sharing one
server, an unreachable server. (Every test of test_store.py also runs against the server: its
`chroma_endpoint` fixture is parametrized over both backends.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memory.errors import ConfigurationError
from memory.models import Event
from memory.store import MemoryStore
from tests.support.chroma_server import free_port

pytestmark = pytest.mark.server


@pytest.fixture
def chroma_endpoint(chroma_server: tuple[str, int]) -> tuple[str, int]:
    return chroma_server


def test_vectors_really_live_in_the_server(
    open_store: Callable[..., MemoryStore], household: list[Event], chroma_server: tuple[str, int]
) -> None:
    """Not just the same tests: the server holds the collection, the data dir has no Chroma."""
    import chromadb
    from chromadb.config import Settings

    store = open_store()
    store.add_events(household)
    store.flush()
    client = chromadb.HttpClient(
        host=chroma_server[0], port=chroma_server[1], settings=Settings(anonymized_telemetry=False)
    )
    collection = client.get_collection(store.collection_name)
    assert store.collection_name.startswith(f"memfuse-{store.namespace}-")
    assert collection.count() == len(household)
    assert not (store.data_dir / "chroma").exists()


def test_two_data_dirs_with_one_namespace_share_a_server_safely(
    tmp_path: Path, household: list[Event], chroma_server: tuple[str, int]
) -> None:
    """Opening data dir B (same namespace, same server) never touches A's vectors, and
    reopening A never touches B's: each store owns its own collection."""
    from tests.support.embedders import tiny_embedder

    host, port = chroma_server
    half = len(household) // 2

    def opened(name: str) -> MemoryStore:
        return MemoryStore.open(
            tmp_path / name, embedder=tiny_embedder(), chroma_host=host, chroma_port=port
        )

    a = opened("a")
    a.add_events(household[:half])
    a.close()
    b = opened("b")
    b.add_events(household[half:])
    assert b.open_repairs.get("deleted", 0) == 0
    b.close()
    a = opened("a")
    assert a.open_repairs.get("deleted", 0) == 0 and a.open_repairs.get("embedded", 0) == 0
    assert a.stats().events == half
    query = a.embed_query(household[0].description)
    assert {i for i, _ in a.dense_search(query, 50)} == {e.event_id for e in household[:half]}
    b = opened("b")
    assert b.open_repairs.get("deleted", 0) == 0 and b.open_repairs.get("embedded", 0) == 0
    assert a.collection_name != b.collection_name
    a.close()
    b.close()


def test_an_unreachable_server_is_a_configuration_error(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    with pytest.raises(ConfigurationError, match=f"127.0.0.1:{port}"):
        MemoryStore.open(
            tmp_path / "s", embedder=_Unused(), chroma_host="127.0.0.1", chroma_port=port
        )
    assert (tmp_path / "s" / "default.sqlite").exists(), "created, then closed cleanly"


class _Unused:
    model_id = "test:unused"
    dim = 4

    def embed(self, texts: object) -> object:
        raise AssertionError("nothing should be embedded")
