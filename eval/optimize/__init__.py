"""`memfuse optimize`: tune a decision against the benchmark and save the result with a manifest.

Targets and what each optimiser writes (under `programs/` by default):

- planner: bootstrap / mipro / gepa compile `PlanRetrievalRound` → `plan_retrieval_round.json`;
  grid tunes search and offline-planner overrides → `planner_policy.json`.
- judge: bootstrap / mipro / gepa compile `JudgeEvidence` → `judge_evidence.json` (no grid).
- fusion: bootstrap / mipro / gepa compile the fusion agent → `fusion_agent.json`; grid tunes
  `FusionPolicyConfig` overrides → `fusion_policy.json`.

bootstrap, mipro and gepa need an LLM (`MEMFUSE_LLM_MODEL`); grid runs offline.
Planner and judge are scored by evidence recall@k of the controller's final context;
fusion by the mean of fusion purity and downstream recall. Train and dev are split by
scenario (`splits.py`). Results load at run time from `MEMFUSE_PROGRAMS_DIR` (or a
per-target path), see `signatures.programs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.console import Console

from eval.optimize.dspy_opt import DSPY_OPTIMIZERS, DSPyOptions, compile_student, evaluate_program
from eval.optimize.examples import fusion_examples, question_examples, scenarios_by_id
from eval.optimize.grid import (
    AXES,
    Axis,
    GridRun,
    describe,
    fusion_scorer,
    planner_scorer,
    policy_of,
    run_grid,
)
from eval.optimize.manifest import (
    base_manifest,
    defaults_update,
    save_policy,
    save_program,
    write_manifest,
)
from eval.optimize.metrics import ScoreCard, fusion_metric, recall_metric
from eval.optimize.splits import Split, split_scenarios
from eval.optimize.stores import ScenarioStores, fused_mode, store_cache
from eval.optimize.students import FusionStudent, RetrievalStudent
from graphs.retrieval.run import ControllerOptions
from memfuse.settings import MemFuseSettings, load_settings
from memory.errors import ConfigurationError
from memory.formats.loader import load_dataset
from memory.formats.models import BenchDataset
from signatures.lm import lm_from_settings
from signatures.programs import (
    POLICY_FILES,
    PROGRAM_TARGETS,
    PROGRAMS,
    FusionPolicy,
    predictor_versions,
    target_version,
)

__all__ = [
    "OPTIMIZERS",
    "DSPyOptions",
    "OptimizeRequest",
    "OptimizeResult",
    "optimize",
]

Target = Literal["planner", "judge", "fusion"]
Optimizer = Literal["bootstrap", "mipro", "gepa", "grid"]
OPTIMIZERS: tuple[str, ...] = (*DSPY_OPTIMIZERS, "grid")


@dataclass(kw_only=True)
class OptimizeRequest:
    """One optimisation run (the CLI's flags)."""

    target: Target
    optimizer: Optimizer
    dataset: Path
    train_scenarios: str | list[str] | None = None  # ids; default: first four
    dev_scenarios: str | list[str] | None = None  # ids; default: last two
    out: Path | None = None  # default: programs/<standard file name of the target>
    k: int = 20  # context size the recall is measured at
    limit: int | None = None  # questions (fusion: episode slices) per scenario
    data_dir: Path | None = None  # cached stores (default: <MEMFUSE_DATA_DIR>/optimize-stores)
    dspy: DSPyOptions = field(default_factory=DSPyOptions)
    axes: tuple[Axis, ...] | None = None  # grid axes (default: grid.AXES[target])
    settings: MemFuseSettings | None = None
    lm: Any = None  # a DSPy LM to use instead of the configured one (tests)
    embedder: Any = None  # an embedder to use instead of the configured one (tests)
    progress: bool = True


@dataclass
class OptimizeResult:
    """Where the result went and what its manifest says."""

    program_path: Path
    manifest_path: Path
    manifest: dict[str, Any]
    grid: GridRun | None = None


def default_out(target: str, optimizer: str) -> Path:
    name = POLICY_FILES[target] if optimizer == "grid" else PROGRAMS[target].filename
    return Path("programs") / name


def _check(request: OptimizeRequest) -> None:
    if request.target not in PROGRAM_TARGETS:
        raise ConfigurationError(
            f"--target: expected one of {', '.join(PROGRAM_TARGETS)}, got {request.target!r}"
        )
    if request.optimizer not in OPTIMIZERS:
        raise ConfigurationError(
            f"--optimizer: expected one of {', '.join(OPTIMIZERS)}, got {request.optimizer!r}"
        )
    if request.optimizer == "grid" and request.target not in AXES:
        raise ConfigurationError(
            f"--optimizer grid tunes the offline twins of {' and '.join(AXES)}; the offline "
            f"{request.target} has no thresholds to search (use bootstrap, mipro or gepa)"
        )
    if request.k < 1:
        raise ConfigurationError(f"-k must be at least 1, got {request.k}")
    if request.limit is not None and request.limit < 1:
        raise ConfigurationError(f"--limit must be at least 1, got {request.limit}")
    out = request.out
    if out is not None and out.suffix != ".json":
        raise ConfigurationError(f"--out must name a .json file, got {str(out)!r}")


def optimize(request: OptimizeRequest, console: Console | None = None) -> OptimizeResult:
    """Run one optimisation and write the program (or policy) and its manifest."""
    _check(request)
    console = console or Console(stderr=True, quiet=not request.progress)
    settings = request.settings or load_settings()
    lm = None
    if request.optimizer != "grid":
        lm = request.lm if request.lm is not None else lm_from_settings(settings)
        if lm is None:
            raise ConfigurationError(
                f"--optimizer {request.optimizer} needs an LLM: set MEMFUSE_LLM_MODEL (and "
                "MEMFUSE_LLM_BASE_URL for a local server), or use --optimizer grid"
            )
    dataset = load_dataset(request.dataset)
    split = split_scenarios(
        [s.scenario_id for s in dataset.scenarios], request.train_scenarios, request.dev_scenarios
    )
    out = request.out or default_out(request.target, request.optimizer)
    data_dir = request.data_dir or Path(settings.data_dir) / "optimize-stores"
    cache = store_cache(dataset, data_dir, settings, request.embedder, request.progress)
    manifest = base_manifest(
        target=request.target,
        optimizer=request.optimizer,
        program=out,
        dataset=request.dataset,
        train=split.train,
        dev=split.dev,
        k=request.k,
        limit=request.limit,
        lm=lm,
    )
    console.print(
        f"{request.target} · {request.optimizer}: train {', '.join(split.train)}; "
        f"dev {', '.join(split.dev)}"
    )
    if request.optimizer == "grid":
        return _grid(request, dataset, split, cache, settings, out, manifest, console)
    return _dspy(request, dataset, split, cache, settings, lm, out, manifest)


# --- grid --------------------------------------------------------------------------------------


def _grid(
    request: OptimizeRequest,
    dataset: BenchDataset,
    split: Split,
    cache: Any,
    settings: MemFuseSettings,
    out: Path,
    manifest: dict[str, Any],
    console: Console,
) -> OptimizeResult:
    options = ControllerOptions(policy="offline", settings=settings)
    if request.target == "planner":
        scenarios = scenarios_by_id(dataset, [*split.train, *split.dev])
        with ScenarioStores(cache, scenarios, fused_mode(FusionPolicy())) as stores:
            examples = {
                side: question_examples(dataset, ids, request.limit)
                for side, ids in (("train", split.train), ("dev", split.dev))
            }
            scorer = planner_scorer(examples, stores, options, request.k, request.progress)
            run = run_grid(
                "planner", scorer, request.axes, console=console, progress=request.progress
            )
    else:
        _require_labels(dataset)
        sides = {
            "train": scenarios_by_id(dataset, split.train),
            "dev": scenarios_by_id(dataset, split.dev),
        }
        scorer = fusion_scorer(sides, cache, options, request.k, request.limit)
        run = run_grid("fusion", scorer, request.axes, console=console, progress=request.progress)
    policy = policy_of(request.target, run.best)
    save_policy(policy.model_dump(mode="json"), out)
    manifest.update(
        {
            "signature_version": None,
            "policy": policy.model_dump(mode="json"),
            "defaults": run.defaults,
            "best": run.best,
            "best_label": describe(run.best),
            "beats_defaults": run.beats_defaults(),
            "grid": [{"point": p, "train": c.score, "parts": c.parts} for p, c in run.points],
            "scores": _scores(run.baseline_train, run.best_train, run.baseline_dev, run.best_dev),
        }
    )
    manifest["defaults_update"] = defaults_update(manifest)
    path = write_manifest(out, manifest)
    return OptimizeResult(out, path, manifest, run)


def _require_labels(dataset: BenchDataset) -> None:
    if dataset.format != "memfusebench":
        raise ConfigurationError(
            "--target fusion needs a MemFuseBench file: purity is measured against its "
            f"storyline labels, and {dataset.format} has none"
        )


def _labelled_bench(path: Path, dataset: BenchDataset) -> Any:
    _require_labels(dataset)
    from memory.formats.memfusebench_io import load

    return load(path)


# --- DSPy --------------------------------------------------------------------------------------


def _dspy(
    request: OptimizeRequest,
    dataset: BenchDataset,
    split: Split,
    cache: Any,
    settings: MemFuseSettings,
    lm: Any,
    out: Path,
    manifest: dict[str, Any],
) -> OptimizeResult:
    programs_dir = str(settings.programs_dir) if settings.programs_dir else None
    stores: ScenarioStores | None = None
    if request.target == "fusion":
        bench = _labelled_bench(request.dataset, dataset)
        examples = {
            side: fusion_examples(bench, dataset, ids, request.limit)
            for side, ids in (("train", split.train), ("dev", split.dev))
        }
        student: Any = FusionStudent(
            cache.embedder, cache.data_dir / "fusion-slices", request.k, programs_dir
        )
        metric = fusion_metric
    else:
        scenarios = scenarios_by_id(dataset, [*split.train, *split.dev])
        stores = ScenarioStores(cache, scenarios, fused_mode(FusionPolicy()))
        examples = {
            side: question_examples(dataset, ids, request.limit)
            for side, ids in (("train", split.train), ("dev", split.dev))
        }
        options = ControllerOptions(policy="llm", settings=settings, lm=lm)
        student = RetrievalStudent(request.target, stores, options, request.k, programs_dir)
        metric = recall_metric
    try:
        before = {
            side: evaluate_program(
                student, examples[side], metric, lm, f"{side} before", request.progress
            )
            for side in ("train", "dev")
        }
        compiled = compile_student(
            request.optimizer, student, examples["train"], metric, lm, request.dspy
        )
        after = {
            side: evaluate_program(
                compiled, examples[side], metric, lm, f"{side} after", request.progress
            )
            for side in ("train", "dev")
        }
    finally:
        if stores is not None:
            stores.close()
    module = compiled.target_module()
    save_program(module, out)
    manifest.update(
        {
            "signature_version": target_version(request.target),
            "signature_versions": predictor_versions(PROGRAMS[request.target].build()),
            "options": {k: v for k, v in vars(request.dspy).items()},
            "demos": {name: len(p.demos) for name, p in module.named_predictors()},
            "scores": _scores(before["train"], after["train"], before["dev"], after["dev"]),
        }
    )
    path = write_manifest(out, manifest)
    return OptimizeResult(out, path, manifest)


def _scores(
    train_before: ScoreCard | None,
    train_after: ScoreCard | None,
    dev_before: ScoreCard | None,
    dev_after: ScoreCard | None,
) -> dict[str, Any]:
    def d(card: ScoreCard | None) -> dict[str, Any] | None:
        return card.as_dict() if card is not None else None

    return {
        "train": {"before": d(train_before), "after": d(train_after)},
        "dev": {"before": d(dev_before), "after": d(dev_after)},
    }
