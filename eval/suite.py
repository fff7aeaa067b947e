"""`bench --suite`: the same systems on several data sources, each against the best baseline.

A change tuned on one generated file can win there and lose on data it was not written
for, and `hybrid` is not the strongest plain retriever everywhere (dense-only naive_rag
beats it on several hand-written sources). So the suite runs every source through
`run_bench` (one output folder per source, one shared store cache) and reports, per
system and source, the gap to the best baseline (eval.baseline) overall and in the
worst category — the number that decides, not the average — and, per source, what each
ablated part of memfuse adds.

Sources, in this order:

- `seed<N>` for every seed (default 7 and 11): the generated benchmark, written once by
  the synth code to `<bench_dir>/memfusebench-seed<N>-<realism>.json` and reused afterwards
  (delete the file to regenerate after a generator change). Seed 7 is `memfuse synth`'s default;
  seed 11 is held out — never used for tuning — so it shows whether a gain on seed 7
  generalises to other households.
- `seed7-person-blind` (only with `person_blind`): the seed-7 file with the people tags
  of person-blind devices removed (eval.person_blind), rewritten on every run.
- `household_dev`, `household_dev2`: the hand-written dev households
  (`../shared/dev/*.json` next to the repository, named by file stem); a missing file is
  skipped with a note, not an error.
- `conversation-dev`: three long hand-written conversations in LoCoMo format
  (`eval/devsets/conversation_dev.json`, written without reading the code), the
  conversational check; like `dev`, for checking, never for fitting.
- `locomo-<stem>` for every LoCoMo file given.
- `<stem>` for any other benchmark file given (MemFuseBench or LoCoMo, detected).

Gaps are `system − best baseline` evidence recall@k on the same questions (the best overall
for Overall, the best in each category for that category). Categories a dataset reports
apart (LoCoMo adversarial) are shown but left out of the gaps, as they are left out of
Overall.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from eval.baseline import (
    BASELINES,
    ablation_margins,
    best_baseline,
    gaps_to_best_baseline,
    is_baseline,
    recall_table,
)
from eval.bench import BenchResults, run_bench
from eval.report import fusion_table, suite_markdown
from memfuse.settings import MemFuseSettings, load_settings
from memory.formats.models import DatasetFormat

REFERENCE = "best baseline"  # the best of eval.baseline.BASELINES, per source and category
DEFAULT_SYSTEMS: tuple[str, ...] = (
    "naive_rag", "bm25", "hybrid", "memfuse", "memfuse_no_ar", "memfuse_no_fusion",
    "memfuse_no_moments",
)  # fmt: skip
DEFAULT_SEEDS: tuple[int, ...] = (7, 11)
HELD_OUT_SEED = 11  # never used for tuning
PERSON_BLIND_SEED = 7
DEFAULT_SCENARIOS = 6
REPO_ROOT = Path(__file__).resolve().parents[1]
DEV_DIR = REPO_ROOT.parent / "shared" / "dev"
DEV_FILES: tuple[Path, ...] = (DEV_DIR / "household_dev.json", DEV_DIR / "household_dev2.json")
CONVERSATION_DEV_FILE = REPO_ROOT / "eval" / "devsets" / "conversation_dev.json"
EPS = 1e-9  # a gap closer to zero than this is a tie, not a loss


@dataclass(frozen=True)
class Source:
    """One data source: its report name, its file and (when known) its format."""

    name: str
    path: Path
    format: DatasetFormat | None = None


@dataclass
class SuiteRequest:
    """What to run; defaults are the suite the maintainers read (seeds 7 and 11, dev)."""

    systems: Sequence[str] = DEFAULT_SYSTEMS
    seeds: Sequence[int] = DEFAULT_SEEDS
    locomo: Sequence[Path] = ()
    datasets: Sequence[Path] = ()
    dev_files: Sequence[Path] = DEV_FILES  # hand-written households; empty: none
    conversation_dev: Path | None = CONVERSATION_DEV_FILE  # LoCoMo-format chats; None: skip
    person_blind: bool = False
    scenarios: int = DEFAULT_SCENARIOS
    k: int = 20
    limit: int | None = None
    out_dir: Path = Path("bench-out")
    data_dir: Path | None = None  # shared stores; default <out_dir>/stores
    bench_dir: Path = Path("data")  # generated benchmark files


@dataclass
class SuiteResults:
    """suite.json's content and where the suite wrote it."""

    summary: dict[str, Any]
    out_dir: Path
    runs: dict[str, BenchResults] = field(default_factory=dict)

    @property
    def json_path(self) -> Path:
        return self.out_dir / "suite.json"

    @property
    def markdown_path(self) -> Path:
        return self.out_dir / "suite.md"


# --- sources --------------------------------------------------------------------------


def with_reference(systems: Sequence[str]) -> list[str]:
    """The systems, deduplicated, with every missing baseline appended: the bar is the best
    of them, so each must run."""
    names = list(dict.fromkeys(s.strip() for s in systems if s.strip()))
    return [*names, *(b for b in BASELINES if b not in names)]


def seed_file(bench_dir: Path, seed: int, scenarios: int = DEFAULT_SCENARIOS) -> Path:
    """Cache path of one generated benchmark: the generator's realism is in the name (a file
    an older generator wrote is never taken for the current one), and so is the size unless
    it is the default."""
    from eval.synth.realism import DEFAULT_REALISM

    size = "" if scenarios == DEFAULT_SCENARIOS else f"-{scenarios}sc"
    return Path(bench_dir) / f"memfusebench-seed{seed}-{DEFAULT_REALISM}{size}.json"


def ensure_seed_file(bench_dir: Path, seed: int, scenarios: int, console: Console) -> Path:
    """The generated benchmark of `seed` as `memfuse synth` publishes it (verified and
    corrected), synthesised only when its file does not exist yet (synthesis takes minutes;
    the file is deterministic for a seed and size)."""
    path = seed_file(bench_dir, seed, scenarios)
    if path.is_file():
        return path
    from eval.synth.command import synth_command

    console.print(escape(f"suite: generating seed {seed} ({scenarios} scenarios) -> {path}"))
    synth_command(scenarios=scenarios, seed=seed, out=path)  # verified, as `memfuse synth`
    return path


def person_blind_file(seed_path: Path) -> Path:
    """The person-blind copy of a generated file, rewritten each run so it follows the table
    in eval.person_blind rather than whatever an old run wrote."""
    from eval.person_blind import strip_person_blind
    from memory.formats.memfusebench_io import dump, load

    out = seed_path.with_name(f"{seed_path.stem}-person-blind.json")
    dump(strip_person_blind(load(seed_path)), out)
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "source"


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or `name-2`, `name-3`... so two files with one stem get two folders."""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}-{n}"
    taken.add(candidate)
    return candidate


def collect_sources(request: SuiteRequest, console: Console) -> tuple[list[Source], list[str]]:
    """The sources to run, in report order, and a note for each one skipped."""
    sources: list[Source] = []
    notes: list[str] = []
    taken: set[str] = set()

    def add(name: str, path: Path, fmt: DatasetFormat | None = None) -> None:
        sources.append(Source(_unique(_slug(name), taken), Path(path), fmt))

    bench_dir = Path(request.bench_dir)
    for seed in dict.fromkeys(request.seeds):
        add(
            f"seed{seed}",
            ensure_seed_file(bench_dir, seed, request.scenarios, console),
            "memfusebench",
        )
    if request.person_blind:
        seed_path = ensure_seed_file(bench_dir, PERSON_BLIND_SEED, request.scenarios, console)
        add(f"seed{PERSON_BLIND_SEED}-person-blind", person_blind_file(seed_path), "memfusebench")
    for path in request.dev_files:
        if Path(path).is_file():
            add(Path(path).stem, Path(path), "memfusebench")
        else:
            notes.append(f"dev household skipped: {path} does not exist")
    if request.conversation_dev is not None and Path(request.conversation_dev).is_file():
        add("conversation-dev", Path(request.conversation_dev), "locomo")
    for path in request.locomo:
        add(f"locomo-{Path(path).stem}", Path(path), "locomo")
    for path in request.datasets:
        add(Path(path).stem, Path(path))
    return sources, notes


# --- gaps -----------------------------------------------------------------------------


def source_gaps(table: Mapping[str, Any], system: str) -> dict[str, Any]:
    """One system's gaps to the best baseline on one source (eval.baseline)."""
    return gaps_to_best_baseline(table, system)


def gap_summary(tables: Mapping[str, Mapping[str, Any]], systems: Sequence[str]) -> dict[str, Any]:
    """Gaps of every system that is not a baseline, on every source."""
    return {
        system: {source: source_gaps(table, system) for source, table in tables.items()}
        for system in systems
        if not is_baseline(system)
    }


def losses(gaps_by_source: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, float]]:
    """Every `source/category` and `source/overall` below the best baseline, worst first."""
    found: list[tuple[str, float]] = []
    for source, gaps in gaps_by_source.items():
        found += [(f"{source}/{c}", g) for c, g in gaps["by_category"].items() if g < -EPS]
        if gaps["overall"] is not None and gaps["overall"] < -EPS:
            found.append((f"{source}/overall", gaps["overall"]))
    return sorted(found, key=lambda item: item[1])


def verdict(gaps_by_source: Mapping[str, Mapping[str, Any]]) -> str:
    """One line: "never below the best baseline", or where it is below and by how much."""
    below = losses(gaps_by_source)
    if not below:
        return f"never below the {REFERENCE}"
    return f"below the {REFERENCE} on " + ", ".join(
        f"{where} by {-gap:.3f}" for where, gap in below
    )


# --- the run --------------------------------------------------------------------------


def _shared_embedder(systems: Sequence[str], settings: MemFuseSettings, stores: Path) -> Any:
    """One embedder for every source (run_bench would otherwise load the model per source);
    None when no chosen system needs a store."""
    from eval.systems import INGESTORS, resolve_systems

    if not any(INGESTORS[s.ingest_mode].needs_store for s in resolve_systems(systems)):
        return None
    from memory.embeddings import make_embedder
    from memory.opener import embedding_config

    stores.mkdir(parents=True, exist_ok=True)
    return make_embedder(embedding_config(settings, stores))


def run_suite(
    request: SuiteRequest,
    *,
    settings: MemFuseSettings | None = None,
    embedder: Any = None,
    llm: MemFuseSettings | bool | None = None,
    progress: bool = True,
    console: Console | None = None,
) -> SuiteResults:
    """Run every source through `run_bench` into `<out>/<source>/`, then write suite.json and
    suite.md. `embedder` and `llm` are passed to run_bench (tests inject a small embedder)."""
    console = console or Console(stderr=True, quiet=not progress)
    settings = settings or load_settings()
    out = Path(request.out_dir)
    stores = Path(request.data_dir) if request.data_dir is not None else out / "stores"
    systems = with_reference(request.systems)
    sources, notes = collect_sources(request, console)
    added = [b for b in systems if b not in request.systems]
    if added:
        notes.insert(0, f"{', '.join(added)} added to the systems: the bar is the best baseline")
    for note in notes:
        console.print(f"[yellow]suite: {escape(note)}[/yellow]")
    if embedder is None and sources:
        embedder = _shared_embedder(systems, settings, stores)
    runs: dict[str, BenchResults] = {}
    for source in sources:
        console.print(escape(f"suite: {source.name}: {source.path}"))
        runs[source.name] = run_bench(
            source.path, format=source.format, systems=systems, k=request.k,
            limit=request.limit, out_dir=out / source.name, data_dir=stores, progress=progress,
            llm=llm, settings=settings, embedder=embedder, console=console,
        )  # fmt: skip
    summary = _summary(request, systems, sources, runs, notes)
    suite = SuiteResults(summary=summary, out_dir=out, runs=runs)
    out.mkdir(parents=True, exist_ok=True)
    suite.json_path.write_text(json.dumps(summary, indent=1) + "\n")
    suite.markdown_path.write_text(suite_markdown(summary))
    return suite


LATENCY_KEYS = ("search_p50_ms", "search_p95_ms", "from_text_p50_ms", "from_text_p95_ms")


def latency_table(results: Mapping[str, Any]) -> dict[str, dict[str, float | None]]:
    """Per system, its Overall search and from-text latency in ms (`eval.bench_queries`)."""
    return {
        name: {key: block["overall"].get(key) for key in LATENCY_KEYS}
        for name, block in results["systems"].items()
    }


def _n_questions(run: BenchResults) -> int | None:
    """Questions counted in the source's Overall (apart categories left out)."""
    return run.results["systems"][BASELINES[-1]]["overall"].get("n_questions")


def _summary(
    request: SuiteRequest,
    systems: list[str],
    sources: list[Source],
    runs: Mapping[str, BenchResults],
    notes: list[str],
) -> dict[str, Any]:
    """suite.json: per-source recall tables with their best baselines and ablation margins,
    the gaps to the best baseline and one verdict per system."""
    tables = {name: recall_table(run.results) for name, run in runs.items()}
    gaps = gap_summary(tables, systems)
    return {
        "k": request.k,
        "limit": request.limit,
        "reference": REFERENCE,
        "systems": systems,
        "held_out_seed": HELD_OUT_SEED,
        "sources": [
            {
                "name": s.name,
                "path": str(s.path),
                "out_dir": str(runs[s.name].out_dir),
                "n_questions": _n_questions(runs[s.name]),
                **tables[s.name],
                "best_baseline": best_baseline(tables[s.name]),
                "ablation_margins": ablation_margins(tables[s.name]),
                "context_changes": runs[s.name].results.get("context_changes", {}),
                "later_finds": runs[s.name].results.get("later_finds", {}),
                "missing_evidence": runs[s.name].results.get("missing_evidence", {}),
                "latency": latency_table(runs[s.name].results),
                "fusion": fusion_table(runs[s.name].results),
            }
            for s in sources
        ],
        "gaps": gaps,
        "verdicts": {system: verdict(by_source) for system, by_source in gaps.items()},
        "notes": notes,
    }
