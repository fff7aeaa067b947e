"""Metric functions against hand-computed values."""

from __future__ import annotations

import pytest

from eval.metrics import (
    QuestionMeasure,
    aggregate,
    checklist_coverage,
    checklist_score,
    count_tokens,
    evidence_recall,
    full_evidence,
    percentile,
)
from memory.formats.models import ChecklistItem


def test_evidence_recall_and_full_rate():
    assert evidence_recall(["a", "b", "c", "d"], ["b", "x", "d"]) == 0.5
    assert evidence_recall(["a", "a", "b"], ["a"]) == 0.5  # gold is a set
    assert evidence_recall([], ["a"]) is None
    assert full_evidence(["a", "b"], ["b", "a", "z"]) is True
    assert full_evidence(["a", "b"], ["a"]) is False
    assert full_evidence([], ["a"]) is None


def test_checklist_coverage_counts_items_with_any_evidence_present():
    items = [
        ChecklistItem(item="p1", evidence_ids=["a", "b"]),
        ChecklistItem(item="p2", evidence_ids=["c"]),
        ChecklistItem(item="p3", evidence_ids=[]),  # unsupported item: never covered
    ]
    assert checklist_coverage(items, ["b"]) == pytest.approx(1 / 3)
    assert checklist_coverage(items, ["a", "c"]) == pytest.approx(2 / 3)
    assert checklist_coverage(None, ["a"]) is None
    assert checklist_coverage([], ["a"]) is None


def test_checklist_score_is_covered_share():
    assert checklist_score([True, False, True, True]) == 0.75
    with pytest.raises(ValueError):
        checklist_score([])


def test_nearest_rank_percentiles():
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 9.0, 8.0, 7.0, 6.0]
    assert percentile(values, 50) == 5.0  # ceil(0.5 * 10) = 5th smallest
    assert percentile(values, 95) == 10.0  # ceil(9.5) = 10th
    assert percentile(values, 90) == 9.0
    assert percentile([42.0], 95) == 42.0
    assert percentile([], 50) is None


def test_count_tokens_cl100k():
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0


def _m(category, recall, full, cov, tokens, ms, score=None, unscorable=False):
    return QuestionMeasure(category, recall, full, cov, tokens, ms, score, unscorable)


def test_aggregate_is_question_macro_and_skips_unmeasured():
    measures = [
        _m("a", 1.0, True, 1.0, 100, 10.0, 1.0),
        _m("a", 0.5, False, 0.5, 200, 20.0, 0.5),
        _m("b", None, None, None, 300, 30.0, 0.0),  # no gold evidence: recall skipped
    ]
    block = aggregate(measures, with_judge=True)
    assert block["n_questions"] == 3
    assert block["evidence_recall"] == 0.75
    assert block["full_evidence_rate"] == 0.5
    assert block["checklist_coverage"] == 0.75
    assert block["context_tokens"] == 200.0
    assert block["search_p50_ms"] == 20.0 and block["search_p95_ms"] == 30.0
    assert block["recall_skipped"] == 1
    assert block["checklist_score"] == 0.5
    assert block["unscorable"] == 0


def test_distractors_are_counted_over_the_questions_they_target():
    from eval.metrics import distractors_by_question
    from memory.models import Event

    def event(eid: str, target: str | None) -> Event:
        extra = {"target_question": target} if target else {}
        return Event(
            event_id=eid,
            timestamp="2026-05-11 08:00",
            device="phone_ana",
            modality="app_usage",
            description="a reading",
            metadata=extra,
        )

    labelled = [event("d1", "q1"), event("d2", "q1"), event("d3", "q2"), event("e1", None)]
    assert distractors_by_question(labelled) == {"q1": {"d1", "d2"}, "q2": {"d3"}}
    measures = [
        QuestionMeasure("a", 1.0, True, 1.0, 10, 1.0, distractors=2, distractors_retrieved=1),
        QuestionMeasure("a", 1.0, True, 1.0, 10, 1.0, distractors=1, distractors_retrieved=0),
        QuestionMeasure("a", 1.0, True, 1.0, 10, 1.0),  # no distractors: not counted
    ]
    block = aggregate(measures, with_judge=False)
    assert block["distractor_questions"] == 2
    assert block["fooled_rate"] == 0.5
    assert block["distractors_retrieved"] == 0.5
    assert block["distractor_recall"] == pytest.approx(1 / 3)
    assert "fooled_rate" not in aggregate(measures[2:], with_judge=False)


def test_aggregate_withholds_score_when_any_question_unscorable():
    measures = [
        _m("a", 1.0, True, None, 10, 1.0, 1.0),
        _m("a", 1.0, True, None, 10, 1.0, None, True),
    ]
    block = aggregate(measures, with_judge=True)
    assert block["checklist_score"] is None
    assert block["checklist_score_note"] == "withheld: 1 question(s) unscorable"
    assert "checklist_score" not in aggregate(measures, with_judge=False)
