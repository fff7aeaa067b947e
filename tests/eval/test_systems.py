"""The benchmark scores a baseline with the very code `MemFuse.search` answers it with
(`memory.retrieval.run_recipe`): on a fused memory with private events, every baseline's
context is the same from both sides, for every asker and asking time."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from eval.systems import resolve_systems
from memfuse.api import MemFuse
from memfuse.inputs import read_events
from memory.access import VisibleStore
from memory.formats.models import BenchQuestion
from memory.records import ContextEntry
from memory.settings import MemFuseSettings

SAMPLE = Path(__file__).resolve().parents[2] / "memfuse" / "samples" / "household.jsonl"
QUESTIONS = (
    "How did Tom sleep?",
    "What did Anna add to the shopping list?",
    "What happened in the kitchen on Wednesday evening?",
)


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> MemFuse:
    root = tmp_path_factory.mktemp("household")
    settings = MemFuseSettings(
        data_dir=root, embedding_provider="hashing", chroma_host=None, _env_file=None
    )  # type: ignore[call-arg]
    with MemFuse.open(root, settings=settings, writer=True) as writer:
        writer.ingest(read_events(SAMPLE), mode="fused")
    opened = MemFuse.open(root, settings=settings)
    assert opened.stats().fused_nodes > 0  # packs exist, so "as of" must hide later members
    return opened


def _contexts(entries: list[ContextEntry]) -> list[dict[str, object]]:
    return [entry.model_dump() for entry in entries]


@pytest.mark.parametrize("system", ["naive_rag", "bm25", "hybrid"])
@pytest.mark.parametrize("user", ["Tom", "Anna"])
@pytest.mark.parametrize("asked", [datetime(2026, 5, 12, 9, 0), datetime(2026, 5, 15, 9, 0)])
def test_the_api_and_the_benchmark_give_a_baseline_the_same_context(
    memory: MemFuse, system: str, user: str, asked: datetime
) -> None:
    """The benchmark reads everything (an admin read); the API's user read is the same
    search on the user's view, and holds nothing they may not see or that came later."""
    (bench_system,) = resolve_systems([system])
    for text in QUESTIONS:
        question = BenchQuestion(
            question_id="q", category="causal", question=text, answer="-", user=user, time=asked
        )
        as_admin = memory.search(text, system=system, user=user, time=asked, k=5, admin=True)
        assert _contexts(as_admin.context) == _contexts(
            bench_system.retrieve(memory.store, question, 5).context
        )
        as_user = memory.search(text, system=system, user=user, time=asked, k=5).context
        own_view = VisibleStore(memory.store, user)
        assert _contexts(as_user) == _contexts(bench_system.retrieve(own_view, question, 5).context)
        for entry in as_user:
            assert entry.timestamp <= asked
            assert memory.get(entry.node_id, user=user) is not None, (user, entry.node_id)
