"""`bench`: run systems over a benchmark file and write results, per-question records and a report.

Per scenario, one store is built per ingest mode and cached on disk under a key
that changes with anything that would change its content (dataset bytes, scenario,
ingest mode and its config key, embedding model), so a re-run skips ingest and
reports the ingest time of the run that built it (`eval.bench_stores`). Retrieval
metrics need no LLM; with one configured, every context is also read and the answer
judged against its checklist (`eval.bench_question`).

`limit` keeps the first N questions of every scenario (ingest still covers the
whole scenario, so stores stay reusable across limits). Timings leave warm-up out:
the embedding model is loaded before an ingest is timed, question texts are embedded
(into the persistent embedding cache) before any system runs, and every system makes
one untimed retrieval per store before its questions are measured. Nothing else a system
embeds while answering comes from that cache: each question pays for its own texts, as a
question never asked before does (`eval.bench_queries`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from eval.bench_queries import FreshQueries, fresh_queries, question_encode_ms
from eval.bench_question import AnswerScorer, measure
from eval.bench_stores import BuiltStores
from eval.context_changes import context_changes, later_finds
from eval.metrics import QuestionMeasure, aggregate, distractors_by_question, mean
from eval.missing_evidence import missing_evidence
from eval.report import markdown_report, plot_recall_by_category
from eval.systems import INGESTORS, BenchSystem, EventStream, IngestMode, resolve_systems
from graphs.llm import RetryPolicy
from memfuse.settings import MemFuseSettings, load_settings
from memory import heap
from memory.errors import ConfigurationError
from memory.formats.loader import load_dataset
from memory.formats.models import BenchDataset, BenchQuestion, BenchScenario, DatasetFormat

NO_LLM_NOTE = "No LLM configured: only retrieval metrics are reported (no checklist score)."
QUERY_EMBEDDING_NOTE = (
    "latency: every question's own text was embedded before timing; any other text a system "
    "embedded while answering was encoded by the model, as for a question never asked before "
    "(none read from the embedding cache; query_texts_encoded counts them per question)"
)


@dataclass
class BenchResults:
    """What a run produced: the results.json content and where everything was written."""

    results: dict[str, Any]
    out_dir: Path
    llm_model: str | None
    notes: list[str] = field(default_factory=list)
    ingests_run: int = 0  # stores built in this run (0 when every store came from the cache)

    @property
    def results_path(self) -> Path:
        return self.out_dir / "results.json"

    @property
    def questions_path(self) -> Path:
        return self.out_dir / "questions.jsonl"

    @property
    def report_path(self) -> Path:
        return self.out_dir / "report.md"

    @property
    def chart_path(self) -> Path:
        return self.out_dir / "recall_by_category.png"


# --- the run --------------------------------------------------------------------------


def sample_questions(questions: Sequence[BenchQuestion], limit: int | None) -> list[BenchQuestion]:
    """The first `limit` questions taken round-robin over the categories (in file order within
    each), so a small limit still scores every category; all of them without a limit."""
    if not limit or limit >= len(questions):
        return list(questions)
    by_category: dict[str, list[BenchQuestion]] = {}
    for question in questions:
        by_category.setdefault(question.category, []).append(question)
    picked: list[BenchQuestion] = []
    for depth in range(max(len(q) for q in by_category.values())):
        for queue in by_category.values():
            if depth < len(queue) and len(picked) < limit:
                picked.append(queue[depth])
    order = {id(q): i for i, q in enumerate(questions)}
    return sorted(picked, key=lambda q: order[id(q)])


def _llm_settings(
    llm: MemFuseSettings | bool | None, settings: MemFuseSettings
) -> MemFuseSettings | None:
    """None → use `settings` when it has an LLM; False → never; a settings object → it."""
    if llm is False:
        return None
    chosen = settings if llm is None or llm is True else llm
    if chosen.llm_enabled:
        return chosen
    if llm is True or isinstance(llm, MemFuseSettings):
        raise ConfigurationError("an LLM was requested for bench but MEMFUSE_LLM_MODEL is not set")
    return None


def run_bench(
    dataset_path: str | Path,
    format: DatasetFormat | None = None,
    systems: Sequence[str] | None = None,
    k: int = 20,
    limit: int | None = None,
    out_dir: str | Path = Path("bench-out"),
    data_dir: str | Path | None = None,
    progress: bool = True,
    llm: MemFuseSettings | bool | None = None,
    settings: MemFuseSettings | None = None,
    embedder: Any = None,
    console: Console | None = None,
    retry: RetryPolicy | None = None,
    as_asker: bool = False,
) -> BenchResults:
    """Benchmark `systems` (names from eval.systems.SYSTEMS; None = all runnable ones).

    `as_asker`: each question is asked with visibility enforced, as its asker (a question
    without one is asked unrestricted and counted in the notes); otherwise every question
    reads the whole memory, as an administrator would.

    `data_dir` holds the cached stores (default: <out_dir>/stores); `embedder`
    overrides the configured embedding model (tests inject a small one); `retry`
    overrides the reader/judge provider-error policy.
    """
    if k < 1:
        raise ConfigurationError(f"k must be at least 1, got {k}")
    if limit is not None and limit < 1:
        raise ConfigurationError(f"limit must be at least 1, got {limit}")
    settings = settings or load_settings()
    llm_settings = _llm_settings(llm, settings)
    out = Path(out_dir)
    stores_dir = Path(data_dir) if data_dir is not None else out / "stores"
    console = console or Console(stderr=True, quiet=not progress)
    dataset = load_dataset(dataset_path, format)
    chosen = resolve_systems(systems)
    if embedder is None and any(INGESTORS[s.ingest_mode].needs_store for s in chosen):
        from memory.embeddings import make_embedder
        from memory.opener import embedding_config

        stores_dir.mkdir(parents=True, exist_ok=True)
        embedder = make_embedder(embedding_config(settings, stores_dir))
    cache = BuiltStores(stores_dir, dataset.content_hash, settings, embedder, progress)
    scorer = AnswerScorer(llm_settings, retry) if llm_settings else None
    if scorer is None:
        console.print(f"[yellow]{NO_LLM_NOTE}[/yellow]")

    runner = _Runner(dataset, chosen, k, limit, cache, scorer, console, progress, as_asker)
    runner.run()
    results = runner.results(str(dataset_path))
    results["context_changes"] = context_changes(runner.records, dataset.apart_categories)
    results["later_finds"] = later_finds(runner.records, dataset.apart_categories)
    results["missing_evidence"] = missing_evidence(runner.records, dataset.apart_categories)
    notes = runner.notes()
    out.mkdir(parents=True, exist_ok=True)
    bench = BenchResults(
        results=results,
        out_dir=out,
        llm_model=llm_settings.llm_model if llm_settings else None,
        notes=notes,
        ingests_run=runner.ingests_run,
    )
    _write(bench, runner.records, dataset, limit)
    return bench


class _Runner:
    """Walks scenarios × ingest modes × systems × questions, collecting measures."""

    def __init__(
        self,
        dataset: BenchDataset,
        systems: list[BenchSystem],
        k: int,
        limit: int | None,
        cache: BuiltStores,
        scorer: AnswerScorer | None,
        console: Console,
        progress: bool,
        as_asker: bool = False,
    ):
        self.as_asker = as_asker
        self.unrestricted = 0  # as_asker: questions without an asker, asked unrestricted
        self.dataset, self.systems, self.k, self.limit = dataset, systems, k, limit
        self.cache, self.scorer, self.console, self.progress = cache, scorer, console, progress
        self.measures: dict[str, list[QuestionMeasure]] = {s.name: [] for s in systems}
        self.rounds: dict[str, list[float]] = {s.name: [] for s in systems}
        self.extras: dict[str, list[dict[str, float]]] = {s.name: [] for s in systems}
        self.ingest_seconds: dict[str, float] = {s.name: 0.0 for s in systems}
        self.ingest_by_cache: dict[str, dict[str, float]] = {s.name: {} for s in systems}
        self.ingest_events: dict[str, int] = {s.name: 0 for s in systems}
        self.ingest_extras: dict[str, list[Mapping[str, float]]] = {s.name: [] for s in systems}
        self.distractors: dict[str, dict[str, set[str]]] = {}  # scenario -> question -> ids
        self.records: list[dict[str, Any]] = []
        self.ingests_run = 0
        self.query_encodes: dict[str, list[int]] = {s.name: [] for s in systems}
        """Per system, the texts the model encoded for each timed question (`FreshQueries`)."""

    def run(self) -> None:
        modes = list(dict.fromkeys(s.ingest_mode for s in self.systems))
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=self.console, disable=not self.progress) as bar:
            total = len(self.dataset.scenarios) * len(self.systems)
            task = bar.add_task("scenarios × systems", total=total)
            for scenario in self.dataset.scenarios:
                questions = sample_questions(scenario.questions, self.limit)
                for mode_name in modes:
                    self._run_mode(bar, scenario, questions, INGESTORS[mode_name], task)

    def _run_mode(
        self,
        bar: Progress,
        scenario: BenchScenario,
        questions: list[BenchQuestion],
        mode: IngestMode,
        task: Any,
    ) -> None:
        bar.update(task, description=f"{scenario.scenario_id}: ingest ({mode.name})")
        prepared = self.cache.prepare(scenario, mode)
        self.ingests_run += int(prepared.built_now)
        try:
            texts = [q.question for q in questions]
            embed_queries = getattr(prepared.store, "embed_queries", None)
            if embed_queries is not None and questions:
                # every system then finds the question vectors in the embedding cache, so
                # latency compares searches, not who paid for encoding a question first
                embed_queries(texts)
            extra = dict(mode.extra_metrics(prepared.store, scenario)) if mode.extra_metrics else {}
            heap.settle()  # as a served store is: no full collection scans what it loaded
            encode_ms = question_encode_ms(prepared.store, texts)
            # one FreshQueries for the store's systems: each question starts with nothing but
            # the question vectors (`next_question`), whichever system asked before it
            with fresh_queries(prepared.store, texts) as fresh:  # eval.bench_queries
                for system in (s for s in self.systems if s.ingest_mode == mode.name):
                    self.ingest_seconds[system.name] += prepared.ingest_seconds
                    if prepared.cache is not None:
                        by_cache = self.ingest_by_cache[system.name]
                        by_cache[prepared.cache] = (
                            by_cache.get(prepared.cache, 0.0) + prepared.ingest_seconds
                        )
                    self.ingest_events[system.name] += len(scenario.events)
                    if extra:
                        self.ingest_extras[system.name].append(extra)
                    bar.update(task, description=f"{scenario.scenario_id}: {system.name}")
                    if questions:  # untimed warm-up: first-query costs (lazy loads) aside
                        system.retrieve(prepared.store, _warm_up(questions[0]), self.k)
                    for question in questions:
                        if fresh is not None:
                            fresh.next_question()
                        self._ask(system, scenario, question, prepared.store, fresh, encode_ms)
                    bar.advance(task)
        finally:
            close = getattr(prepared.store, "close", None)
            if close is not None:
                close()
            heap.thaw()

    def _ask(
        self,
        system: BenchSystem,
        scenario: BenchScenario,
        question: BenchQuestion,
        store: Any,
        fresh: FreshQueries | None = None,
        encode_ms: Mapping[str, float] | None = None,
    ) -> None:
        from memory.access import VisibleStore

        if self.as_asker and not question.user:
            self.unrestricted += 1
        if store is not None and not isinstance(store, EventStream):
            # every system reads the memory as it stood when the question was asked
            asker = question.user if self.as_asker else None
            store = VisibleStore(store, asker, as_of=question.time)
        outcome = system.retrieve(store, question, self.k)
        judged = self.scorer.score(system, question, outcome) if self.scorer else None
        if scenario.scenario_id not in self.distractors:
            self.distractors[scenario.scenario_id] = distractors_by_question(
                scenario.labelled_events
            )
        targeted = self.distractors[scenario.scenario_id].get(question.question_id, set())
        charged = 0.0
        if fresh is not None:
            self.query_encodes[system.name].append(fresh.encoded)
            if fresh.read_question:
                charged = (encode_ms or {}).get(question.question, 0.0)
        m, record = measure(system, scenario, question, outcome, judged, targeted, charged)
        self.measures[system.name].append(m)
        self.rounds[system.name].append(float(outcome.rounds))
        self.extras[system.name].append(outcome.extras)
        self.records.append(record)

    def results(self, dataset_label: str) -> dict[str, Any]:
        apart = set(self.dataset.apart_categories)
        with_judge = self.scorer is not None
        systems: dict[str, Any] = {}
        for system in self.systems:
            measures = self.measures[system.name]
            overall = aggregate([m for m in measures if m.category not in apart], with_judge)
            overall["ingest_seconds"] = self.ingest_seconds[system.name]
            by_cache = self.ingest_by_cache[system.name]
            overall["ingest_cold_seconds"] = by_cache.get("cold")
            overall["ingest_warm_seconds"] = by_cache.get("warm")
            seconds, events = self.ingest_seconds[system.name], self.ingest_events[system.name]
            overall["ingest_events_per_s"] = events / seconds if seconds > 0 else None
            overall["mean_rounds"] = mean(self.rounds[system.name])
            encodes = self.query_encodes[system.name]
            overall["query_texts_encoded"] = mean([float(n) for n in encodes]) if encodes else None
            if apart:
                overall["excluded_categories"] = sorted(apart)
            overall.update(_mean_dicts(self.extras[system.name]))
            overall.update(_mean_dicts(self.ingest_extras[system.name]))
            by_category: dict[str, Any] = {}
            for category in dict.fromkeys(m.category for m in measures):
                block = aggregate([m for m in measures if m.category == category], with_judge)
                block["ingest_seconds"] = None  # ingest is per scenario, not per category
                by_category[category] = block
            systems[system.name] = {"overall": overall, "by_category": by_category}
        return {"dataset": dataset_label, "k": self.k, "systems": systems}

    def notes(self) -> list[str]:
        notes = list(self.dataset.notes)
        if self.scorer is None:
            notes.insert(0, NO_LLM_NOTE)
        if any(INGESTORS[s.ingest_mode].needs_store for s in self.systems):
            notes.append(QUERY_EMBEDDING_NOTE)
        if self.limit:
            notes.append(
                f"limit: {self.limit} question(s) of every scenario, taken round-robin over "
                "its categories"
            )
        if self.as_asker:
            per_system = self.unrestricted // max(len(self.systems), 1)
            notes.append(
                "as the asker: every question searched only what its asker may see"
                + (
                    f"; {per_system} question(s) name no asker and read everything"
                    if per_system
                    else ""
                )
            )
        if self.dataset.apart_categories:
            apart = ", ".join(self.dataset.apart_categories)
            notes.append(f"reported apart and left out of Overall: {apart}")
        if self.scorer is not None and any(
            q.checklist is None for s in self.dataset.scenarios for q in s.questions
        ):
            notes.append(
                "questions without a checklist are judged against the reference answer as a "
                "one-item checklist"
            )
        return notes


def _warm_up(question: BenchQuestion) -> BenchQuestion:
    """A question with new text, so the warm-up runs the query-embedding path for real."""
    return question.model_copy(update={"question": f"warm-up: {question.question}"})


def _mean_dicts(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-key means over rows (scenarios or questions); nested dicts (e.g. edges by type)
    are averaged key by key."""
    keys = list(dict.fromkeys(key for row in rows for key in row))
    merged: dict[str, Any] = {}
    for key in keys:
        values = [row[key] for row in rows if key in row]
        if values and all(isinstance(v, Mapping) for v in values):
            merged[key] = _mean_dicts(values)
        else:
            merged[key] = mean(float(v) for v in values)
    return merged


def _write(
    bench: BenchResults, records: list[dict[str, Any]], dataset: BenchDataset, limit: int | None
) -> None:
    bench.results_path.write_text(json.dumps(bench.results, indent=1) + "\n")
    with bench.questions_path.open("w") as handle:
        for record in records:
            handle.write(json.dumps(record, default=str) + "\n")
    info = {
        "dataset_name": dataset.name,
        "format": dataset.format,
        "content_hash": dataset.content_hash,
        "scenarios": len(dataset.scenarios),
        "questions_in_file": dataset.n_questions(),
        "limit": limit,
        "llm_model": bench.llm_model,
        "notes": bench.notes,
        "stores_built_in_this_run": bench.ingests_run,
        "finished_at": datetime.now().isoformat(timespec="seconds"),
    }
    (bench.out_dir / "run_info.json").write_text(json.dumps(info, indent=1) + "\n")
    bench.report_path.write_text(markdown_report(bench.results, bench.notes, bench.llm_model))
    plot_recall_by_category(bench.results, bench.chart_path)
