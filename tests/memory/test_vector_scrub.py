"""VectorIndex.scrub on real embedded Chroma: after it, no file of the Chroma folder holds a
deleted node's id, its text_sha or its vector, and what was kept is all there, bit for bit."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from memory import chroma_clients
from memory.chroma_clients import acquire_chroma_client, release_chroma_client
from memory.models import NodeKind
from memory.vector_index import IndexedVector, VectorIndex, VectorIndexConfig, collection_name
from memory.vector_table import text_fingerprint

T0 = datetime(2024, 3, 1, 8, 0, 0)
DIM = 384  # the bundled MiniLM's dimension
VIA_CHROMA = VectorIndexConfig(
    exact_scan_limit=0, exact_span_limit=0
)  # every search asks Chroma's HNSW


def unit_vectors(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    unit: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


def nodes(prefix: str, vectors: np.ndarray) -> list[IndexedVector]:
    return [
        IndexedVector(
            node_id=f"{prefix}_{i}",
            vector=vector,
            kind=NodeKind.EVENT,
            start=T0 + timedelta(minutes=i),
            end=T0 + timedelta(minutes=i),
            text=f"{prefix} event number {i}",
        )
        for i, vector in enumerate(vectors)
    ]


def traces(folder: Path, forgotten: Sequence[IndexedVector]) -> dict[str, list[str]]:
    """file (relative to `folder`) -> what of the forgotten nodes its bytes still hold."""
    needles = {"id": [b"secret_"]}
    needles["text_sha"] = [text_fingerprint(n.text).encode() for n in forgotten]
    needles["vector"] = [np.asarray(n.vector, dtype=np.float32).tobytes() for n in forgotten]
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        kinds = [kind for kind, values in needles.items() if any(v in data for v in values)]
        if kinds:
            found[str(path.relative_to(folder))] = kinds
    return found


def interleaved(keep: list[IndexedVector], secret: list[IndexedVector]) -> list[IndexedVector]:
    return [node for pair in zip(keep, secret) for node in pair]


def assert_reopens_with_only(
    chroma_dir: Path, keep: Sequence[IndexedVector], secret: Sequence[IndexedVector]
) -> None:
    """Opened again (the client closed with its last user, so the HNSW segment is read from its
    files), the index holds exactly `keep`, bit for bit and found through the HNSW, nothing of
    `secret`, and opening it wrote nothing of them back."""
    reopened = VectorIndex.open("home", "s1", path=chroma_dir, config=VIA_CHROMA)
    try:
        reopened.load()
        assert len(reopened) == len(keep)
        assert all(n.node_id not in reopened for n in secret)
        assert reopened._col.get(ids=[n.node_id for n in secret])["ids"] == []
        for n in keep:
            stored = reopened.get(n.node_id)
            assert stored is not None and np.array_equal(stored, n.vector)  # bit-exact
            assert reopened.search(n.vector, 1)[0][0] == n.node_id  # found through the HNSW
        hits = {i for n in secret for i, _ in reopened.search(n.vector, 5)}
        assert not any(i.startswith("secret_") for i in hits)
    finally:
        reopened.close()
    assert traces(chroma_dir, secret) == {}


def test_scrub_leaves_no_trace_of_deleted_nodes(tmp_path: Path) -> None:
    chroma_dir = tmp_path / "chroma"
    rng = np.random.default_rng(7)
    keep, secret = nodes("keep", unit_vectors(rng, 150)), nodes("secret", unit_vectors(rng, 150))
    index = VectorIndex.open("home", "s1", path=chroma_dir)
    try:
        index.upsert(interleaved(keep, secret))
        index.flush()
        index.delete([n.node_id for n in secret])
        index.flush()
        assert traces(chroma_dir, secret)  # what Chroma leaves behind, so the check can fail
        report = index.scrub()
        assert report["rebuilt"] == 1 and report["vacuumed"] == 1 and report["server"] == 0
        assert report["indexes"] == 1
        assert report["kept"] == len(keep) and report["segment_dirs_removed"] == 1
        assert traces(chroma_dir, secret) == {}
    finally:
        index.close()

    assert_reopens_with_only(chroma_dir, keep, secret)


def test_scrub_writes_no_heap_leftovers_into_the_new_hnsw_files(tmp_path: Path) -> None:
    """hnswlib writes buffers it never initialised (the unused slots of data_level0.bin, all of
    length.bin in inner-product space); without the heap fill these picked up forgotten ids,
    text_shas and vectors in about a third of such runs. Small and mid-sized rebuilds, dim 64."""
    for run, (kept, seed) in enumerate([(10, 0), (10, 1), (10, 2), (1500, 3)]):
        chroma_dir = tmp_path / f"run{run}" / "chroma"
        rng = np.random.default_rng(seed)
        keep = nodes("keep", unit_vectors(rng, kept, 64))
        secret = nodes("secret", unit_vectors(rng, kept, 64))
        index = VectorIndex.open("home", "s1", path=chroma_dir)
        try:
            index.upsert(interleaved(keep, secret))
            index.flush()
            index.delete([n.node_id for n in secret])
            report = index.scrub()
        finally:
            index.close()
        if not report["heap_filled"]:
            pytest.skip("no glibc: the heap cannot be filled, hnswlib may write leftovers")
        assert traces(chroma_dir, secret) == {}, (kept, seed)


def plant(folder: Path, forgotten: Sequence[IndexedVector]) -> None:
    """What an unfilled malloc buffer would carry into the new HNSW files: the forgotten nodes'
    text_shas and vectors over all of each length.bin and the unused tail of data_level0.bin."""
    junk = b"".join(
        text_fingerprint(n.text).encode() + np.asarray(n.vector, dtype=np.float32).tobytes()
        for n in forgotten
    )
    for segment in (p for p in folder.iterdir() if p.is_dir()):
        stored, per_element = chroma_clients._HNSW_HEADER.unpack_from(
            (segment / "header.bin").read_bytes()
        )[3:5]
        for name, start in (("length.bin", 0), ("data_level0.bin", stored * per_element)):
            path = segment / name
            size = path.stat().st_size - start
            with open(path, "r+b") as file:
                file.seek(start)
                file.write((junk * (size // len(junk) + 1))[:size])


def test_scrub_blanks_what_hnswlib_copies_from_unfilled_buffers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The heap fill does not reach a buffer a thread's malloc cache hands out (length.bin's is
    four bytes per element of capacity): such leftovers, planted here into the rebuilt files
    before the scrub's last step, must not survive it, and the index still loads from disk."""
    chroma_dir = tmp_path / "chroma"
    rng = np.random.default_rng(11)
    keep, secret = nodes("keep", unit_vectors(rng, 60)), nodes("secret", unit_vectors(rng, 60))
    remove = chroma_clients._remove_unused_segment_dirs

    def remove_then_plant(folder: Path, used: set[str]) -> int:
        removed = remove(folder, used)
        plant(folder, secret)
        assert traces(folder, secret)  # planted where the check looks, so it can fail
        return removed

    monkeypatch.setattr(chroma_clients, "_remove_unused_segment_dirs", remove_then_plant)
    index = VectorIndex.open("home", "s1", path=chroma_dir, config=VIA_CHROMA)
    try:
        index.upsert(interleaved(keep, secret))
        index.flush()
        index.delete([n.node_id for n in secret])
        report = index.scrub()
        assert report["hnsw_bytes_blanked"] > 0
        assert traces(chroma_dir, secret) == {}
    finally:
        index.close()
    assert_reopens_with_only(chroma_dir, keep, secret)


def test_scrub_keeps_the_lengths_a_cosine_collection_reads(tmp_path: Path) -> None:
    """A collection made in cosine space (before the store chose inner product) keeps its space,
    and there hnswlib multiplies a stored vector by its length.bin entry on the way out: the
    blanking leaves the stored elements' lengths alone."""
    chroma_dir = tmp_path / "chroma"
    rng = np.random.default_rng(12)
    keep = nodes("keep", unit_vectors(rng, 30) * 3.0)
    key, client = acquire_chroma_client(path=chroma_dir)
    try:
        client.get_or_create_collection(
            collection_name("home", "s1"),
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )
        index = VectorIndex.open("home", "s1", path=chroma_dir, config=VIA_CHROMA)
        try:
            index.upsert(keep)
            index.flush()
            index.scrub()
        finally:
            index.close()
    finally:
        release_chroma_client(key)
    reopened = VectorIndex.open("home", "s1", path=chroma_dir, config=VIA_CHROMA)
    try:  # the client closed with its last user: the segment is read back from its files
        rows = reopened._col.get(ids=[n.node_id for n in keep], include=["embeddings"])
    finally:
        reopened.close()
    by_id = dict(zip(rows["ids"], rows["embeddings"]))
    for n in keep:
        assert np.allclose(by_id[n.node_id], n.vector, atol=1e-5)


def test_scrub_of_everything_leaves_an_empty_working_collection(tmp_path: Path) -> None:
    chroma_dir = tmp_path / "chroma"
    rng = np.random.default_rng(8)
    secret = nodes("secret", unit_vectors(rng, 40))
    index = VectorIndex.open("home", "s1", path=chroma_dir, config=VIA_CHROMA)
    try:
        index.upsert(secret)
        index.flush()
        index.delete([n.node_id for n in secret])
        assert index.scrub()["kept"] == 0  # scrub flushes the pending deletes itself
        assert traces(chroma_dir, secret) == {}
        later = nodes("later", unit_vectors(rng, 3))
        index.upsert(later)
        index.flush()
        assert index._col.count() == 3
        assert index.search(later[1].vector, 1)[0][0] == "later_1"
    finally:
        index.close()


def test_scrub_keeps_the_other_users_of_the_client_working(tmp_path: Path) -> None:
    """Every index of the process on the shared client (a reader of the same collection, another
    namespace's) is moved to its rebuilt collection and keeps working. The other namespace's
    collection is rebuilt too: its HNSW files were created while the forgotten vectors were in
    memory, and hnswlib wrote some of them there in its uninitialised slots."""
    chroma_dir = tmp_path / "chroma"
    rng = np.random.default_rng(9)
    keep, secret = nodes("keep", unit_vectors(rng, 60)), nodes("secret", unit_vectors(rng, 60))
    neighbours = nodes("other", unit_vectors(rng, 30))
    writer = VectorIndex.open("home", "s1", path=chroma_dir, config=VIA_CHROMA)
    twin = VectorIndex.open("home", "s1", path=chroma_dir, config=VIA_CHROMA)
    other = VectorIndex.open("home", "s2", path=chroma_dir, config=VIA_CHROMA)
    try:
        writer.upsert(interleaved(keep, secret))
        writer.flush()
        other.upsert(neighbours)
        other.flush()
        twin.load()
        writer.delete([n.node_id for n in secret])
        writer.flush()
        twin.delete([n.node_id for n in secret])  # what the reader's refresh would do

        report = writer.scrub()
        assert report["indexes"] == 3 and report["rebuilt"] == 2
        assert report["kept"] == len(keep) + len(neighbours)
        assert traces(chroma_dir, secret) == {}

        added = nodes("added", unit_vectors(rng, 2))
        twin.upsert(added[:1])
        twin.flush()
        writer.upsert(added[1:])
        writer.flush()
        assert writer._col.count() == twin._col.count() == len(keep) + 2
        assert twin.search(keep[3].vector, 1)[0][0] == "keep_3"
        assert twin.search(added[0].vector, 1)[0][0] == "added_0"
        assert writer.search(added[1].vector, 1)[0][0] == "added_1"
        assert writer._col.get(ids=["added_0"])["ids"] == ["added_0"]
        assert other._col.count() == len(neighbours)
        assert other.search(neighbours[5].vector, 1)[0][0] == "other_5"
    finally:
        for index in (writer, twin, other):
            index.close()


@pytest.mark.server
def test_scrub_against_a_server_only_flushes(chroma_server: tuple[str, int]) -> None:
    rng = np.random.default_rng(10)
    keep, secret = nodes("keep", unit_vectors(rng, 20)), nodes("secret", unit_vectors(rng, 20))
    host, port = chroma_server
    index = VectorIndex.open("home", uuid.uuid4().hex[:8], host=host, port=port)
    try:
        index.upsert(interleaved(keep, secret))
        index.flush()
        index.delete([n.node_id for n in secret])
        report = index.scrub()
        assert report["server"] == 1 and report["rebuilt"] == 0 and report["vacuumed"] == 0
        assert index._col.get(ids=[n.node_id for n in secret])["ids"] == []
        assert index._col.count() == len(keep)
    finally:
        index.close()


@pytest.mark.skipif(
    not os.environ.get("MEMFUSE_SCRUB_10K"),
    reason="a timing run of 20-40 s: set MEMFUSE_SCRUB_10K=1 (and -s to see the time)",
)
def test_scrub_time_at_10k_vectors(tmp_path: Path) -> None:
    """Prints what a scrub of a 10,000-vector collection costs (run with -s to see it)."""
    chroma_dir = tmp_path / "chroma"
    rng = np.random.default_rng(11)
    keep, secret = nodes("keep", unit_vectors(rng, 10_000)), nodes("secret", unit_vectors(rng, 50))
    index = VectorIndex.open("home", "s1", path=chroma_dir)
    try:
        started = time.perf_counter()
        index.upsert(keep + secret)
        index.flush()
        ingest = time.perf_counter() - started
        index.delete([n.node_id for n in secret])
        index.flush()
        report = index.scrub()
        print(
            f"\nscrub of {report['kept']} vectors (dim {DIM}): {report['elapsed_ms']} ms "
            f"(first ingest of them: {ingest * 1000:.0f} ms); {report}"
        )
        assert report["kept"] == len(keep)
        assert traces(chroma_dir, secret) == {}
    finally:
        index.close()
