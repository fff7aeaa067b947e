"""The MemFuse export format: a store written out, read back and imported into another store is
the same store (events, visibility, packs, edges), and a bad or interrupted file changes nothing.

Real stores in tmp dirs with the hash embedder; nothing of the store is mocked.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.errors import (
    EventConflictError,
    InputFormatError,
    InvalidEdgeError,
    MemFuseError,
    NodeNotFoundError,
)
from memory.formats import export
from memory.formats.export import (
    EXPORT_FORMAT,
    ExportBundle,
    import_bundle,
    is_export,
    read_export,
    write_export,
)
from memory.models import Edge, EdgeType, Event, FusedNode, parse_event
from memory.store import MemoryStore
from tests.support.embedders import HashEmbedder

T0 = datetime(2024, 3, 1, 8, 0, 0)
DEVICES = {"watch_david": "David", "phone_maya": "Maya", "cam_hall": None}
MODALITIES = {"watch_david": "health", "phone_maya": "app_usage", "cam_hall": "vision"}

OpenStore = Callable[[str], MemoryStore]


@pytest.fixture
def open_store(tmp_path: Path) -> Iterator[OpenStore]:
    """open_store(name): a real store in <tmp>/<name>, closed after the test."""
    opened: list[MemoryStore] = []

    def _open(name: str) -> MemoryStore:
        store = MemoryStore.open(tmp_path / name, embedder=HashEmbedder())
        opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()


def household_events() -> list[Event]:
    """30 events, 10 per device; the watch and phone have owners, the camera is shared, and
    one camera event carries its own `visibility` field (it rides in metadata)."""
    events = []
    for i in range(30):
        device = list(DEVICES)[i % 3]
        record: dict[str, Any] = {
            "event_id": f"{device.split('_')[0]}{i // 3:02d}",
            "timestamp": (T0 + timedelta(minutes=7 * i)).isoformat(),
            "device": device,
            "modality": MODALITIES[device],
            "location": "kitchen" if i % 2 else "hallway",
            "description": f"observation {i} by {device}: café ☕ at step {i * 13}",
            "characters": [DEVICES[device] or "Tom"],
            "owner": DEVICES[device] or "shared",
        }
        if i == 5:
            record["visibility"] = "people:Tom,Maya"
            record["mood"] = "calm"
        events.append(parse_event(record))
    return events


def populate(store: MemoryStore) -> None:
    events = household_events()
    store.add_events(events)
    by_id = {e.event_id: e for e in events}
    packs = {
        "fused_watch_morning": ["watch00", "watch01", "watch02", "watch03"],
        "fused_phone_apps": ["phone00", "phone01", "phone02"],
        "fused_hall_jog": ["watch05", "cam01", "cam02"],  # across devices
    }
    for node_id, members in packs.items():
        summary = f"pack {node_id}: " + ", ".join(members)
        store.put_fused(FusedNode.from_members(node_id, summary, [by_id[m] for m in members]))
    # Decisions made after ingest, which no derivation from the events would give back:
    store.set_visibility({"watch03": "household", "cam04": "people:David,Maya"})
    for src, dst in [("watch00", "cam00"), ("watch01", "watch02"), ("phone03", "phone04")]:
        store.add_edge(Edge(src=src, dst=dst, type=EdgeType.CAUSAL))
    for src, dst, weight in [
        ("watch00", "phone00", 0.8731),
        ("fused_phone_apps", "fused_watch_morning", 0.5),
        ("cam03", "fused_hall_jog", 0.61),
        ("watch05", "watch04", 0.1 + 0.2),  # not a short decimal: must survive exactly
    ]:
        store.add_edge(Edge(src=src, dst=dst, type=EdgeType.SEMANTIC, weight=weight))


def lines(path: Path) -> list[dict[str, Any]]:
    """The parsed lines, the header's export time dropped (the one field that may differ)."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    records[0].pop("exported_at")
    return records


def edges_of(store: MemoryStore) -> dict[tuple[str, str, str], float]:
    nodes = [e.event_id for e in store.all_events()] + [n.node_id for n in store.all_fused()]
    return {
        edge.key(): edge.weight
        for node in nodes
        for edge in store.neighbors(node)
        if edge.type != EdgeType.BELONG
    }


def snapshot(store: MemoryStore) -> tuple[Any, ...]:
    return (
        store.stats().model_dump(),
        store.all_events(),
        store.visibilities(),
        store.all_fused(),
        edges_of(store),
        {e.event_id: store.fused_of(e.event_id) for e in store.all_events()},
    )


@pytest.fixture
def source(open_store: OpenStore) -> MemoryStore:
    store = open_store("source")
    populate(store)
    return store


@pytest.fixture
def exported(source: MemoryStore, tmp_path: Path) -> Path:
    path = tmp_path / "backup.jsonl"
    write_export(source, path)
    return path


# --- round trip -------------------------------------------------------------------------------


def test_export_import_export_is_identical(
    source: MemoryStore, open_store: OpenStore, tmp_path: Path
) -> None:
    first = tmp_path / "first.jsonl"
    counts = write_export(source, first)
    assert counts == {"events": 30, "fused": 3, "edges": 7}

    target = open_store("target")
    report = import_bundle(target, read_export(first))
    assert report == {"events_added": 30, "events_unchanged": 0, "fused": 3, "edges_added": 7}

    second = tmp_path / "second.jsonl"
    write_export(target, second)
    assert lines(first) == lines(second)
    assert snapshot(target) == snapshot(source)
    assert target.visibility_of("cam01") == "people:Maya,Tom"  # from the record's own field
    assert target.visibility_of("watch01") == "private:David"
    assert target.visibility_of("cam00") == "household"
    assert target.visibility_of("watch03") == "household"  # set by hand, kept
    assert target.visibility_of("cam04") == "people:David,Maya"
    assert target.pending_fusion() == []  # packs came with the file: nothing to re-fuse


def test_layout_header_then_sorted_events_packs_edges(exported: Path) -> None:
    records = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    header, body = records[0], records[1:]
    assert header["format"] == EXPORT_FORMAT
    assert header["namespace"] == "default"
    assert header["embedding_model"] == "test:hash-256"
    assert header["counts"] == {"events": 30, "fused": 3, "edges": 7}
    datetime.fromisoformat(header["exported_at"])
    assert [r["kind"] for r in body] == ["event"] * 30 + ["fused"] * 3 + ["edge"] * 7
    events = [r["event"] for r in body[:30]]
    assert events == sorted(events, key=lambda e: (e["timestamp"], e["event_id"]))
    assert [r["node"]["node_id"] for r in body[30:33]] == sorted(
        ["fused_watch_morning", "fused_phone_apps", "fused_hall_jog"]
    )
    edges = [r["edge"] for r in body[33:]]
    assert edges == sorted(edges, key=lambda e: (e["type"], e["src"], e["dst"]))
    assert {e["type"] for e in edges} == {"causal", "semantic"}  # belong edges are implied
    assert len({Edge.model_validate(e).key() for e in edges}) == 7  # each edge once
    assert "café ☕" in exported.read_text(encoding="utf-8")  # UTF-8, not \u escapes


def test_write_to_a_stream_matches_the_file(source: MemoryStore, exported: Path) -> None:
    stream = StringIO()
    assert write_export(source, stream) == {"events": 30, "fused": 3, "edges": 7}
    streamed = [json.loads(line) for line in stream.getvalue().splitlines()]
    streamed[0].pop("exported_at")
    assert streamed == lines(exported)


def test_subset_keeps_only_whole_packs_and_inner_edges(
    source: MemoryStore, open_store: OpenStore, tmp_path: Path
) -> None:
    watch = [e.event_id for e in source.all_events() if e.device == "watch_david"]
    path = tmp_path / "david.jsonl"
    assert write_export(source, path, event_ids=watch) == {"events": 10, "fused": 1, "edges": 2}
    bundle = read_export(path)
    assert {e.event_id for e in bundle.events} == set(watch)
    assert [n.node_id for n in bundle.fused] == ["fused_watch_morning"]  # not the mixed pack
    assert {e.key() for e in bundle.edges} == {
        ("watch01", "watch02", "causal"),
        ("watch04", "watch05", "semantic"),
    }
    target = open_store("david")
    import_bundle(target, bundle)
    assert edges_of(target) == {
        ("watch01", "watch02", "causal"): 1.0,
        ("watch04", "watch05", "semantic"): 0.1 + 0.2,
    }
    assert target.visibilities() == {i: source.visibility_of(i) for i in watch}


def test_subset_with_an_unknown_id_is_refused(source: MemoryStore, tmp_path: Path) -> None:
    with pytest.raises(NodeNotFoundError, match="nope"):
        write_export(source, tmp_path / "x.jsonl", event_ids=["watch00", "nope"])
    assert not (tmp_path / "x.jsonl").exists()


def test_empty_store_round_trips(open_store: OpenStore, tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    assert write_export(open_store("empty"), path) == {"events": 0, "fused": 0, "edges": 0}
    assert is_export(path)
    bundle = read_export(path)
    assert bundle.counts() == {"events": 0, "fused": 0, "edges": 0}
    assert import_bundle(open_store("target"), bundle)["events_added"] == 0


# --- importing twice, conflicts, atomicity ----------------------------------------------------


def test_reimport_is_a_no_op(exported: Path, open_store: OpenStore) -> None:
    target = open_store("target")
    bundle = read_export(exported)
    import_bundle(target, bundle)
    before = snapshot(target)
    again = import_bundle(target, bundle)
    assert again == {"events_added": 0, "events_unchanged": 30, "fused": 0, "edges_added": 0}
    assert snapshot(target) == before


def test_conflicting_event_writes_nothing(exported: Path, open_store: OpenStore) -> None:
    target = open_store("target")
    original = read_export(exported).events[3]
    target.add_events([original.model_copy(update={"description": "something else"})])
    before = snapshot(target)
    with pytest.raises(EventConflictError, match=original.event_id):
        import_bundle(target, read_export(exported))
    assert snapshot(target) == before


def test_failure_after_events_rolls_everything_back(
    exported: Path, open_store: OpenStore, tmp_path: Path
) -> None:
    """The file is valid, but the target holds the reverse of an exported causal edge: the
    edge fails after events and packs were written, and the transaction undoes them all."""
    bundle = read_export(exported)
    target = open_store("target")
    by_id = {e.event_id: e for e in bundle.events}
    target.add_events([by_id["watch00"], by_id["cam00"]])
    target.add_edge(Edge(src="cam00", dst="watch00", type=EdgeType.CAUSAL))
    before = snapshot(target)
    with pytest.raises(InvalidEdgeError, match="reverse"):
        import_bundle(target, bundle)
    assert snapshot(target) == before
    target.close()
    with MemoryStore.open(tmp_path / "target", embedder=HashEmbedder()) as reopened:
        assert snapshot(reopened) == before


def corrupt(path: Path, edit: Callable[[list[str]], None]) -> Path:
    text = path.read_text(encoding="utf-8").splitlines()
    edit(text)
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def _member(text: list[str], at: int) -> None:
    record = json.loads(text[at])
    record["node"]["members"][1] = "ghost"
    text[at] = json.dumps(record)


def _retype(text: list[str], at: int, **changes: Any) -> None:
    record = json.loads(text[at])
    for key, value in changes.items():
        record[key] = value
    text[at] = json.dumps(record)


def _edge_end(text: list[str], at: int) -> None:
    record = json.loads(text[at])
    record["edge"]["dst"] = "fused_nowhere"
    text[at] = json.dumps(record)


BELONG = {"src": "cam01", "dst": "fused_hall_jog", "type": "belong"}
CORRUPTIONS: dict[str, tuple[Callable[[list[str]], None], str]] = {
    "unknown fused member": (
        lambda t: _member(t, 31),
        r"line 32: fused node '\w+': member 'ghost' is not an exported event",
    ),
    "truncated line": (lambda t: t.__setitem__(7, t[7][:40]), r"line 8: invalid JSON"),
    "unknown kind": (lambda t: _retype(t, 4, kind="foo"), r"line 5: unknown kind 'foo'"),
    "bad visibility": (
        lambda t: _retype(t, 2, visibility="everyone"),
        r"line 3: event '\w+': bad visibility: visibility 'everyone' is not one of",
    ),
    "dangling edge": (
        lambda t: _edge_end(t, 38),
        r"line 39: .*'fused_nowhere' is neither an exported event nor a fused node",
    ),
    "newer format": (
        lambda t: _retype(t, 0, format="memfuse-export-2"),
        r"line 1: unknown export format version 'memfuse-export-2'",
    ),
    "lost last line": (lambda t: t.pop(), r"line 1: the header's counts .* truncated\?"),
    "belong edge": (
        lambda t: t.append(json.dumps({"kind": "edge", "edge": BELONG})),
        r"line 42: belong edge 'cam01' -> 'fused_hall_jog': belong edges are not exported",
    ),
    "edge without a type": (
        lambda t: t.append(json.dumps({"kind": "edge", "edge": {"src": "cam01", "dst": "x"}})),
        r"line 42: edge: field 'type': Field required",
    ),
    "missing visibility": (
        lambda t: _retype(t, 9, visibility=None),
        r"line 10: event '\w+': bad visibility: visibility must be text",
    ),
    "event with a fused id": (
        lambda t: t.insert(1, t[1].replace('"event_id": "watch00"', '"event_id": "fused_watch00"')),
        r"line 2: event 'fused_watch00': ids starting with 'fused_' name fused nodes",
    ),
}


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_corrupt_export_names_the_line_and_changes_nothing(
    name: str, exported: Path, open_store: OpenStore
) -> None:
    edit, message = CORRUPTIONS[name]
    path = corrupt(exported, edit)
    target = open_store("target")
    target.add_events(household_events()[:2])
    before = snapshot(target)
    with pytest.raises(InputFormatError, match=message) as caught:
        import_bundle(target, read_export(path))
    assert str(caught.value).startswith(f"{path}: line ")
    assert "\n" not in str(caught.value)
    assert snapshot(target) == before


def test_bad_utf8_names_line_and_column(exported: Path) -> None:
    raw = exported.read_bytes().split(b"\n")
    raw[3] = raw[3].replace(b"caf\xc3\xa9", b"caf\xe9")
    exported.write_bytes(b"\n".join(raw))
    with pytest.raises(InputFormatError, match=r"line 4: not valid UTF-8 \(byte 0xe9 at column"):
        read_export(exported)


def test_not_an_export(tmp_path: Path) -> None:
    plain = tmp_path / "events.jsonl"
    plain.write_text('{"event_id": "a"}\n', encoding="utf-8")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\xff\xfe\x00{")
    for path in (plain, empty, garbage, tmp_path / "missing.jsonl", tmp_path):
        assert not is_export(path)
    with pytest.raises(InputFormatError, match=r"events.jsonl: line 1: not a MemFuse export"):
        read_export(plain)
    with pytest.raises(InputFormatError, match=r"empty.jsonl: empty file"):
        read_export(empty)


def test_is_export_reads_past_blank_lines(exported: Path) -> None:
    exported.write_text("\n  \n" + exported.read_text(encoding="utf-8"), encoding="utf-8")
    assert is_export(exported)
    assert read_export(exported).counts()["events"] == 30


# --- writing never leaves half a file ---------------------------------------------------------


def _failing_dumps(monkeypatch: pytest.MonkeyPatch, after: int, fail: Callable[[], None]) -> None:
    real = json.dumps
    calls = 0

    def dumps(obj: Any, **kwargs: Any) -> str:
        nonlocal calls
        calls += 1
        if calls == after:
            fail()
        return real(obj, **kwargs)

    monkeypatch.setattr(export.json, "dumps", dumps)


def test_interrupted_write_keeps_the_old_export(
    source: MemoryStore, exported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = exported.read_bytes()

    def ctrl_c() -> None:
        raise KeyboardInterrupt

    _failing_dumps(monkeypatch, 12, ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        write_export(source, exported)
    assert exported.read_bytes() == old
    assert sorted(p.name for p in exported.parent.iterdir() if "backup" in p.name) == [
        "backup.jsonl"
    ]


def test_folder_vanishing_midway_leaves_no_file(
    source: MemoryStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "backup.jsonl"
    _failing_dumps(monkeypatch, 12, lambda: shutil.rmtree(folder))
    with pytest.raises(MemFuseError, match=r"cannot write the export .*backup.jsonl"):
        write_export(source, target)
    assert not target.exists()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores modes")
def test_read_only_folder_leaves_no_file(source: MemoryStore, tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(MemFuseError, match="permission denied; nothing was written"):
            write_export(source, folder / "backup.jsonl")
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)


def test_missing_folder_is_one_line(source: MemoryStore, tmp_path: Path) -> None:
    with pytest.raises(MemFuseError, match="no such file or directory; nothing was written"):
        write_export(source, tmp_path / "nowhere" / "backup.jsonl")


# --- property: any small store round-trips exactly --------------------------------------------

NAMES = ["David", "Maya", "Tom"]
SmallStore = tuple[list[Event], dict[str, str], list[tuple[str, list[int]]], list[Edge]]
WORDS = st.text(alphabet="abcdefgh éü☕", min_size=1, max_size=20).filter(lambda s: s.strip())


@st.composite
def small_store(draw: st.DrawFn) -> SmallStore:
    count = draw(st.integers(1, 8))
    events = []
    for i in range(count):
        record: dict[str, Any] = {
            "event_id": f"e{i}",
            "timestamp": draw(st.datetimes(datetime(2020, 1, 1), datetime(2030, 1, 1))),
            "device": draw(st.sampled_from(list(DEVICES))),
            "modality": draw(st.sampled_from(sorted(set(MODALITIES.values())))),
            "description": draw(WORDS),
            "characters": draw(st.lists(st.sampled_from(NAMES), max_size=2, unique=True)),
            "owner": draw(st.sampled_from([None, "shared", *NAMES])),
        }
        if draw(st.booleans()):
            record["visibility"] = draw(
                st.sampled_from(["household", "private:Tom", "people:Maya,David", ["Tom", "Maya"]])
            )
        events.append(parse_event(record))
    packs = [
        (f"fused_{k}", sorted(draw(st.sets(st.integers(0, count - 1), min_size=1))))
        for k in range(draw(st.integers(0, 3)))
    ]
    nodes = [e.event_id for e in events] + [p[0] for p in packs]
    edges: dict[tuple[str, str, str], Edge] = {}
    for _ in range(draw(st.integers(0, 10))):
        src, dst = draw(st.sampled_from(nodes)), draw(st.sampled_from(nodes))
        causal = src.startswith("e") and dst.startswith("e") and draw(st.booleans())
        weight = draw(st.floats(0.0, 1.0)) if not causal else 1.0
        edge = Edge(src=src, dst=dst, type="causal" if causal else "semantic", weight=weight)
        if src != dst and (dst, src, "causal") not in edges:
            edges.setdefault(edge.key(), edge)
    changes = draw(
        st.dictionaries(
            st.sampled_from([e.event_id for e in events]),
            st.sampled_from(["household", "private:Maya", "people:David,Tom"]),
        )
    )
    return events, changes, packs, list(edges.values())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_store())
def test_any_small_store_round_trips(
    case: SmallStore,
) -> None:
    events, changes, packs, edges = case
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with MemoryStore.open(root / "a", embedder=HashEmbedder()) as source:
            source.add_events(events)
            source.set_visibility(changes)
            for node_id, members in packs:
                chosen = [events[i] for i in members]
                source.put_fused(FusedNode.from_members(node_id, f"pack {node_id}", chosen))
            for edge in edges:
                source.add_edge(edge)
            write_export(source, root / "a.jsonl")
            with MemoryStore.open(root / "b", embedder=HashEmbedder()) as target:
                bundle = read_export(root / "a.jsonl")
                assert isinstance(bundle, ExportBundle)
                import_bundle(target, bundle)
                write_export(target, root / "b.jsonl")
                assert snapshot(target) == snapshot(source)
        assert lines(root / "a.jsonl") == lines(root / "b.jsonl")
