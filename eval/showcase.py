"""`memfuse show-question`: one benchmark question end to end, for people.

It reuses the bench's cached store (or builds it), runs one system on one question
and prints the question, the reference answer and the retrieved context with
provenance, marking the gold evidence — the quickest way to see what a system
found and how (which seed, which typed path).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from eval.bench_stores import BuiltStores
from eval.metrics import evidence_recall
from eval.systems import INGESTORS, resolve_systems
from memfuse.render import context_table
from memfuse.settings import load_settings
from memory.embeddings import make_embedder
from memory.errors import MemFuseError
from memory.formats.loader import load_dataset
from memory.formats.models import BenchQuestion, BenchScenario
from memory.models import format_timestamp
from memory.opener import embedding_config


def show_question(
    dataset_path: Path,
    *,
    index: int = 0,
    question_id: str | None = None,
    system: str = "memfuse",
    data_dir: Path | None = None,
    k: int = 20,
    out: Console,
) -> float:
    """Print one question with its context — the one named by `question_id` in any scenario,
    else number `index` of the first — and return its evidence recall."""
    dataset = load_dataset(dataset_path)
    scenario, question = _pick(dataset.scenarios, index, question_id)
    (chosen,) = resolve_systems([system])
    settings = load_settings(data_dir=data_dir)
    stores = data_dir or settings.data_dir
    stores.mkdir(parents=True, exist_ok=True)
    embedder = make_embedder(embedding_config(settings, stores))
    cache = BuiltStores(stores, dataset.content_hash, settings, embedder, progress=True)
    prepared = cache.prepare(scenario, INGESTORS[chosen.ingest_mode])
    try:
        outcome = chosen.retrieve(prepared.store, question, k)
    finally:
        prepared.store.close()
    gold = set(question.evidence_ids)
    recall = evidence_recall(question.evidence_ids, outcome.event_ids) or 0.0
    out.rule(f"{scenario.scenario_id} · {question.question_id} · {question.category}")
    out.print(
        f"[bold]Question[/bold] ({question.user or 'unknown'}, {format_timestamp(question.time)}): "
        f"{question.question}"
    )
    out.print(f"[bold]Reference answer:[/bold] {question.answer}")
    title = (
        f"{system}: {len(outcome.context)} entries, {outcome.rounds} round(s), "
        f"{outcome.elapsed_ms:.0f} ms — gold evidence found {recall:.0%} (✓)"
    )
    out.print(context_table(outcome.context, title, gold=gold))
    missing = sorted(gold - set(outcome.event_ids))
    if missing:
        out.print(f"[dim]gold evidence not retrieved: {', '.join(missing)}[/dim]")
    return recall


def _pick(
    scenarios: Sequence[BenchScenario], index: int, question_id: str | None
) -> tuple[BenchScenario, BenchQuestion]:
    if question_id is not None:
        for scenario in scenarios:
            for question in scenario.questions:
                if question.question_id == question_id:
                    return scenario, question
        raise MemFuseError(f"--question {question_id!r}: no question with that id in the file")
    scenario = scenarios[0]
    if index >= len(scenario.questions):
        raise MemFuseError(
            f"--index {index}: scenario {scenario.scenario_id} has "
            f"{len(scenario.questions)} questions"
        )
    return scenario, scenario.questions[index]
