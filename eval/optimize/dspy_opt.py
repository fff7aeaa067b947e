"""Compile a student with DSPy's BootstrapFewShot, MIPROv2 or GEPA, and score programs.

All three share `compile(student, trainset=...)`. Only train examples go in: MIPROv2 and
GEPA carve their own validation set out of them, so the dev scenarios stay unseen until
the before/after scores are taken. Labelled demos are off (`max_labeled_demos=0`): a
benchmark example carries gold evidence ids, not a plan or a judgement, so the only
useful demos are bootstrapped traces of runs that scored well. Evaluation runs on one
thread: the stores and the 2-core machines this runs on gain nothing from more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Literal

import dspy
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from eval.optimize.metrics import ScoreCard, as_float, fusion_parts, score_card
from memory.errors import ConfigurationError

DSPY_OPTIMIZERS: tuple[str, ...] = ("bootstrap", "mipro", "gepa")
Budget = Literal["light", "medium", "heavy"]


@dataclass(frozen=True, kw_only=True)
class DSPyOptions:
    """Knobs of the DSPy optimisers (small defaults; the LLM calls are the cost)."""

    max_demos: int = 4  # bootstrapped demos per predictor
    metric_threshold: float = 0.5  # a trace becomes a demo when its run scored at least this
    auto: Budget | None = "light"  # MIPROv2 / GEPA budget preset (None: use the numbers below)
    num_candidates: int | None = None  # MIPROv2 instruction/demo candidates (auto=None)
    num_trials: int | None = None  # MIPROv2 search trials (auto=None)
    max_metric_calls: int | None = None  # GEPA budget (auto=None)
    seed: int = 9


def build_optimizer(name: str, metric: Callable[..., Any], lm: Any, options: DSPyOptions) -> Any:
    """The teleprompter for `name`, configured for single-threaded, label-free demos."""
    if name == "bootstrap":
        return dspy.BootstrapFewShot(
            metric=metric,
            metric_threshold=options.metric_threshold,
            max_bootstrapped_demos=options.max_demos,
            max_labeled_demos=0,
            max_rounds=1,
        )
    if name == "mipro":
        explicit = options.num_candidates is not None or options.num_trials is not None
        if explicit and (options.num_candidates is None or options.num_trials is None):
            raise ConfigurationError(
                "mipro: give both --num-candidates and --num-trials, or neither"
            )
        return dspy.MIPROv2(
            metric=metric,
            prompt_model=lm,
            task_model=lm,
            max_bootstrapped_demos=options.max_demos,
            max_labeled_demos=0,
            auto=None if explicit else (options.auto or "light"),
            num_candidates=options.num_candidates,
            num_threads=1,
            seed=options.seed,
            metric_threshold=options.metric_threshold,
        )
    if name == "gepa":
        budget: dict[str, Any] = (
            {"max_metric_calls": options.max_metric_calls}
            if options.max_metric_calls is not None
            else {"auto": options.auto or "light"}
        )
        return dspy.GEPA(
            metric=metric, reflection_lm=lm, num_threads=1, seed=options.seed, **budget
        )
    raise ConfigurationError(
        f"unknown DSPy optimizer {name!r} (expected one of: {', '.join(DSPY_OPTIMIZERS)})"
    )


def compile_student(
    name: str,
    student: dspy.Module,
    trainset: Sequence[dspy.Example],
    metric: Callable[..., Any],
    lm: Any,
    options: DSPyOptions,
) -> dspy.Module:
    """Run the optimiser on the train examples; returns the compiled student."""
    if not trainset:
        raise ConfigurationError("no train examples: the train scenarios have no usable questions")
    train = list(trainset)
    if name == "mipro" and len(train) < 2:
        raise ConfigurationError(
            f"mipro needs at least 2 train examples (it holds some out to pick candidates), "
            f"got {len(train)}"
        )
    optimizer = build_optimizer(name, metric, lm, options)
    with dspy.context(lm=lm):
        if name == "mipro":
            inner_val = max(1, int(len(train) * 0.8)) if len(train) > 1 else 1
            return optimizer.compile(
                student,
                trainset=train,
                num_trials=options.num_trials,
                minibatch_size=min(35, inner_val),
                minibatch=inner_val > 1,
            )
        return optimizer.compile(student, trainset=train)


def _progress(enabled: bool) -> Progress:
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    return Progress(*columns, disable=not enabled, transient=True)


def evaluate_program(
    program: dspy.Module,
    examples: Sequence[dspy.Example],
    metric: Callable[..., Any],
    lm: Any = None,
    label: str = "scoring",
    progress: bool = True,
) -> ScoreCard:
    """Example-macro mean of `metric`, per category, running `program` on every example."""
    rows: list[tuple[str, float]] = []
    purities: list[float] = []
    recalls: list[float] = []
    with _progress(progress) as bar, dspy.context(lm=lm) if lm is not None else nullcontext():
        task = bar.add_task(label, total=len(examples))
        for example in examples:
            prediction = program(**example.inputs())
            value = as_float(metric(example, prediction))
            rows.append((str(example.get("category", "all")), value))
            if hasattr(prediction, "fused_members"):
                purity, recall = fusion_parts(example, prediction)
                purities.append(purity)
                if recall is not None:
                    recalls.append(recall)
            bar.advance(task)
    parts: dict[str, float | None] = {}
    if purities:
        parts = {
            "purity": sum(purities) / len(purities),
            "recall": sum(recalls) / len(recalls) if recalls else None,
        }
    return score_card(rows, parts)
