"""The bar a system is measured against: the best baseline, and what each ablated part adds.

`hybrid` is not always the strongest plain retriever: dense-only `naive_rag` beats it on
several hand-written sources. So the honest bar, per source, is the best of the baselines
that ran — the best overall for Overall, and the best *in each category* for that category
(a system that wins overall but falls below naive_rag's causal recall is still below).
An ablation `memfuse_no_X` is memfuse with one part switched off; `memfuse − memfuse_no_X`
is what that part adds, and a part that adds nothing on a source has not earned its keep
there.

Everything here reads a recall table (`recall_table`), the same shape for one bench run
(report.md) and for every source of a suite (suite.json).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

BASELINES: tuple[str, ...] = ("naive_rag", "bm25", "hybrid")
PRIMARY = "memfuse"
ABLATION_PREFIX = f"{PRIMARY}_no_"
RECALL = "evidence_recall"  # the key report.md shows as recall@k


def categories_of(results: Mapping[str, Any]) -> list[str]:
    """Categories in first-seen order across systems."""
    seen: dict[str, None] = {}
    for system in results["systems"].values():
        seen.update(dict.fromkeys(system["by_category"]))
    return list(seen)


def recall_table(results: Mapping[str, Any]) -> dict[str, Any]:
    """Per system: overall recall@k and recall@k by category (None where not measurable),
    plus the categories the dataset reports apart (left out of Overall and of every gap)."""
    cats = categories_of(results)
    systems: dict[str, Any] = {}
    apart: set[str] = set()
    for name, block in results["systems"].items():
        apart.update(block["overall"].get("excluded_categories", []))
        systems[name] = {
            "overall": block["overall"].get(RECALL),
            "by_category": {c: block["by_category"].get(c, {}).get(RECALL) for c in cats},
        }
    return {"categories": cats, "apart": sorted(apart), "systems": systems}


def is_baseline(system: str) -> bool:
    return system in BASELINES


def _best(values: Mapping[str, float | None]) -> dict[str, Any] | None:
    """The highest measurable value and its system; on a tie the first in BASELINES order
    (so the choice does not depend on the order systems were run)."""
    ranked = [(v, -BASELINES.index(s), s) for s, v in values.items() if v is not None]
    if not ranked:
        return None
    value, _, system = max(ranked)
    return {"system": system, "recall": value}


def best_baseline(table: Mapping[str, Any]) -> dict[str, Any]:
    """The best baseline overall and, separately, in each category; empty parts when no
    baseline ran."""
    ran = [s for s in BASELINES if s in table["systems"]]
    overall = _best({s: table["systems"][s]["overall"] for s in ran})
    by_category = {}
    for cat in table["categories"]:
        best = _best({s: table["systems"][s]["by_category"].get(cat) for s in ran})
        if best is not None:
            by_category[cat] = best
    return {"overall": overall, "by_category": by_category}


def _diff(value: float | None, reference: float | None) -> float | None:
    return None if value is None or reference is None else value - reference


def gaps_to(
    table: Mapping[str, Any],
    system: str,
    overall_ref: float | None,
    category_refs: Mapping[str, float | None],
) -> dict[str, Any]:
    """`system` minus the references: overall, per category (apart categories left out, as
    in Overall), and the worst category (first in report order on a tie)."""
    mine = table["systems"][system]
    by_category: dict[str, float] = {}
    for cat in table["categories"]:
        gap = _diff(mine["by_category"].get(cat), category_refs.get(cat))
        if cat not in table["apart"] and gap is not None:
            by_category[cat] = gap
    worst = min(by_category, key=by_category.__getitem__) if by_category else None
    return {
        "overall": _diff(mine["overall"], overall_ref),
        "by_category": by_category,
        "worst_category": worst,
        "worst": by_category[worst] if worst is not None else None,
    }


def gaps_to_best_baseline(table: Mapping[str, Any], system: str) -> dict[str, Any]:
    """One system's gaps to the best baseline of its source (overall and per category)."""
    best = best_baseline(table)
    overall = best["overall"]["recall"] if best["overall"] else None
    per_category = {c: b["recall"] for c, b in best["by_category"].items()}
    return gaps_to(table, system, overall, per_category)


def ablations_in(systems: Sequence[str]) -> list[str]:
    """The ablations of the primary system among `systems`, in run order."""
    return [s for s in systems if s.startswith(ABLATION_PREFIX)]


def ablation_margins(table: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """What each switched-off part adds: memfuse − ablation, overall and per category.
    Empty when memfuse itself did not run."""
    systems = table["systems"]
    if PRIMARY not in systems:
        return {}
    margins = {}
    for ablation in ablations_in(list(systems)):
        ref = systems[ablation]
        diff = gaps_to(table, PRIMARY, ref["overall"], ref["by_category"])
        margins[ablation] = diff
    return margins
