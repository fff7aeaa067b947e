"""What each ablated part changes, question by question (eval.context_changes)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from eval.context_changes import context_changes, later_finds
from eval.metrics import evidence_recall
from eval.report import change_section, later_finds_section


def _record(system: str, question: str, ids: list[str], gold: list[str], category: str = "c"):
    return {
        "system": system,
        "scenario_id": "s1",
        "question_id": question,
        "category": category,
        "recall": evidence_recall(gold, ids),
        "retrieved_ids": ids,
        "gold_ids": gold,
    }


def test_counts_swaps_and_their_gold_on_the_questions_both_answered():
    gold = ["g1", "g2"]
    records = [
        # q1: the part lets g2 in where x stood: recall up, one gold in, none out
        _record("memfuse", "q1", ["g1", "g2"], gold),
        _record("memfuse_no_ar", "q1", ["g1", "x"], gold),
        # q2: the same context: no change
        _record("memfuse", "q2", ["g1", "y"], gold),
        _record("memfuse_no_ar", "q2", ["y", "g1"], gold),
        # q3: the part displaces gold for two non-gold events
        _record("memfuse", "q3", ["a", "b"], gold),
        _record("memfuse_no_ar", "q3", ["g1", "b"], gold),
        # apart (left out of Overall) and a question the ablation never answered
        _record("memfuse", "q4", ["z"], gold, category="adversarial"),
        _record("memfuse_no_ar", "q4", ["g1"], gold, category="adversarial"),
        _record("memfuse", "q5", ["g1"], gold),
        _record("hybrid", "q1", ["g1"], gold),  # baselines are no ablation
    ]
    changes = context_changes(records, apart=["adversarial"])
    assert list(changes) == ["memfuse_no_ar"]
    c = changes["memfuse_no_ar"]
    assert (c["questions"], c["changed"], c["recall_higher"], c["recall_lower"]) == (3, 2, 1, 1)
    assert (c["let_in"], c["let_in_gold"], c["displaced"], c["displaced_gold"]) == (2, 1, 2, 1)
    assert c["changed_share"] == 2 / 3 and c["let_in_gold_share"] == 0.5
    section = "\n".join(change_section(changes))
    assert "| memfuse − memfuse_no_ar | 3 | 2 (66.7 %) | 1 (33.3 %) | 1 (33.3 %) |" in section


def test_nothing_to_compare_without_memfuse_or_without_swaps():
    assert context_changes([_record("memfuse_no_ar", "q1", ["a"], ["a"])]) == {}
    same = [
        _record("memfuse", "q1", ["a"], ["a"]),
        _record("memfuse_no_fusion", "q1", ["a"], ["a"]),
    ]
    c = context_changes(same)["memfuse_no_fusion"]
    assert (
        c["changed"] == 0 and c["let_in_gold_share"] is None and c["displaced_gold_share"] is None
    )
    assert "0, – gold" in "\n".join(change_section({"memfuse_no_fusion": c}))
    assert change_section({}) == []


_IDS = st.lists(st.sampled_from([f"e{i}" for i in range(8)]), max_size=6, unique=True)


@given(st.lists(st.tuples(_IDS, _IDS, _IDS.filter(bool)), min_size=1, max_size=12))
def test_gold_let_in_less_gold_displaced_is_the_gold_memfuse_gains(questions: list[Any]):
    """Σ over questions of (gold memfuse holds − gold the ablation holds) equals the gold among
    the events only memfuse holds less the gold among those only the ablation holds; the let-in
    and displaced counts differ by the contexts' sizes."""
    records = []
    gained = size_gap = 0
    for n, (ours, theirs, gold) in enumerate(questions):
        records += [
            _record("memfuse", f"q{n}", ours, gold),
            _record("memfuse_no_ar", f"q{n}", theirs, gold),
        ]
        gained += len(set(gold) & set(ours)) - len(set(gold) & set(theirs))
        size_gap += len(ours) - len(theirs)
    c = context_changes(records)["memfuse_no_ar"]
    assert c["questions"] == len(questions)
    assert c["let_in_gold"] - c["displaced_gold"] == gained
    assert c["let_in"] - c["displaced"] == size_gap
    assert c["recall_higher"] + c["recall_lower"] <= c["changed"]


def test_later_finds_are_counted_by_what_found_them_for_memfuse_only():
    gold = ["g1", "g2", "g3"]
    q1 = _record("memfuse", "q1", ["g1", "g2", "x", "y"], gold)
    q1["found_by"] = {"g2": "pivot:series", "x": "pivot:colocated", "y": "pivot:colocated"}
    q2 = _record("memfuse", "q2", ["g3", "z"], gold)
    q2["found_by"] = {"g3": "search", "z": "pivot:series"}
    apart = _record("memfuse", "q3", ["g1"], gold, category="adversarial")
    apart["found_by"] = {"g1": "search"}
    other = _record("memfuse_no_fusion", "q1", ["g1", "g2"], gold)
    other["found_by"] = {"g2": "search"}  # an ablation's own rounds are not memfuse's
    plain = _record("memfuse", "q4", ["g1"], gold)  # one round: no found_by at all
    finds = later_finds([q1, q2, apart, other, plain], apart=["adversarial"])
    assert list(finds) == ["pivot:colocated", "pivot:series", "search"]  # pivots, then searches
    assert finds["pivot:colocated"] == {"events": 2, "gold": 0, "questions": 1, "gold_share": 0.0}
    assert finds["pivot:series"] == {"events": 2, "gold": 1, "questions": 2, "gold_share": 0.5}
    assert finds["search"] == {"events": 1, "gold": 1, "questions": 1, "gold_share": 1.0}
    section = "\n".join(later_finds_section(finds))
    assert "| `pivot:series` | 2 | 2 | 1 | 50.0 % |" in section
    assert later_finds([plain]) == {} and later_finds_section({}) == []
