"""The store against a real Chroma server: every test of test_store.py, collected again here
with `chroma_endpoint` pointing at a `chroma run` subprocess (one per session)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memory.errors import ConfigurationError
from memory.models import Event
from memory.store import MemoryStore
from tests.memory.test_store import *  # the same test functions, re-collected for the server

pytestmark = pytest.mark.server

_CHROMA = Path(sys.executable).with_name("chroma")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_heartbeat(url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chroma server exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"no heartbeat from {url} within {timeout:.0f}s")


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A `chroma run` server on 127.0.0.1 at a free port, stopped at the end of the session."""
    if not _CHROMA.exists():
        pytest.skip(f"no chroma console script at {_CHROMA}")
    port = _free_port()
    log = tmp_path_factory.mktemp("chroma-server") / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(_CHROMA), "run", "--path", str(log.parent / "data"), "--port", str(port),
             "--host", "127.0.0.1"],
            stdout=sink, stderr=subprocess.STDOUT,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
    try:
        _wait_for_heartbeat(f"http://127.0.0.1:{port}/api/v2/heartbeat", process, timeout=60)
        yield "127.0.0.1", port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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
    client = chromadb.HttpClient(host=chroma_server[0], port=chroma_server[1],
                                 settings=Settings(anonymized_telemetry=False))
    collection = client.get_collection(store.collection_name)
    assert store.collection_name.startswith(f"memfuse-{store.namespace}-")
    assert collection.count() == len(household)
    assert not (store.data_dir / "chroma").exists()


def test_two_data_dirs_with_one_namespace_share_a_server_safely(
    tmp_path: Path, household: list[Event], chroma_server: tuple[str, int]
) -> None:
    """Opening data dir B (same namespace, same server) never touches A's vectors, and
    reopening A never touches B's: each store owns its own collection."""
    from tests.embedders import tiny_embedder

    host, port = chroma_server
    half = len(household) // 2

    def opened(name: str) -> MemoryStore:
        return MemoryStore.open(tmp_path / name, embedder=tiny_embedder(), chroma_host=host,
                                chroma_port=port)

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
    port = _free_port()  # nothing listens there
    with pytest.raises(ConfigurationError, match=f"127.0.0.1:{port}"):
        MemoryStore.open(tmp_path / "s", embedder=_Unused(), chroma_host="127.0.0.1",
                         chroma_port=port)
    assert (tmp_path / "s" / "default.sqlite").exists(), "created, then closed cleanly"


class _Unused:
    model_id = "test:unused"
    dim = 4

    def embed(self, texts: object) -> object:
        raise AssertionError("nothing should be embedded")
