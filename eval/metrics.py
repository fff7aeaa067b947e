"""Benchmark metrics as pure functions over ids, texts and numbers.

Per-question functions return None when the question cannot be measured (no gold
evidence, no checklist); aggregation skips those and counts them instead of
treating them as zeros. Aggregates are question-macro means: every question weighs
the same, so Overall is not the mean of the category means.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import math
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memory.errors import ConfigurationError
from memory.formats.models import ChecklistItem
from memory.models import Event

TOKENIZER = "cl100k_base"
_CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def evidence_recall(gold_ids: Sequence[str], context_ids: Iterable[str]) -> float | None:
    """Share of gold evidence ids present in the context; None when there is no gold."""
    gold = set(gold_ids)
    if not gold:
        return None
    return len(gold & set(context_ids)) / len(gold)


def full_evidence(gold_ids: Sequence[str], context_ids: Iterable[str]) -> bool | None:
    """Whether every gold id is in the context; None when there is no gold."""
    gold = set(gold_ids)
    if not gold:
        return None
    return gold <= set(context_ids)


def checklist_coverage(
    checklist: Sequence[ChecklistItem] | None, context_ids: Iterable[str]
) -> float | None:
    """Share of checklist items with at least one of their evidence events in the context.

    An item without evidence ids cannot be supported by retrieval and counts as
    uncovered; None when the question has no checklist at all.
    """
    if not checklist:
        return None
    present = set(context_ids)
    covered = sum(1 for item in checklist if present.intersection(item.evidence_ids))
    return covered / len(checklist)


def distractors_by_question(labelled_events: Iterable[Event]) -> dict[str, set[str]]:
    """Question id -> ids of the distractor events the generator wrote against it (the
    `target_question` label, which systems never see)."""
    out: dict[str, set[str]] = {}
    for event in labelled_events:
        target = event.metadata.get("target_question")
        if target:
            out.setdefault(str(target), set()).add(event.event_id)
    return out


def checklist_score(judgements: Sequence[bool]) -> float:
    """The paper's per-question score: the covered share of the checklist items."""
    if not judgements:
        raise ValueError("checklist_score needs at least one judgement")
    return sum(1 for covered in judgements if covered) / len(judgements)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile: the smallest value with at least q% of values at or below it.

    Nearest rank always returns an observed latency (no interpolation between two
    questions), which is what a reader of "p95 = 41 ms" expects.
    """
    if not values:
        return None
    if not 0 < q <= 100:
        raise ValueError(f"percentile q must be in (0, 100], got {q}")
    ordered = sorted(values)
    rank = math.ceil(q / 100 * len(ordered))
    return float(ordered[max(rank, 1) - 1])


def mean(values: Iterable[float | bool | None]) -> float | None:
    """Mean of the measured values (None skipped); None when nothing was measured."""
    kept = [float(v) for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


# --- tokens -----------------------------------------------------------------------------


def _bundled_tiktoken_dir() -> Path | None:
    """litellm (a DSPy dependency) ships tiktoken's cl100k file; use it when offline."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    key = hashlib.sha1(_CL100K_URL.encode()).hexdigest()
    return folder if (folder / key).is_file() else None


@functools.cache
def _encoding():  # -> tiktoken.Encoding
    import tiktoken

    if "TIKTOKEN_CACHE_DIR" not in os.environ and "DATA_GYM_CACHE_DIR" not in os.environ:
        key = hashlib.sha1(_CL100K_URL.encode()).hexdigest()
        default_cache = Path(tempfile.gettempdir()) / "data-gym-cache" / key
        bundled = _bundled_tiktoken_dir()
        if not default_cache.is_file() and bundled is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)  # what litellm sets on import too
    try:
        return tiktoken.get_encoding(TOKENIZER)
    except (OSError, ValueError) as exc:  # requests errors are OSErrors; ValueError: bad hash
        raise ConfigurationError(
            f"tokenizer {TOKENIZER} is unavailable offline ({type(exc).__name__}); "
            "set TIKTOKEN_CACHE_DIR to a folder holding its BPE file"
        ) from None


def count_tokens(text: str) -> int:
    """Tokens of a serialized context under cl100k_base (what the paper's token columns use)."""
    return len(_encoding().encode(text, disallowed_special=()))


def context_text(lines: Sequence[str]) -> str:
    """The context exactly as the reader receives it: one serialized entry per line."""
    return "\n".join(lines)


# --- aggregation ------------------------------------------------------------------------


@dataclass(frozen=True)
class QuestionMeasure:
    """Everything measured for one (system, question) pair."""

    category: str
    recall: float | None
    full_evidence: bool | None
    checklist_coverage: float | None
    context_tokens: int
    search_ms: float
    checklist_score: float | None = None
    unscorable: bool = False
    distractors: int = 0  # distractor events written against this question (MemFuseBench)
    distractors_retrieved: int = 0  # of them, how many the context holds
    question_encode_ms: float = 0.0
    """The question's own encoding, where the system read its vector (`eval.bench_queries`)."""


def aggregate(measures: Sequence[QuestionMeasure], with_judge: bool) -> dict[str, object]:
    """Question-macro means of one group of questions (Overall or one category).

    The checklist score is withheld (None, with a note) when any question of the
    group is unscorable, as in the paper: an error is never averaged in as a zero.
    """
    recall_measured = [m.recall for m in measures if m.recall is not None]
    from_text = [m.search_ms + m.question_encode_ms for m in measures]  # eval.bench_queries
    block: dict[str, object] = {
        "n_questions": len(measures),
        "evidence_recall": mean(recall_measured),
        "full_evidence_rate": mean(m.full_evidence for m in measures),
        "checklist_coverage": mean(m.checklist_coverage for m in measures),
        "context_tokens": mean(m.context_tokens for m in measures),
        "search_p50_ms": percentile([m.search_ms for m in measures], 50),
        "search_p95_ms": percentile([m.search_ms for m in measures], 95),
        "from_text_p50_ms": percentile(from_text, 50),
        "from_text_p95_ms": percentile(from_text, 95),
        "recall_skipped": len(measures) - len(recall_measured),
    }
    targeted = [m for m in measures if m.distractors]
    if targeted:
        block["distractor_questions"] = len(targeted)
        block["fooled_rate"] = mean(m.distractors_retrieved > 0 for m in targeted)
        block["distractors_retrieved"] = mean(m.distractors_retrieved for m in targeted)
        block["distractor_recall"] = sum(m.distractors_retrieved for m in targeted) / sum(
            m.distractors for m in targeted
        )
    if with_judge:
        unscorable = sum(1 for m in measures if m.unscorable)
        block["checklist_score"] = None if unscorable else mean(m.checklist_score for m in measures)
        block["unscorable"] = unscorable
        if unscorable:
            block["checklist_score_note"] = f"withheld: {unscorable} question(s) unscorable"
    return block
