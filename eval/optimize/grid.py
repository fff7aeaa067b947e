"""`--optimizer grid`: a small coordinate search over the offline twins' thresholds.

Every point is the shipped defaults with one or two values changed: the defaults, then
each axis value on its own, then — when two or more axes improved on their own — one
point combining each improving axis's best value. That is at most 12 points, each scored
on the train scenarios; only the defaults and the winner are scored on dev. The winner
is the best train score (ties keep the earlier point, so the defaults win a tie).

Planner points are scored by the offline retrieval controller over one fused store per
scenario (built once, reused by every point); fusion points re-fuse every train scenario
under the point's thresholds and score purity and downstream recall.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from eval.bench_stores import BuiltStores
from eval.fusion_metrics import fusion_stats
from eval.metrics import evidence_recall, mean
from eval.optimize.dspy_opt import evaluate_program
from eval.optimize.examples import spread_questions
from eval.optimize.metrics import ScoreCard, combine, recall_metric, score_card
from eval.optimize.stores import ScenarioStores, fused_mode
from eval.optimize.students import RetrievalStudent
from graphs.retrieval.run import ControllerOptions, retrieve
from memory.errors import ConfigurationError
from memory.formats.models import BenchScenario
from signatures.programs import FusionPolicy, PlannerPolicy, using_policies

MAX_POINTS = 12
Point = dict[str, Any]  # "group.field" → value; {} is the shipped defaults


@dataclass(frozen=True)
class Axis:
    """One threshold and the values tried besides its default (`group.field`)."""

    name: str
    values: tuple[Any, ...]

    @property
    def group(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def field(self) -> str:
        return self.name.split(".", 1)[1]


# Planner: search-config knobs (`search.`) and offline-planner knobs (`planner.`). A confidence
# under the search's 0.6 constraint threshold switches that constraint off.
PLANNER_AXES: tuple[Axis, ...] = (
    Axis("planner.quota_default", (10, 20)),
    Axis("search.temporal_neighbor_keep", (10,)),
    Axis("search.seed_pool", (20, 45)),
    Axis("search.date_boost", (0.1, 0.6)),  # the window prior (a window never filters)
    Axis("search.semantic_threshold", (0.9,)),  # ρ_S = 0.8 edges are mostly boilerplate
    Axis("planner.timeline_confidence", (0.5,)),
    Axis("planner.neighbor_confidence", (0.5,)),
    Axis("planner.causal_confidence", (0.5,)),  # causal edges walked both ways for every question
)
# Fusion: `FusionPolicyConfig` thresholds (`policy.`).
FUSION_AXES: tuple[Axis, ...] = (
    Axis("policy.segment_gap_minutes", (15.0, 60.0)),
    Axis("policy.update_min_similarity", (0.25, 0.45)),
    Axis("policy.same_moment_minutes", (5.0, 20.0)),
    Axis("policy.create_min_similarity", (0.2, 0.4)),
    Axis("policy.causal_min_similarity", (0.4, 0.6)),
)
AXES: dict[str, tuple[Axis, ...]] = {"planner": PLANNER_AXES, "fusion": FUSION_AXES}
GROUPS: dict[str, tuple[str, ...]] = {"planner": ("search", "planner"), "fusion": ("policy",)}


def default_values(target: str, axes: Sequence[Axis]) -> dict[str, Any]:
    """The shipped default of each axis (read from the config classes, never restated)."""
    from memory.search.config import SearchConfig
    from signatures.planning_offline import OfflinePlannerConfig

    configs: dict[str, Any] = {"search": SearchConfig(), "planner": OfflinePlannerConfig()}
    if target == "fusion":
        from signatures.fusion_offline import FusionPolicyConfig

        configs["policy"] = FusionPolicyConfig()
    return {a.name: getattr(configs[a.group], a.field) for a in axes}


def policy_of(target: str, point: Point) -> PlannerPolicy | FusionPolicy:
    """The tuned-policy object for a grid point (validated field names and values)."""
    groups: dict[str, dict[str, Any]] = {g: {} for g in GROUPS[target]}
    for name, value in point.items():
        group, _, name_field = name.partition(".")
        if group not in groups:
            raise ConfigurationError(f"grid axis {name!r} does not belong to target {target!r}")
        groups[group][name_field] = value
    if target == "planner":
        return PlannerPolicy(search=groups["search"], planner=groups["planner"])
    return FusionPolicy(policy=groups["policy"])


def sweep_points(target: str, axes: Sequence[Axis]) -> list[Point]:
    """The defaults, then each axis value on its own (values equal to the default skipped)."""
    defaults = default_values(target, axes)
    points: list[Point] = [{}]
    for axis in axes:
        points += [{axis.name: v} for v in axis.values if v != defaults[axis.name]]
    return points


def combined_point(
    axes: Sequence[Axis], scored: Sequence[tuple[Point, float]], baseline: float
) -> Point | None:
    """Each axis's best value among its single-axis points that beat the defaults, together;
    None unless at least two axes improved (one axis alone is already a scored point)."""
    best: dict[str, tuple[float, Any]] = {}
    for point, score in scored:
        if len(point) != 1 or score <= baseline:
            continue
        ((name, value),) = point.items()
        if name not in best or score > best[name][0]:
            best[name] = (score, value)
    if len(best) < 2:
        return None
    return {a.name: best[a.name][1] for a in axes if a.name in best}


@dataclass
class GridRun:
    """Train scores of every point; train and dev scores of the defaults and the winner."""

    target: str
    defaults: dict[str, Any]
    points: list[tuple[Point, ScoreCard]] = field(default_factory=list)
    best: Point = field(default_factory=dict)
    baseline_train: ScoreCard | None = None
    baseline_dev: ScoreCard | None = None
    best_train: ScoreCard | None = None
    best_dev: ScoreCard | None = None

    def beats_defaults(self) -> bool:
        """Better than the defaults on train and not worse on dev: worth shipping as defaults."""
        if not self.best or None in (
            self.baseline_train,
            self.best_train,
            self.baseline_dev,
            self.best_dev,
        ):
            return False
        assert self.baseline_train and self.best_train and self.baseline_dev and self.best_dev
        return (self.best_train.score or 0.0) > (self.baseline_train.score or 0.0) and (
            self.best_dev.score or 0.0
        ) >= (self.baseline_dev.score or 0.0)


PointScorer = Callable[[Point, str], ScoreCard]  # (point, "train" | "dev") → score card


def run_grid(
    target: str,
    score: PointScorer,
    axes: Sequence[Axis] | None = None,
    max_points: int = MAX_POINTS,
    console: Console | None = None,
    progress: bool = True,
) -> GridRun:
    """Score the sweep (and the combined point) on train; the defaults and winner on dev.

    One line per point goes to `console` as it finishes (each point's own progress bar
    shows while it runs)."""
    axes = tuple(axes if axes is not None else AXES[target])
    console = console or Console(stderr=True, quiet=not progress)
    run = GridRun(target=target, defaults=default_values(target, axes))
    points = sweep_points(target, axes)[:max_points]
    started = time.perf_counter()

    def scored(point: Point) -> None:
        card = score(point, "train")
        run.points.append((point, card))
        console.print(
            f"[{len(run.points)}] {describe(point):<52} train {card.score or 0.0:.4f}  "
            f"({time.perf_counter() - started:.0f}s)"
        )

    for point in points:
        scored(point)
    baseline = run.points[0][1].score or 0.0
    extra = combined_point(axes, [(p, c.score or 0.0) for p, c in run.points], baseline)
    if extra is not None and len(run.points) < max_points:
        scored(extra)
    run.baseline_train = run.points[0][1]
    best_point, best_card = max(run.points, key=lambda pc: pc[1].score or 0.0)  # first wins ties
    run.best, run.best_train = best_point, best_card
    run.baseline_dev = score({}, "dev")
    run.best_dev = score(best_point, "dev") if best_point else run.baseline_dev
    return run


def describe(point: Point) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items()) or "defaults"


# --- scorers -------------------------------------------------------------------------------


def planner_scorer(
    examples: dict[str, Sequence[Any]],
    stores: ScenarioStores,
    options: ControllerOptions,
    k: int,
    progress: bool = True,
) -> PointScorer:
    """Evidence recall@k of the offline controller under the point's planner policy."""
    student = RetrievalStudent("planner", stores, options, k)

    def score(point: Point, side: str) -> ScoreCard:
        policy = policy_of("planner", point)
        assert isinstance(policy, PlannerPolicy)
        with using_policies(planner=policy):
            return evaluate_program(
                student,
                examples[side],
                recall_metric,
                label=f"{side}: {describe(point)}",
                progress=progress,
            )

    return score


def fusion_scorer(
    scenarios: dict[str, Sequence[BenchScenario]],
    cache: BuiltStores,
    options: ControllerOptions,
    k: int,
    limit: int | None,
) -> PointScorer:
    """Re-fuse each scenario under the point's thresholds; score purity and downstream recall.

    The retrieval side runs with the planner's shipped defaults, so a fusion point is never
    credited (or blamed) for a tuned planner policy lying in the programs folder.
    """

    def score(point: Point, side: str) -> ScoreCard:
        policy = policy_of("fusion", point)
        assert isinstance(policy, FusionPolicy)
        mode = fused_mode(policy)
        purities: list[float] = []
        rows: list[tuple[str, float]] = []
        for scenario in scenarios[side]:
            prepared = cache.prepare(scenario, mode)
            try:
                stats = fusion_stats(prepared.store, scenario.labelled_events)
                purities.append(float(stats["fusion_purity"]))
                questions = spread_questions(scenario.questions, limit)
                with using_policies(planner=PlannerPolicy(), fusion=policy):
                    for q in questions:
                        result = retrieve(
                            prepared.store,
                            q.question,
                            question_time=q.time,
                            requester=q.user,
                            admin=True,  # the whole memory, as `bench` reads by default
                            k=k,
                            options=options,
                        )
                        rows.append(
                            (
                                q.category,
                                evidence_recall(q.evidence_ids, result.event_ids[:k]) or 0.0,
                            )
                        )
            finally:
                close = getattr(prepared.store, "close", None)
                if callable(close):
                    close()
        purity = mean(purities) or 0.0
        recall = mean(v for _, v in rows)
        return score_card(rows, {"purity": purity, "recall": recall}, score=combine(purity, recall))

    return score
