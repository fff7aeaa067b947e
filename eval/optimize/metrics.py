"""DSPy metrics `(example, prediction, trace=None, ...)` and the score cards built from them.

- planner / judge: evidence recall@k of the final context (the share of the question's
  gold evidence events that the retrieval put into the reader's context).
- fusion: the mean of fusion purity (share of a fused node's members from its majority
  storyline episode, macro over nodes; a slice without fused nodes scores 0, as in
  `eval.fusion_metrics`) and the downstream evidence recall of the slice's questions.

Both accept GEPA's extra `(pred_name, pred_trace)` arguments; asked for one predictor,
they return `dspy.Prediction(score=..., feedback=...)` with what was missed, so GEPA's
reflection has something concrete to read. Labels are read from the example only here.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import dspy

from eval.metrics import evidence_recall, mean

FUSION_WEIGHTS = (0.5, 0.5)  # (purity, downstream recall)
FEEDBACK_MISSING = 5  # missing gold events quoted in a feedback


def _with_feedback(score: float, feedback: str, pred_name: str | None) -> Any:
    return dspy.Prediction(score=score, feedback=feedback) if pred_name is not None else score


def recall_metric(
    example: dspy.Example,
    prediction: dspy.Prediction,
    trace: Any = None,
    pred_name: str | None = None,
    pred_trace: Any = None,
) -> Any:
    """Evidence recall@k of the retrieved context (0 when nothing was retrieved)."""
    ids = list(prediction.event_ids or [])
    score = evidence_recall(example.gold_ids, ids) or 0.0
    if pred_name is None:
        return score
    missing = [g for g in example.gold_ids if g not in set(ids)]
    describe: Callable[[list[str]], list[str]] | None = getattr(prediction, "describe", None)
    shown = describe(missing[:FEEDBACK_MISSING]) if describe and missing else missing
    queries = "; ".join(getattr(prediction, "queries", []) or [])
    feedback = (
        f"Evidence recall {score:.2f}: {len(ids)} events retrieved, "
        f"{len(example.gold_ids) - len(missing)} of {len(example.gold_ids)} gold evidence events "
        f"found. Queries searched: {queries or 'none'}."
    )
    if missing:
        feedback += " Missed evidence: " + " | ".join(shown)
    return _with_feedback(score, feedback, pred_name)


def purity(groups: Iterable[Sequence[str]], labels: dict[str, Any]) -> float:
    """Macro share of each group's members carrying its majority episode label (0 if none)."""
    scores = []
    for members in groups:
        if not members:
            continue
        counts = Counter(
            episode for m in members if (episode := (labels.get(m) or (None, None))[0])
        )
        scores.append(max(counts.values()) / len(members) if counts else 0.0)
    return sum(scores) / len(scores) if scores else 0.0


def fusion_parts(example: dspy.Example, prediction: dspy.Prediction) -> tuple[float, float | None]:
    """(purity, downstream recall or None when the slice has no question)."""
    fused = list(prediction.fused_members or [])
    retrieved: dict[str, list[str]] = dict(prediction.retrieved or {})
    recalls = [evidence_recall(gold, retrieved.get(qid, [])) for qid, gold in example.gold.items()]
    return purity(fused, example.event_labels), mean(recalls)


def combine(purity_score: float, recall_score: float | None) -> float:
    if recall_score is None:
        return purity_score
    w_purity, w_recall = FUSION_WEIGHTS
    return (w_purity * purity_score + w_recall * recall_score) / (w_purity + w_recall)


def fusion_metric(
    example: dspy.Example,
    prediction: dspy.Prediction,
    trace: Any = None,
    pred_name: str | None = None,
    pred_trace: Any = None,
) -> Any:
    """Mean of fusion purity and downstream recall for one stream slice."""
    purity_score, recall_score = fusion_parts(example, prediction)
    score = combine(purity_score, recall_score)
    if pred_name is None:
        return score
    fused = list(prediction.fused_members or [])
    mixed = [m for m in fused if purity([m], example.event_labels) < 1.0]
    feedback = (
        f"Score {score:.2f}: {len(fused)} fused nodes, purity {purity_score:.2f} "
        f"({len(mixed)} mix events of different storylines or background), downstream recall "
        f"{'n/a' if recall_score is None else f'{recall_score:.2f}'}. Fuse only observations of "
        "one concrete happening; keep unrelated background readings atomic."
    )
    return _with_feedback(score, feedback, pred_name)


# --- score cards -----------------------------------------------------------------------------


@dataclass
class ScoreCard:
    """A metric over a set of examples: overall (example-macro), per category, and parts."""

    score: float | None
    by_category: dict[str, float] = field(default_factory=dict)
    n: int = 0
    parts: dict[str, float | None] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "n": self.n,
            "by_category": self.by_category,
            "parts": self.parts,
        }


def score_card(
    rows: Sequence[tuple[str, float]],
    parts: dict[str, float | None] | None = None,
    score: float | None = None,
) -> ScoreCard:
    """From (category, score) rows; `score` overrides the overall mean when given."""
    by: dict[str, list[float]] = defaultdict(list)
    for category, value in rows:
        by[category].append(value)
    overall = score if score is not None else mean(v for _, v in rows)
    return ScoreCard(
        score=overall,
        by_category={c: sum(v) / len(v) for c, v in sorted(by.items())},
        n=len(rows),
        parts=dict(parts or {}),
    )


def as_float(value: Any) -> float:
    """A metric's value as a number (GEPA-style predictions carry it in `.score`)."""
    return float(getattr(value, "score", value))
