"""The offline planner (and the LLM planner's shape) against hand-read questions."""

from __future__ import annotations

import json
from datetime import date, datetime, time

import dspy
import pytest
from dspy.utils.dummies import DummyLM

from memory.search.plan import MAX_QUERY_CHARS, RoundPlan
from signatures.planning import PlanRetrievalRound, RoundPlanner, planner_inputs
from signatures.planning_offline import (
    OfflineRoundPlanner,
    alternative_plans,
    clip_query,
    first_unexecuted,
)
from signatures.question_words import find_devices, find_keywords, find_people, resolve_pronouns

WED = datetime(2026, 5, 13, 15, 0)
PEOPLE = ["David", "Emma", "Lily"]
DEVICES = [
    "watch_david",
    "watch_emma",
    "doorbell_cam",
    "kitchen_fridge",
    "phone_david",
    "living_room_speaker",
]


@pytest.fixture(autouse=True)
def _reset_dspy():
    with dspy.context(lm=None):
        yield


def plan_for(question: str, requester: str | None = "David", previous=()) -> RoundPlan:
    inputs = planner_inputs(question, WED, requester, PEOPLE, DEVICES, list(previous), [])
    return OfflineRoundPlanner()(**inputs).plan


def test_first_person_resolves_to_the_requester() -> None:
    plan = plan_for("How did I sleep on Tuesday?")
    assert plan.entities[0] == "David"
    # the focus keeps the asker's words (the guard's dense list reads the same vector);
    # the name goes to the first rewrite and the lexical query
    assert plan.focus == "How did I sleep on Tuesday?"
    assert plan.semantic_queries[0] == "How did David sleep on Tuesday"
    assert "David" in plan.bm25_query
    assert plan.keywords == ["sleep"]
    window = plan.time_window
    # No special sleep window: the named day, whole (its night would be "Tuesday night").
    assert (window.date, window.start_time, window.end_time) == (
        date(2026, 5, 12),
        time(0, 0),
        time(23, 59, 59),
    )
    assert window.confidence >= 0.6


def test_without_a_requester_pronouns_stay() -> None:
    plan = plan_for("How did I sleep on Tuesday?", requester=None)
    assert plan.entities == []
    assert plan.focus == "How did I sleep on Tuesday?"


def test_pronoun_forms() -> None:
    assert resolve_pronouns("Did my watch see me? I'm sure I did.", "Emma") == (
        "Did Emma's watch see Emma? Emma is sure Emma did."
    )


def test_people_match_case_insensitively_and_by_first_name() -> None:
    assert find_people("what did emma and lily do", ["Emma Stone", "Lily", "David"], None) == [
        "Emma Stone",
        "Lily",
    ]
    assert find_people("what did Emma do", PEOPLE, "David") == ["Emma"]
    assert find_people("what did I do with Emma", PEOPLE, "David") == ["David", "Emma"]


def test_people_by_possessive_and_family_words_only_when_the_name_carries_them() -> None:
    household = ["Maya", "Tom", "Grandpa Ken", "Leo"]
    assert find_people("Where is Maya's phone?", household, None) == ["Maya"]
    assert find_people("What did mum say to dad?", household, None) == []
    assert find_people("When does grandpa arrive?", household, None) == ["Grandpa Ken"]
    assert find_people("Did Ken call?", household, None) == ["Grandpa Ken"]
    assert find_people("What did Grandpa say?", ["Grandpa Ken", "Grandpa Joe"], None) == []


def test_names_that_are_also_words_must_be_capitalised() -> None:
    assert find_people("What may have woken Leo?", ["May", "Leo"], None) == ["Leo"]
    assert find_people("What did May cook?", ["May", "Leo"], None) == ["May"]


def test_first_person_forms_and_curly_apostrophes_find_the_requester() -> None:
    for question in [
        "Where's my phone?",
        "Was I home?",
        "Did they see me?",
        "I’m late, why?",
        "i left my keys where?",
        "I've lost the remote",
        "I did it myself",
    ]:
        assert find_people(question, PEOPLE, "Emma") == ["Emma"], question
    assert find_people("Where is Lily?", PEOPLE, "Emma") == ["Lily"]
    assert resolve_pronouns("I’m out, is my door locked?", "Emma") == (
        "Emma is out, is Emma's door locked?"
    )


@pytest.mark.parametrize(
    ("question", "people", "expected"),
    [
        ("What did my watch record?", ["David"], ["watch_david"]),
        ("What did Emma's watch record?", ["Emma"], ["watch_emma"]),
        ("What did the watches record?", [], ["watch_david", "watch_emma"]),
        ("Who rang the doorbell?", [], ["doorbell_cam"]),
        ("Is there milk in the fridge?", [], ["kitchen_fridge"]),
        ("What did the living room speaker hear?", [], ["living_room_speaker"]),
        ("What did watch_emma log?", ["Emma"], ["watch_emma"]),
        ("What did David cook?", ["David"], []),
    ],
)
def test_devices_from_ids_and_type_words(question: str, people: list[str], expected: list[str]):
    assert find_devices(question, DEVICES, people) == expected


def test_a_persons_device_is_found_inside_a_longer_id() -> None:
    devices = ["watch_maya", "kidswatch_leo"]
    assert find_devices("What did Leo's watch flag?", devices, ["Leo"]) == ["kidswatch_leo"]
    assert find_devices("What did Maya's watch flag?", devices, ["Maya"]) == ["watch_maya"]


def test_device_words_become_entities_of_the_plan() -> None:
    plan = plan_for("What did my watch record yesterday evening?")
    assert plan.entities == ["David", "watch_david"]
    assert "watch_david" in plan.bm25_query
    window = plan.time_window
    assert (window.date, window.start_time, window.end_time) == (
        date(2026, 5, 12),
        time(17, 0),
        time(23, 59, 59),
    )


def test_keywords_drop_question_and_time_words() -> None:
    assert find_keywords("What did Emma buy at the market on Tuesday morning?", ["Emma"]) == [
        "buy",
        "market",
    ]
    assert find_keywords("How many steps did I take, 8,000 or 12000?") == [
        "steps",
        "8,000",
        "12000",
    ]


LONG = (
    "After the argument about the broken blue vase in the living room on Saturday evening, "
    "what did Emma, Lily and David each say to the smart speaker and what did the cameras see?"
)


@pytest.mark.parametrize(
    "question",
    [
        LONG,
        "How did I sleep on Tuesday?",
        "What happened?",
        "Who rang the doorbell and why?",
        "In what order did everyone leave the house this morning, and which devices saw it?",
    ],
)
def test_rewrites_are_at_most_three_and_short(question: str) -> None:
    plan = plan_for(question)
    assert 1 <= len(plan.semantic_queries) <= 3
    assert all(len(q) <= MAX_QUERY_CHARS for q in plan.semantic_queries)
    assert len(set(plan.semantic_queries)) == len(plan.semantic_queries)


def test_first_rewrite_stays_close_to_the_question_and_others_name_the_entities() -> None:
    plan = plan_for("What did Emma and Lily cook on Monday?")
    assert plan.semantic_queries[0] == "What did Emma and Lily cook on Monday"
    assert plan.semantic_queries[1:] == ["Emma cook", "Lily cook"]


def test_clip_query_drops_function_words_before_cutting() -> None:
    clipped = clip_query(LONG)
    assert len(clipped) <= MAX_QUERY_CHARS
    assert clipped.startswith("After argument about broken blue vase living room Saturday evening")


@pytest.mark.parametrize(
    ("question", "dimensions"),
    [
        ("Who was at the door on Monday?", ["user"]),
        ("What did each device record about the fall?", ["device"]),
        ("Did both David and Emma go running?", ["user"]),
        ("Compare what Emma and Lily said about dinner.", ["user"]),
        ("What did everyone think, and which devices recorded it?", ["user", "device"]),
    ],
)
def test_coverage_for_several_people_or_sources(question: str, dimensions: list[str]) -> None:
    coverage = plan_for(question).coverage_diversification
    assert coverage.enabled and coverage.confidence >= 0.6
    assert coverage.dimensions == dimensions


def test_single_subject_fact_has_no_constraints() -> None:
    plan = plan_for("What is Emma's favourite colour?")
    assert not plan.coverage_diversification.enabled
    assert not plan.timeline_mode.enabled
    assert not plan.temporal_neighbors.enabled
    assert not plan.time_window.enabled
    assert plan.seed.time_window_quota is None


@pytest.mark.parametrize(
    "question",
    [
        "What happened after dinner on Monday?",
        "In what order did the kids get ready?",
        "What was the sequence of alarms last night?",
        "What led to the argument?",
        "Why did Lily cry on Sunday?",
    ],
)
def test_timeline_mode_for_sequences(question: str) -> None:
    assert plan_for(question).timeline_mode.enabled


@pytest.mark.parametrize(
    ("question", "direction"),
    [
        ("Why did Lily cry on Sunday?", "back"),
        ("What made Emma take the car in?", "back"),
        ("What happened after dinner on Monday?", "forward"),
        ("What followed the fall, step by step?", "forward"),
        ("How did each of us experience the party?", "none"),
        ("What is Emma's favourite colour?", "none"),
    ],
)
def test_causal_edges_are_walked_toward_causes_or_effects_only_when_asked(
    question: str, direction: str
) -> None:
    links = plan_for(question).causal_links
    assert links.direction == direction and links.confidence >= 0.6
    assert RoundPlan.from_query(question).causal_links.direction == "both"  # no planner: as before


def test_neighbours_for_what_happened_around_but_not_for_a_bare_why() -> None:
    around = plan_for("What happened during the party on Saturday?").temporal_neighbors
    assert around.enabled and around.radius == 3 and around.confidence >= 0.6
    assert not plan_for("Why did Lily cry on Sunday?").temporal_neighbors.enabled


def test_seed_quota_follows_the_paper_table() -> None:
    assert plan_for("What did Emma buy on Tuesday?").seed.time_window_quota == 12
    assert plan_for("What happened on Tuesday, step by step?").seed.time_window_quota == 15
    assert plan_for("In what order did we leave this morning?").seed.time_window_quota == 25
    assert plan_for("What did David eat yesterday evening?").seed.time_window_quota == 15


def test_a_window_over_several_days_gets_the_broad_quota() -> None:
    assert plan_for("What did Emma buy from Monday to Tuesday?").seed.time_window_quota == 15
    assert plan_for("What did Emma do on Saturday night?").seed.time_window_quota == 15
    assert plan_for("What did Emma buy?").seed.time_window_quota is None


def test_widening_keeps_a_multi_day_window_multi_day() -> None:
    base = plan_for("What did Emma do on Saturday night?")
    assert base.time_window.bounds() == (datetime(2026, 5, 9, 18), datetime(2026, 5, 10, 9, 59, 59))
    widened = [
        p.time_window
        for p in alternative_plans(base)
        if p.time_window.enabled and p.time_window != base.time_window
    ]
    assert widened[0].bounds() == (datetime(2026, 5, 9), datetime(2026, 5, 10, 23, 59, 59))
    assert any(not p.time_window.enabled for p in alternative_plans(base))


def test_a_later_round_never_repeats_an_executed_plan() -> None:
    first = plan_for("What did Emma buy on Tuesday?")
    second = plan_for("What did Emma buy on Tuesday?", previous=[first])
    third = plan_for("What did Emma buy on Tuesday?", previous=[first, second])
    signatures = {first.signature(), second.signature(), third.signature()}
    assert len(signatures) == 3


def test_alternative_plans_all_differ_from_the_base() -> None:
    base = plan_for("What did my watch record yesterday evening?")
    alternatives = list(alternative_plans(base, ["heart rate"]))
    assert len(alternatives) >= 5
    assert all(p.signature() != base.signature() for p in alternatives)
    assert alternatives[0].focus.startswith("heart rate")
    assert alternatives[0].time_window == base.time_window
    assert first_unexecuted([base, *alternatives], [base]) == alternatives[0]
    assert first_unexecuted([base], [base]) is None


def test_llm_planner_returns_a_typed_plan_from_the_same_inputs() -> None:
    answer = {
        "focus": "David sleep Tuesday",
        "semantic_queries": ["David sleep score"],
        "time_window": {
            "enabled": True,
            "date": "2026-05-12",
            "start_time": "00:00:00",
            "end_time": "11:59:59",
            "confidence": 0.9,
        },
    }
    lm = DummyLM([{"plan": json.dumps(answer)}])
    inputs = planner_inputs("How did I sleep on Tuesday?", WED, "David", PEOPLE, DEVICES, [], [])
    with dspy.context(lm=lm):
        plan = RoundPlanner()(**inputs).plan
    assert isinstance(plan, RoundPlan)
    assert plan.focus == "David sleep Tuesday"
    assert plan.time_window.bounds() == (datetime(2026, 5, 12), datetime(2026, 5, 12, 11, 59, 59))
    prompt = lm.history[-1]["messages"][0]["content"]
    assert "most recent such day at or before" in prompt


@pytest.mark.parametrize(
    ("said", "read"),
    [("back", "back"), ("backward", "back"), ("to the effects", "forward"), ("none", "none")]
    + [("sideways", "both"), (None, "both")],
)
def test_an_llm_plans_causal_direction_is_read_leniently(said: object, read: str) -> None:
    """A wording the schema does not list is read as the nearest direction, or both ways (as
    before the constraint); the plan is never rejected for it."""
    answer = {
        "focus": "why did David wake up",
        "causal_links": {"direction": said, "confidence": 0.8},
    }
    lm = DummyLM([{"plan": json.dumps(answer)}])
    inputs = planner_inputs("Why did I wake up?", WED, "David", PEOPLE, DEVICES, [], [])
    with dspy.context(lm=lm):
        plan = RoundPlanner()(**inputs).plan
    assert plan.causal_links.direction == read and plan.causal_links.confidence == 0.8


def test_signature_fields_are_the_documented_ones() -> None:
    assert list(PlanRetrievalRound.input_fields) == [
        "question",
        "question_time",
        "calendar",
        "requester",
        "known_people",
        "known_devices",
        "previous_plans",
        "searched_queries",
    ]
    assert list(PlanRetrievalRound.output_fields) == ["plan"]


def test_dates_and_clock_times_yield_no_keywords_and_places_become_entities() -> None:
    plan = plan_for("What did Emma buy at Costco on May 12 at 7 pm?")
    assert plan.keywords == ["buy"]
    assert plan.entities == ["Emma", "Costco"]
    assert plan.time_window.bounds() == (datetime(2026, 5, 12, 18, 0), datetime(2026, 5, 12, 20, 0))
