"""Where a multi-round system's missing evidence is (eval.missing_evidence), from records."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from eval.missing_evidence import missing_evidence
from eval.report import missing_evidence_section


def _record(
    system: str,
    context: list[str],
    gold: list[str],
    pooled: dict[str, int] | None,
    category: str = "c",
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "system": system,
        "category": category,
        "retrieved_ids": context,
        "gold_ids": gold,
        "missing_gold": [g for g in gold if g not in context],
    }
    if pooled is not None:  # bench_question.measure writes it for systems that pool
        record["missing_pooled"] = {g: r for g, r in pooled.items() if g in record["missing_gold"]}
    return record


def test_missing_gold_is_split_by_whether_and_when_a_round_found_it() -> None:
    gold = ["g1", "g2", "g3", "g4"]
    records = [
        # g1 in the context; g2 ranked out of round 1's list; g3 found by round 2 and lost
        # its contest; g4 never found
        _record("memfuse", ["g1", "x"], gold, {"g1": 1, "x": 1, "g2": 1, "g3": 2}),
        _record("memfuse", ["g1", "g2"], ["g1", "g2"], {"g1": 1, "g2": 2}),
        _record("memfuse", ["y"], ["g9"], {"y": 1}, category="adversarial"),  # reported apart
        _record("hybrid", ["g1"], gold, None),  # a one-list system reports no pool
        _record("memfuse_no_ar", ["x"], ["g1"], {"x": 1}),
    ]
    missing = missing_evidence(records, apart=["adversarial"])
    assert list(missing) == ["memfuse", "memfuse_no_ar"]
    row = missing["memfuse"]
    assert (row["questions"], row["gold"], row["in_context"]) == (2, 6, 3)
    assert (row["ranked_out_round_one"], row["ranked_out_later"], row["never_found"]) == (1, 1, 1)
    assert row["pool_recall"] == 5 / 6 and row["never_found_share"] == 1 / 6
    assert missing["memfuse_no_ar"]["never_found"] == 1
    assert missing["memfuse_no_ar"]["pool_recall"] == 0.0
    section = "\n".join(missing_evidence_section(missing))
    assert "| memfuse | 6 | 3 (50.0 %) | 1 (16.7 %) | 1 (16.7 %) | 1 (16.7 %) | 83.3 % |" in section
    assert missing_evidence([records[3]]) == {} and missing_evidence_section({}) == []


@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=5, unique=True),
            st.lists(st.sampled_from("abcdefgh"), max_size=5, unique=True),
            st.dictionaries(st.sampled_from("abcdefgh"), st.integers(1, 3)),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_every_gold_event_lands_in_exactly_one_place(
    questions: list[tuple[list[str], list[str], dict[str, int]]],
) -> None:
    records = [_record("memfuse", context, gold, pooled) for gold, context, pooled in questions]
    row = missing_evidence(records)["memfuse"]
    parts = ("in_context", "ranked_out_round_one", "ranked_out_later", "never_found")
    assert sum(row[p] for p in parts) == row["gold"] == sum(len(g) for g, _, _ in questions)
    assert abs(row["pool_recall"] - (1 - row["never_found"] / row["gold"])) < 1e-12
