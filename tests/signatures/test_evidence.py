"""The offline evidence judge (facets, coverage, shortlist, next plan) and the LLM judge's shape."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta

import dspy
import pytest
from dspy.utils.dummies import DummyLM

from memory.models import NodeKind
from memory.search.plan import RoundPlan, TimeWindow
from signatures.evidence import EvidenceItem, EvidenceJudge, FacetCoverage, judge_inputs
from signatures.evidence_offline import OfflineEvidenceJudge, pivot_plan, question_facets

WED = datetime(2026, 5, 13, 15, 0)
TUESDAY_MORNING = TimeWindow(
    enabled=True,
    date=date(2026, 5, 12),
    start_time=time(0, 0),
    end_time=time(11, 59, 59),
    confidence=0.85,
)
QUESTION_PLAN = RoundPlan(
    focus="How did David sleep on Tuesday?",
    semantic_queries=["How did David sleep on Tuesday", "David sleep score"],
    keywords=["sleep", "score", "watch"],
    entities=["David", "watch_david"],
    time_window=TUESDAY_MORNING,
)

SLEEP = EvidenceItem(
    node_id="e1",
    timestamp=datetime(2026, 5, 12, 7, 0),
    device="watch_david",
    location="bedroom",
    text="Sleep score 82, 7h10m asleep",
    characters=["David"],
    score=0.9,
)
COFFEE = EvidenceItem(
    node_id="e2",
    timestamp=datetime(2026, 5, 12, 8, 0),
    device="phone_emma",
    location="kitchen",
    text="Emma made coffee",
    characters=["Emma"],
    score=0.5,
)
RUN = EvidenceItem(
    node_id="e3",
    timestamp=datetime(2026, 5, 11, 18, 0),
    device="phone_david",
    location="park",
    text="David went for a run",
    score=0.7,
)


@pytest.fixture(autouse=True)
def _reset_dspy():
    with dspy.context(lm=None):
        yield


def summary(item: EvidenceItem) -> EvidenceItem:
    """The item as a fused summary: evidence, but nothing a pivot can start from."""
    return item.model_copy(update={"kind": NodeKind.FUSED})


def judge(evidence, round_number=1, history=(QUESTION_PLAN,), final=False, top_k=20):
    inputs = judge_inputs(
        "How did I sleep on Tuesday?",
        WED,
        history[-1],
        ["q"],
        list(history),
        round_number,
        2,
        final,
        top_k,
        evidence,
    )
    return OfflineEvidenceJudge()(**inputs)


def test_facets_are_entities_keywords_outside_entities_and_a_confident_window() -> None:
    labels = [f.label for f in question_facets(QUESTION_PLAN)]
    assert labels == [
        "entity: David",
        "entity: watch_david",
        "keyword: sleep",
        "keyword: score",
        "time: 2026-05-12 00:00 to 2026-05-12 11:59",
    ]
    unsure = QUESTION_PLAN.model_copy(
        update={"time_window": TUESDAY_MORNING.model_copy(update={"confidence": 0.5})}
    )
    assert [f.kind for f in question_facets(unsure)] == ["entity", "entity", "keyword", "keyword"]


def test_full_coverage_before_the_minimum_round_is_not_sufficient() -> None:
    result = judge([SLEEP, COFFEE, RUN], round_number=1)
    coverage = {c.facet: c.evidence_ids for c in result.coverage}
    assert coverage == {
        "entity: David": ["e1", "e3"],
        "entity: watch_david": ["e1"],
        "keyword: sleep": ["e1"],
        "keyword: score": ["e1"],
        "time: 2026-05-12 00:00 to 2026-05-12 11:59": ["e1", "e2"],
    }
    assert all(c.covered for c in result.coverage)
    assert result.missing_facets == []
    assert result.sufficient is False
    # a verification plan, unlike the executed one
    assert result.next_plan is not None
    assert result.next_plan.signature() != QUESTION_PLAN.signature()
    # e1 alone shows all five facets: the greedy cover needs nothing else
    assert result.selected_ids == ["e1"]


def test_full_coverage_after_the_pivot_is_sufficient() -> None:
    pivoted = pivot_plan(QUESTION_PLAN, ["e1"])
    result = judge([SLEEP, COFFEE, RUN], round_number=2, history=(QUESTION_PLAN, pivoted))
    assert result.sufficient is True
    assert result.next_plan is None


def test_after_the_first_round_the_twin_pivots_on_the_best_events() -> None:
    result = judge([COFFEE, RUN, summary(SLEEP)], round_number=2)
    plan = result.next_plan
    assert result.sufficient is False
    assert plan is not None and plan.pivot.enabled and plan.pivot.confidence >= 0.6
    assert plan.pivot.anchors == ["e3", "e2"]  # events only, best score first
    assert plan.model_copy(update={"pivot": QUESTION_PLAN.pivot}) == QUESTION_PLAN


def test_the_twins_pivot_asks_for_no_feedback_search() -> None:
    """Its pivot round searches beside the anchors and along their record, and does not run
    the whole engine again with their distinctive words (`PIVOT_TERMS`)."""
    plan = judge([COFFEE, RUN, SLEEP], round_number=2).next_plan
    assert plan is not None and plan.pivot.enabled and plan.pivot.terms == 0


def test_over_several_days_the_pivot_also_asks_for_the_series() -> None:
    assert pivot_plan(QUESTION_PLAN, ["e1"]).pivot.series is False  # one morning
    week = TimeWindow(
        enabled=True, date=date(2026, 5, 11), end_date=date(2026, 5, 17), confidence=0.85
    )
    over_week = QUESTION_PLAN.model_copy(update={"time_window": week})
    assert pivot_plan(over_week, ["e1"]).pivot.series is True
    # longer than a day: two whole days are, one whole day is not
    two_days = week.model_copy(update={"end_date": date(2026, 5, 12)})
    assert two_days.over_days(0.6) and not two_days.model_copy(update={"end_date": None}).over_days(
        0.6
    )
    unsure = week.model_copy(update={"confidence": 0.5})
    assert (
        pivot_plan(QUESTION_PLAN.model_copy(update={"time_window": unsure}), ["e1"]).pivot.series
        is False
    )


def nightly(day: int, minute: int, device: str = "watch_david") -> EvidenceItem:
    """One night's sleep record of `device`, on 2026-05-`day` at 07:`minute`."""
    return SLEEP.model_copy(
        update={
            "node_id": f"n{day}",
            "timestamp": datetime(2026, 5, day, 7, 0) + timedelta(minutes=minute),
            "device": device,
        }
    )


def test_a_record_recurring_in_the_evidence_asks_for_its_series_over_its_days() -> None:
    """No window over days in the question, but the best events hold one device's record on
    three days at about the same time of day: the pivot follows that record over the days
    they span, one more on each side."""
    evidence = [nightly(12, 0), nightly(14, 40), nightly(15, -30), COFFEE, RUN]
    pivot = pivot_plan(QUESTION_PLAN, ["n12"], evidence).pivot
    assert pivot.series and (pivot.series_from, pivot.series_to) == (
        date(2026, 5, 11),
        date(2026, 5, 16),
    )
    assert pivot.series_days() == (
        datetime(2026, 5, 11),
        datetime.combine(date(2026, 5, 16), time.max),
    )
    # across midnight: 23:50 and 00:10 are twenty minutes apart
    late = [
        nightly(12, 0).model_copy(
            update={"node_id": f"l{day}", "timestamp": datetime(2026, 5, day, hour, minute)}
        )
        for day, hour, minute in [(11, 23, 50), (13, 0, 10), (14, 23, 55)]
    ]
    assert pivot_plan(QUESTION_PLAN, ["l11"], late).pivot.series


def test_without_a_record_recurring_on_three_days_the_pivot_asks_for_no_series() -> None:
    for evidence in (
        [nightly(12, 0), nightly(14, 0), COFFEE],  # two days only
        [nightly(12, 0), nightly(13, 90), nightly(14, 180)],  # hours apart in the day
        [nightly(12, 0), nightly(13, 0, "phone_emma"), nightly(14, 0, "phone_david")],
        [nightly(1, 0), nightly(12, 0), nightly(23, 0)],  # days more than a week apart
        [summary(nightly(d, 0)) for d in (12, 13, 14)],  # fused summaries are not records
        # the record recurs below the best event, which is something else
        [RUN.model_copy(update={"score": 0.95}), *(nightly(d, 0) for d in (12, 13, 14))],
    ):
        pivot = pivot_plan(QUESTION_PLAN, [evidence[0].node_id], evidence).pivot
        assert not pivot.series and pivot.series_days() is None


def test_once_a_pivot_ran_the_twin_stops_even_when_incomplete() -> None:
    pivoted = pivot_plan(QUESTION_PLAN, ["e3"])
    result = judge([COFFEE, RUN], round_number=2, history=(QUESTION_PLAN, pivoted))
    assert result.missing_facets and result.sufficient is False
    assert result.next_plan is None


UNDATED = QUESTION_PLAN.model_copy(update={"time_window": TimeWindow()})


def day_events(day: int, n: int, start: int = 0) -> list[EvidenceItem]:
    return [
        SLEEP.model_copy(
            update={
                "node_id": f"d{day}_{i}",
                "timestamp": datetime(2026, 5, day, 7 + i),
                "score": 0.9 - 0.01 * (start + i),
            }
        )
        for i in range(n)
    ]


@pytest.mark.parametrize(
    ("question", "first", "last"),
    [
        ("How did I sleep?", date(2026, 5, 12), None),
        ("Why did I sleep so badly?", date(2026, 5, 9), date(2026, 5, 12)),  # looks back
        ("What happened afterwards?", date(2026, 5, 12), date(2026, 5, 14)),  # looks forward
    ],
)
def test_after_the_pivot_an_undated_question_is_searched_on_its_evidences_day(
    question: str, first: date, last: date | None
) -> None:
    """Three of the five best events on the 12th: the question, naming no time, is searched
    again over that day (widened as the planner widens a named day for its direction)."""
    evidence = [*day_events(12, 3), *day_events(10, 2, start=3)]
    pivoted = pivot_plan(UNDATED, ["d12_0"])
    inputs = judge_inputs(
        question, WED, pivoted, ["q"], [UNDATED, pivoted], 2, 2, False, 20, evidence
    )
    plan = OfflineEvidenceJudge()(**inputs).next_plan
    assert plan is not None and not plan.pivot.enabled
    window = plan.time_window
    assert (window.date, window.end_date) == (first, last)
    assert window.confidence >= 0.6 and plan.seed.time_window_quota == 15
    assert plan.model_copy(update={"time_window": TimeWindow(), "seed": UNDATED.seed}) == UNDATED
    # once that round ran, or when the best evidence is spread over days, no further round
    done = judge_inputs(
        question, WED, plan, ["q"], [UNDATED, pivoted, plan], 3, 2, False, 20, evidence
    )
    assert OfflineEvidenceJudge()(**done).next_plan is None
    spread = [*day_events(12, 2), *day_events(10, 2, start=2), *day_events(11, 1, start=4)]
    inputs = judge_inputs(
        question, WED, pivoted, ["q"], [UNDATED, pivoted], 2, 2, False, 20, spread
    )
    assert OfflineEvidenceJudge()(**inputs).next_plan is None


def test_next_plan_targets_the_missing_facets_and_keeps_the_anchors() -> None:
    result = judge([summary(COFFEE), summary(RUN)], round_number=2)
    assert result.missing_facets == ["entity: watch_david", "keyword: sleep", "keyword: score"]
    assert result.sufficient is False
    plan = result.next_plan
    assert plan.focus == "watch_david sleep score David"
    assert plan.semantic_queries == ["watch_david David", "sleep David", "score David"]
    assert plan.keywords == ["watch_david", "sleep", "score"]
    assert plan.time_window == TUESDAY_MORNING
    assert plan.entities == QUESTION_PLAN.entities
    assert result.selected_ids == ["e3", "e2"]  # one facet each (David; the window), by score


def test_shortlist_is_a_greedy_cover_of_the_facets() -> None:
    both = SLEEP.model_copy(
        update={
            "node_id": "a",
            "timestamp": datetime(2026, 5, 10, 7, 0),
            "device": "phone_david",
            "text": "Poor sleep",
            "score": 0.5,
        }
    )  # David, sleep
    david = RUN.model_copy(update={"node_id": "b", "score": 0.9})  # David only
    morning = COFFEE.model_copy(
        update={"node_id": "c", "text": "Emma had a sleep in", "score": 0.4}
    )  # sleep, time
    result = judge([both, david, morning])
    # a and c both show two new facets (a wins on score); then only the window is left: c
    assert result.selected_ids == ["a", "c"]
    assert result.missing_facets == ["entity: watch_david", "keyword: score"]


def test_next_plan_skips_every_executed_plan() -> None:
    evidence = [summary(COFFEE), summary(RUN)]  # no event to pivot on: facet plans
    first = judge(evidence, round_number=1).next_plan
    # still before the minimum round: another plan is due, and it must be a new one
    second = judge(evidence, round_number=1, history=(QUESTION_PLAN, first)).next_plan
    assert second is not None
    assert second.signature() not in {QUESTION_PLAN.signature(), first.signature()}


def test_no_next_plan_once_a_follow_up_searched_the_missing_facets_in_vain() -> None:
    evidence = [summary(COFFEE), summary(RUN)]
    first = judge(evidence, round_number=1).next_plan
    assert first is not None and "sleep" in first.focus.lower()
    after = judge(evidence, round_number=2, history=(QUESTION_PLAN, first))
    assert after.sufficient is False and "keyword: sleep" in after.missing_facets
    assert after.next_plan is None


def test_final_round_gives_no_next_plan_even_when_incomplete() -> None:
    result = judge([COFFEE], round_number=5, final=True)
    assert result.sufficient is False
    assert result.next_plan is None
    assert "keyword: sleep" in result.missing_facets


def test_no_evidence_is_never_sufficient() -> None:
    plan = RoundPlan(focus="anything at all")
    inputs = judge_inputs("anything at all", WED, plan, [], [plan], 3, 2, False, 20, [])
    result = OfflineEvidenceJudge()(**inputs)
    assert result.sufficient is False and result.selected_ids == []


def test_fused_items_count_by_their_span() -> None:
    fused = EvidenceItem(
        node_id="fused_1",
        kind=NodeKind.FUSED,
        timestamp=datetime(2026, 5, 11, 22, 0),
        end=datetime(2026, 5, 12, 1, 0),
        device="watch_david",
        text="Night of restless sleep",
        score=0.4,
    )
    coverage = {c.facet: c.evidence_ids for c in judge([fused]).coverage}
    assert coverage["time: 2026-05-12 00:00 to 2026-05-12 11:59"] == ["fused_1"]
    assert "fused summary: Night of restless sleep" in fused.line()


def test_llm_judge_parses_typed_outputs_and_drops_unknown_ids() -> None:
    answer = {
        "coverage": json.dumps([{"facet": "sleep score", "covered": True, "evidence_ids": ["e1"]}]),
        "sufficient": "true",
        "missing_facets": "[]",
        "selected_ids": json.dumps(["e1", "made_up", "e3"]),
        "next_plan": "null",
    }
    lm = DummyLM([answer])
    inputs = judge_inputs(
        "How did I sleep on Tuesday?",
        WED,
        QUESTION_PLAN,
        ["q"],
        [QUESTION_PLAN],
        2,
        2,
        False,
        20,
        [SLEEP, COFFEE, RUN],
    )
    with dspy.context(lm=lm):
        result = EvidenceJudge()(**inputs)
    assert result.coverage == [
        FacetCoverage(facet="sleep score", covered=True, evidence_ids=["e1"])
    ]
    assert result.sufficient is True
    assert result.selected_ids == ["e1", "e3"]
    assert result.next_plan is None
    prompt = lm.history[-1]["messages"]
    assert (
        "[e1] [2026-05-12 07:00:00] [watch_david] [bedroom] Sleep score 82" in prompt[-1]["content"]
    )
