"""Every governed operation leaves exactly one audit entry (a fused ingest: one for the batch
and one per fusion plan), a reader's own reads leave none, and the log verifies."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from memfuse.api import MemFuse
from memfuse.settings import load_settings
from memory.errors import EventConflictError
from memory.models import parse_event
from memory.selection import EventFilter
from memory.store import MemoryStore
from tests.support.embedders import HashEmbedder

SAMPLE = Path(__file__).resolve().parents[2] / "memfuse" / "samples" / "household.jsonl"


def _records() -> list[dict[str, object]]:
    """The sample's events, each naming its device's owner (Tom's watch is his own)."""
    return [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemFuse]:
    store = MemoryStore.open(tmp_path, embedder=HashEmbedder())
    mem = MemFuse(store, load_settings(data_dir=tmp_path, user=None))
    yield mem
    mem.close()


def _ops(memory: MemFuse) -> Counter[str]:
    return Counter(e.op for e in memory.audit.entries())  # the log itself: no read recorded


def _delta(memory: MemFuse, before: Counter[str]) -> dict[str, int]:
    after = _ops(memory)
    return {op: after[op] - before[op] for op in after if after[op] != before[op]}


def test_each_operation_leaves_exactly_its_entries(memory: MemFuse, tmp_path: Path) -> None:
    records = _records()
    before = _ops(memory)
    memory.ingest(records[:20], mode="plain", user="Anna")
    assert _delta(memory, before) == {"genesis": 1, "ingest": 1}

    before = _ops(memory)
    summary = memory.ingest(records[20:], mode="fused", user="Anna")
    assert _delta(memory, before) == {"ingest": 1, "fusion_plan": 10}
    plans = [e for e in memory.audit.entries(op="fusion_plan")]
    assert {e.details["decided_by"] for e in plans} == {"offline"}
    accepted = sum(e.details["status"] == "accepted" for e in plans)
    assert accepted == summary.plans_accepted

    checks = [
        (lambda: memory.search("limping", user="Anna"), {}),
        (lambda: memory.search("limping", admin=True), {"admin_read": 1}),
        (lambda: memory.search("limping", system="hybrid", admin=True), {"admin_read": 1}),
        (lambda: memory.events(user="Tom"), {}),
        (lambda: memory.events(admin=True), {"admin_read": 1}),
        (lambda: memory.show(records[0]["event_id"], admin=True), {"admin_read": 1}),
        (
            lambda: memory.set_visibility([records[1]["event_id"]], "private:Anna", user="Anna"),
            {"visibility": 1},
        ),
        (lambda: memory.export(tmp_path / "out.jsonl", admin=True), {"export": 1}),
        (
            lambda: memory.forget(EventFilter(event_ids=[records[2]["event_id"]]), user="Anna"),
            {"forget": 1},
        ),
        (lambda: memory.forget(EventFilter(device="watch_tom"), dry_run=True, user="Tom"), {}),
        (lambda: memory.history(records[3]["event_id"], user="Tom"), {}),
        (lambda: memory.history(records[3]["event_id"], admin=True), {"admin_read": 1}),
        (lambda: memory.audit_entries(admin=True), {"admin_read": 1}),
    ]
    for run, expected in checks:
        before = _ops(memory)
        run()
        assert _delta(memory, before) == expected
    assert memory.verify_audit().ok


def test_entries_carry_ids_and_counts_never_text(memory: MemFuse) -> None:
    records = _records()
    memory.ingest(records, mode="plain", user="Anna")
    entry = memory.audit.entries(op="ingest")[-1]
    assert entry.actor == "Anna"
    assert entry.counts == {"stored": 30, "unchanged": 0}
    assert entry.ids == [r["event_id"] for r in records]
    text = memory.audit.path.read_text()
    assert all(str(r["description"]) not in text for r in records)


def test_history_lists_what_happened_to_one_event(memory: MemFuse) -> None:
    records = _records()
    memory.ingest(records, mode="plain")
    target = str(records[3]["event_id"])
    memory.set_visibility([target], "people:Anna,Tom", user="Anna")
    assert [e.op for e in memory.history(target, user="Tom")] == ["ingest", "visibility"]
    memory.forget(EventFilter(event_ids=[target]), user="Anna")
    history = memory.history(target, admin=True)  # forgotten: only an admin finds it
    assert [e.op for e in history] == ["ingest", "visibility", "forget"]
    assert all(target not in e.ids for e in history)  # redacted; found by digest


def test_policy_file_in_the_data_dir_sets_visibility(tmp_path: Path) -> None:
    (tmp_path / "visibility.json").write_text(
        json.dumps({"rules": [{"device": "speaker_*", "visibility": "people:Anna,Tom"}]})
    )
    store = MemoryStore.open(tmp_path, embedder=HashEmbedder())
    with MemFuse(store, load_settings(data_dir=tmp_path)) as memory:
        records = _records()
        memory.ingest(records, mode="plain")
        vis = store.visibilities()
        for row in records:
            event = parse_event(row)
            if event.device.startswith("speaker_"):
                assert vis[event.event_id] == "people:Anna,Tom"
            elif event.owner in ("Anna", "Tom"):  # their watches and phones
                assert vis[event.event_id] == f"private:{event.owner}"
            else:
                assert event.owner == "shared" and vis[event.event_id] == "household"


def test_rejected_and_empty_writes_leave_no_entry(memory: MemFuse) -> None:
    records = _records()
    memory.ingest(records[:10], mode="fused", user="Anna")
    before = memory.audit.path.read_bytes()
    conflicting = {**records[0], "description": "something else entirely"}
    for mode in ("fused", "plain"):
        with pytest.raises(EventConflictError):
            memory.ingest([*records[10:20], conflicting], mode=mode, user="Anna")
        memory.ingest(records[:10], mode=mode, user="Anna")  # nothing new: nothing committed
    assert memory.audit.path.read_bytes() == before
    assert sorted(e.event_id for e in memory.store.all_events()) == sorted(
        str(r["event_id"]) for r in records[:10]
    )


def test_entries_committed_before_a_crash_are_delivered_once_by_the_next_writer(
    memory: MemFuse, tmp_path: Path
) -> None:
    records = _records()
    memory.ingest(records[:5], mode="plain", user="Anna")
    log = memory.audit
    real_append = log.append_many
    log.append_many = lambda entries: (_ for _ in ()).throw(OSError("killed"))  # type: ignore[method-assign]
    with pytest.raises(OSError):
        memory.ingest(records[5:12], mode="plain", user="Anna")  # committed, not yet delivered
    assert [q.op for q in memory.store.audit_outbox()] == ["ingest"]
    log.append_many = real_append  # type: ignore[method-assign]
    # a delivery cut short after its append but before the store heard of it
    queued = memory.store.audit_outbox()
    log.append_many(
        [(q.op, {**q.args, "details": {**q.args["details"], "outbox": q.seq}}) for q in queued]
    )
    log.deliver(memory.store)
    ingests = [e for e in log.entries(op="ingest")]
    assert [len(e.ids) for e in ingests] == [5, 7]  # the second batch once, not twice
    assert memory.store.audit_outbox() == [] and memory.verify_audit().ok
