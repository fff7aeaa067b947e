"""Forgetting a storyline: afterwards no index, pack, edge, cache, log or raw file of the data
dir holds the forgotten events' text or ids, the packs that held them were re-fused, and
retrieval on the questions that never needed them is unchanged."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from eval.synth import generate
from memfuse.api import MemFuse
from memfuse.settings import load_settings
from memory.embeddings import CachedEmbedder
from memory.models import EdgeType, Event, NodeKind
from memory.selection import EventFilter
from memory.store import MemoryStore
from tests.support.bench import BagOfWordsEmbedder

DAYS = 4  # of the generated household: enough storylines and packs, quick to fuse


@dataclass
class Forgotten:
    data_dir: Path
    memory: MemFuse
    ids: list[str]
    texts: list[str]  # descriptions of forgotten events that no remaining event shares
    packs_before: dict[str, Any]  # affected pack id -> the node before
    recall_before: dict[str, float]
    questions: list[Any]
    report: Any


def _recall(memory: MemFuse, questions: list[Any]) -> dict[str, float]:
    out = {}
    for q in questions:
        wanted = set(q.evidence_event_ids)
        context = memory.search(q.question, admin=True, time=q.question_time, k=20).context
        got = {e.node_id for e in context if e.kind == NodeKind.EVENT}
        out[q.question_id] = len(wanted & got) / len(wanted)
    return out


@pytest.fixture(scope="module")
def forgotten(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Forgotten]:
    scenario = generate(1, seed=11).scenario_data[0]
    events = scenario.memory_events(labels=True)
    start = events[0].timestamp
    events = [e for e in events if (e.timestamp - start).days < DAYS]
    kept_ids = {e.event_id for e in events}
    data_dir = tmp_path_factory.mktemp("forget")
    embedder = CachedEmbedder(BagOfWordsEmbedder(), data_dir / "embeddings.sqlite")
    store = MemoryStore.open(data_dir, embedder=embedder)
    memory = MemFuse(store, load_settings(data_dir=data_dir))
    memory.ingest(events, mode="fused")
    # the storyline episode whose events sit in the most packs
    episodes: dict[str, list[Event]] = {}
    for e in events:
        if e.episode_id and e.source.value == "storyline":
            episodes.setdefault(e.episode_id, []).append(e)
    episode = max(
        episodes, key=lambda ep: sum(bool(store.fused_of(e.event_id)) for e in episodes[ep])
    )
    doomed = episodes[episode]
    ids = [e.event_id for e in doomed]
    remaining = {e.description for e in events if e.event_id not in set(ids)}
    texts = [e.description for e in doomed if e.description not in remaining]
    packs_before = {f: store.get_fused(f) for i in ids for f in store.fused_of(i)}
    questions = [
        q
        for q in scenario.questions
        if set(q.evidence_event_ids) and set(q.evidence_event_ids) <= kept_ids - set(ids)
    ]
    recall_before = _recall(memory, questions)
    report = memory.forget(EventFilter(event_ids=ids), admin=True)
    yield Forgotten(data_dir, memory, ids, texts, packs_before, recall_before, questions, report)
    memory.close()
    embedder.close()


def _files(data_dir: Path) -> list[Path]:
    return [p for p in data_dir.rglob("*") if p.is_file()]


def test_the_storyline_was_in_packs_that_had_other_members(forgotten: Forgotten) -> None:
    assert len(forgotten.ids) >= 3
    assert forgotten.texts
    assert forgotten.packs_before
    assert forgotten.report.packs, "no pack was touched: the test would show nothing"


def test_no_file_in_the_data_dir_holds_a_forgotten_id_or_text(forgotten: Forgotten) -> None:
    id_patterns = [
        re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(i.encode()) + rb"(?![A-Za-z0-9_])")
        for i in forgotten.ids
    ]
    found: list[str] = []
    for path in _files(forgotten.data_dir):
        data = path.read_bytes()
        found += [f"{path.name}: id" for p in id_patterns if p.search(data)]
        found += [f"{path.name}: text {t[:40]!r}" for t in forgotten.texts if t.encode() in data]
    assert found == []


def test_no_index_returns_or_quotes_a_forgotten_event(forgotten: Forgotten) -> None:
    store = forgotten.memory.store
    gone = set(forgotten.ids)
    assert not gone & {e.event_id for e in store.all_events()}
    for text in forgotten.texts:
        lexical = {i for i, _ in store.lexical_search(text, 50)}
        dense = {i for i, _ in store.dense_search(store.embed_query(text), 50)}
        assert not (lexical | dense) & gone
        context = forgotten.memory.search(text, admin=True, k=20).context
        assert not {e.node_id for e in context} & gone
        assert all(text not in e.text for e in context)
    for node in store.all_fused():
        assert not set(node.members) & gone
        assert all(text not in node.summary for text in forgotten.texts)
    for event in store.all_events():
        assert not {e.other(event.event_id) for e in store.neighbors(event.event_id)} & gone


def test_affected_packs_were_re_fused_or_removed(forgotten: Forgotten) -> None:
    store = forgotten.memory.store
    actions = {p.fused_id: p.action for p in forgotten.report.packs}
    assert set(actions) == set(forgotten.packs_before)
    for fused_id, before in forgotten.packs_before.items():
        left = [m for m in before.members if m not in set(forgotten.ids)]
        if actions[fused_id] == "removed":
            assert len(left) < 2 and not store.has_node(fused_id)
            continue
        after = store.get_fused(fused_id)
        assert after.members == left and after.version == before.version + 1
        for edge in store.neighbors(fused_id, EdgeType.SEMANTIC):
            assert store.has_node(edge.other(fused_id))


def test_the_forget_survives_a_reopen(forgotten: Forgotten) -> None:
    with MemoryStore.open(
        forgotten.data_dir, embedder=BagOfWordsEmbedder(), namespace="default"
    ) as again:
        assert not set(forgotten.ids) & {e.event_id for e in again.all_events()}
        assert again.stats().fused_nodes == forgotten.memory.store.stats().fused_nodes


def test_retrieval_on_the_other_questions_is_not_hurt(forgotten: Forgotten) -> None:
    """Forgetting some questions' events must not cost the other questions their evidence.
    Their recall may rise (the forgotten events were competitors in their windows: 0.317 →
    0.367 on this fixture before the weighted window list, 0.286 → 0.341 with it), so only a
    drop is bounded."""
    after = _recall(forgotten.memory, forgotten.questions)
    before = forgotten.recall_before
    assert len(before) >= 5
    mean_before = sum(before.values()) / len(before)
    mean_after = sum(after.values()) / len(after)
    print(f"\nrecall on {len(before)} untouched questions: {mean_before:.3f} → {mean_after:.3f}")
    assert mean_after >= mean_before - 0.05


def test_history_keeps_the_forget_without_the_id(forgotten: Forgotten) -> None:
    entries = forgotten.memory.history(forgotten.ids[0], admin=True)
    ops = [e.op for e in entries]
    assert ops[0] == "ingest" and ops[-1] == "forget"
    assert all(forgotten.ids[0] not in e.ids for e in entries)
    assert forgotten.ids[0].encode() not in forgotten.memory.audit.path.read_bytes()
    assert forgotten.memory.verify_audit().ok
