"""The retrieval controller graph, driven end to end on a real MemoryStore.

Decisions are scripted with DSPy's DummyLM (LLM policy) or run by the offline twins;
the store is a real MemoryStore under tmp_path with a tiny hashed bag-of-words
embedder, so search, context assembly and the loop are all the real code.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.utils.dummies import DummyLM

from graphs import resources
from graphs.direct import invoker
from graphs.retrieval import (
    ABLATIONS,
    MEMFUSE,
    ControllerOptions,
    retrieve,
)
from graphs.retrieval import nodes as retrieval_nodes
from graphs.retrieval.context import RetrievalContext
from graphs.retrieval.graph import builder, graph
from graphs.retrieval.planning import final_selection
from graphs.retrieval.state import RetrievalOutput, keep_best, keep_first
from memfuse.settings import MemFuseSettings
from memory.embeddings import Embedder, SentenceTransformerEmbedder
from memory.errors import ConfigurationError, UnknownRecipeError
from memory.models import Event
from memory.read_request import read_request
from memory.records import Candidate, ExpansionTrace
from memory.search.config import RECIPES
from memory.search.plan import RoundPlan
from memory.store import MemoryStore
from tests.support.embedders import tiny_embedder

ASKED = "2026-05-13T15:00:00"  # a Wednesday afternoon


HOUSEHOLD = [
    ("e01", "2026-05-11 07:00", "watch_david", "health", "Sleep score 71, 6h40m asleep", ["David"]),
    (
        "e02",
        "2026-05-11 08:10",
        "phone_emma",
        "app_usage",
        "Emma ordered groceries in the app",
        ["Emma"],
    ),
    (
        "e03",
        "2026-05-11 12:30",
        "kitchen_fridge",
        "environment",
        "Fridge door opened, milk low",
        [],
    ),
    ("e04", "2026-05-11 18:40", "doorbell_cam", "vision", "Courier left a parcel at the door", []),
    (
        "e05",
        "2026-05-11 19:30",
        "living_room_speaker",
        "dialogue",
        "David and Emma discussed the weekend trip",
        ["David", "Emma"],
    ),
    ("e06", "2026-05-12 06:50", "watch_david", "health", "Sleep score 82, 7h10m asleep", ["David"]),
    ("e07", "2026-05-12 07:05", "watch_emma", "health", "Sleep score 64, restless night", ["Emma"]),
    ("e08", "2026-05-12 07:30", "kitchen_fridge", "environment", "Milk carton taken out", []),
    ("e09", "2026-05-12 08:15", "phone_david", "location", "David left home for work", ["David"]),
    (
        "e10",
        "2026-05-12 09:00",
        "watch_emma",
        "motion",
        "Emma walked 2300 steps to the bakery",
        ["Emma"],
    ),
    (
        "e11",
        "2026-05-12 13:10",
        "doorbell_cam",
        "vision",
        "Lily arrived home from school",
        ["Lily"],
    ),
    ("e12", "2026-05-12 15:00", "living_room_speaker", "audio", "Lily practised piano", ["Lily"]),
    (
        "e13",
        "2026-05-12 18:30",
        "kitchen_fridge",
        "environment",
        "Fridge temperature rose to 7C",
        [],
    ),
    (
        "e14",
        "2026-05-12 19:00",
        "living_room_speaker",
        "dialogue",
        "Emma asked the speaker for a lasagna recipe",
        ["Emma"],
    ),
    (
        "e15",
        "2026-05-12 20:15",
        "watch_david",
        "health",
        "Heart rate peaked at 128 on a run",
        ["David"],
    ),
    ("e16", "2026-05-12 21:40", "phone_emma", "app_usage", "Emma watched a cooking show", ["Emma"]),
    ("e17", "2026-05-12 23:10", "watch_david", "health", "David fell asleep", ["David"]),
    ("e18", "2026-05-13 06:45", "watch_david", "health", "Sleep score 77, 6h55m asleep", ["David"]),
    ("e19", "2026-05-13 07:20", "doorbell_cam", "vision", "Emma left for the gym", ["Emma"]),
    ("e20", "2026-05-13 10:00", "kitchen_fridge", "environment", "Fridge ordered milk", []),
    ("e21", "2026-05-11 22:00", "watch_emma", "health", "Emma fell asleep reading", ["Emma"]),
    (
        "e22",
        "2026-05-13 12:00",
        "phone_david",
        "app_usage",
        "David booked a dentist visit",
        ["David"],
    ),
]


@pytest.fixture(autouse=True)
def _reset_dspy() -> Iterator[None]:
    with dspy.context(lm=None, adapter=None):
        yield


def open_with(
    folder: Path, rows: list[tuple[Any, ...]], embedder: Embedder | None = None
) -> MemoryStore:
    """A real store holding one event per (id, time, device, modality, text, place, people)."""
    opened = MemoryStore.open(folder, embedder=embedder or tiny_embedder())
    opened.add_events(
        [
            Event(
                event_id=i,
                timestamp=ts,
                device=device,
                modality=modality,
                location=place,
                description=text,
                characters=tuple(people),
            )
            for i, ts, device, modality, text, place, people in rows
        ]
    )
    return opened


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    opened = open_with(tmp_path / "store", [(*row[:5], "home", row[5]) for row in HOUSEHOLD])
    yield opened
    opened.close()


def plan_json(focus: str, **extra: Any) -> str:
    return RoundPlan(focus=focus, bm25_query=focus, **extra).model_dump_json()


def judgement(sufficient: bool, selected: list[str], next_plan: str | None = None) -> dict:
    return {
        "coverage": json.dumps(
            [{"facet": "sleep", "covered": sufficient, "evidence_ids": selected[:1]}]
        ),
        "sufficient": json.dumps(sufficient),
        "missing_facets": json.dumps([] if sufficient else ["sleep score"]),
        "selected_ids": json.dumps(selected),
        "next_plan": next_plan or "null",
    }


def llm_options(lm: DummyLM, **changes: Any) -> ControllerOptions:
    return ControllerOptions(policy="llm", lm=lm, **changes)


def signatures_of(plans: list[RoundPlan]) -> list[str]:
    return [p.signature() for p in plans]


# --- the loop ----------------------------------------------------------------------


def test_cannot_stop_before_the_minimum_rounds_even_when_judged_sufficient(
    store: MemoryStore,
) -> None:
    lm = DummyLM(
        [
            {"plan": plan_json("David sleep score Tuesday")},
            judgement(True, ["e06"]),
            judgement(True, ["e06"]),
        ]
    )
    result = retrieve(
        store,
        "How did I sleep on Tuesday?",
        question_time=ASKED,
        requester="David",
        k=5,
        options=llm_options(lm, min_rounds=2),
    )
    assert result.round == 2
    assert [j.sufficient for j in result.judgements] == [False, True]
    assert [j.source for j in result.judgements] == ["llm", "llm"]
    assert any("before the minimum of 2 rounds" in n for n in result.notes)
    assert len(set(signatures_of(result.plans))) == 2
    assert result.stop_reason == "judged sufficient after round 2"
    assert result.event_ids[0] == "e06"


def test_stops_at_the_maximum_when_never_sufficient(store: MemoryStore) -> None:
    plans = [plan_json(f"query variant {n}") for n in range(2, 6)]
    lm = DummyLM(
        [
            {"plan": plan_json("David zeppelin ride")},
            *(judgement(False, ["e09"], plan) for plan in plans),
            judgement(False, ["e09"]),
        ]
    )
    result = retrieve(
        store,
        "Did David ride a zeppelin?",
        question_time=ASKED,
        admin=True,
        k=5,
        options=llm_options(lm),
    )
    assert result.round == 5
    assert len(result.judgements) == 5
    assert result.judgements[-1].next_plan is None
    assert result.stop_reason == "reached the maximum of 5 rounds"
    assert [p.focus for p in result.plans] == [
        "David zeppelin ride",
        *(f"query variant {n}" for n in range(2, 6)),
    ]


def test_offline_policy_gives_up_on_a_facet_its_follow_up_already_searched(
    store: MemoryStore,
) -> None:
    """No event mentions a zeppelin: round 2 searches for it explicitly, finds nothing, and
    the twin proposes no third plan — rounds are not spent re-searching the same words."""
    result = retrieve(
        store,
        "Did David ride a zeppelin on Tuesday?",
        question_time=ASKED,
        admin=True,
        k=5,
        options=ControllerOptions(policy="offline"),
    )
    assert result.round == 2
    assert all(not j.sufficient for j in result.judgements)
    assert all("keyword: zeppelin" in j.missing_facets for j in result.judgements)
    assert "zeppelin" in result.plans[1].focus.lower()
    assert len(set(signatures_of(result.plans))) == 2
    assert result.stop_reason.startswith("no further plan after round 2")
    assert len(result.event_ids) == 5


def test_offline_policy_stops_once_sufficient_after_the_minimum(store: MemoryStore) -> None:
    result = retrieve(
        store,
        "How did I sleep on Tuesday?",
        question_time=ASKED,
        requester="David",
        k=5,
        options=ControllerOptions(policy="offline"),
    )
    assert result.round == 2
    assert [j.sufficient for j in result.judgements] == [False, True]
    first = result.plans[0]
    assert first.entities == ["David"]
    # a named day is that whole day (no special "sleep" window; time is a prior, not a filter)
    assert first.time_window.bounds() == (datetime(2026, 5, 12), datetime(2026, 5, 12, 23, 59, 59))
    assert result.event_ids[0] == "e06"  # the one event showing David, sleep and the window


def test_a_repeated_plan_is_refused(store: MemoryStore) -> None:
    first = plan_json("David sleep score Tuesday")
    lm = DummyLM(
        [
            {"plan": first},
            judgement(False, ["e06"], first),  # proposes the executed plan …
            judgement(False, ["e06"], first),  # … and again
            judgement(True, ["e06"]),
        ]
    )
    result = retrieve(
        store,
        "How did I sleep on Tuesday?",
        question_time=ASKED,
        requester="David",
        k=5,
        options=llm_options(lm),
    )
    assert result.round == 3
    assert len(set(signatures_of(result.plans))) == 3
    replaced = [n for n in result.notes if "proposed an executed plan" in n]
    assert len(replaced) == 2


def test_back_fill_fills_the_context_to_k(store: MemoryStore) -> None:
    lm = DummyLM(
        [
            {"plan": plan_json("sleep score")},
            judgement(False, ["e18", "e06"], plan_json("fridge milk")),
            judgement(True, ["e18", "e06"]),
        ]
    )
    result = retrieve(
        store,
        "How did I sleep?",
        question_time=ASKED,
        requester="David",
        k=8,
        options=llm_options(lm),
    )
    assert len(result.context) == 8
    assert len(result.event_ids) == 8
    assert result.event_ids[:2] == ["e18", "e06"]
    pinned = [e for e in result.context if e.node_id in {"e18", "e06"}]
    assert all(e.provenance for e in pinned)
    stamps = [e.timestamp for e in result.context]
    assert stamps == sorted(stamps)
    # every back-filled event is one the rounds found (the pool), none from elsewhere
    assert sum(map(len, result.added)) == 8


def test_malformed_llm_output_falls_back_to_the_offline_twin(store: MemoryStore) -> None:
    lm = DummyLM(
        [
            {"plan": plan_json("David sleep score Tuesday")},
            {"sufficient": "not json at all"},  # chat adapter fails …
            {"sufficient": "still not json"},  # … and so does the JSON adapter retry
            judgement(True, ["e06"]),
        ]
    )
    result = retrieve(
        store,
        "How did I sleep on Tuesday?",
        question_time=ASKED,
        requester="David",
        k=5,
        options=llm_options(lm),
    )
    assert [j.source for j in result.judgements] == ["offline", "llm"]
    assert any("round 1 judge: LLM output unusable" in n for n in result.notes)
    assert result.round == 2


# --- ablations ---------------------------------------------------------------------


def test_without_the_controller_one_round_and_no_judge(store: MemoryStore) -> None:
    result = retrieve(
        store,
        "What did Emma do on Tuesday?",
        question_time=ASKED,
        admin=True,
        k=6,
        options=ControllerOptions(use_controller=False, policy="offline"),
    )
    assert result.round == 1
    assert result.judgements == []
    assert result.stop_reason == "one search round (controller off)"
    # the confident Tuesday window is a prior: all of Emma's Tuesday events are found, and the
    # guard keeps the plain question's best hit from another day (Monday's grocery order)
    assert {"e07", "e10", "e14", "e16"} <= set(result.event_ids)
    assert "e02" in result.event_ids


def test_without_constraints_the_window_is_ignored(store: MemoryStore) -> None:
    options = ControllerOptions(use_controller=False, use_constraints=False, policy="offline")
    result = retrieve(
        store, "What did Emma do on Tuesday?", question_time=ASKED, admin=True, k=6, options=options
    )
    assert result.plans[0].time_window.enabled  # the plan still has it …
    days = {e.timestamp.date().isoformat() for e in result.context}
    assert days - {"2026-05-12"}  # … but the search did not honour it


def test_named_ablations() -> None:
    assert set(ABLATIONS) == {
        "memfuse",
        "memfuse_no_ar",
        "memfuse_no_rc",
        "memfuse_no_graph",
        "memfuse_no_fusion",
        "memfuse_no_moments",
        "memfuse_dense_guard",
    }
    assert ABLATIONS["memfuse_no_ar"].use_controller is False
    assert ABLATIONS["memfuse_no_rc"].use_constraints is False
    assert ABLATIONS["memfuse_no_graph"].recipe == "memfuse_no_graph"
    assert ABLATIONS["memfuse_no_fusion"].recipe == "memfuse_no_fusion"
    assert not RECIPES["memfuse_no_fusion"].use_moments  # moments are fusion's too
    assert not RECIPES[ABLATIONS["memfuse_no_moments"].recipe].use_moments
    assert RECIPES["memfuse_no_moments"].use_fused
    assert RECIPES[ABLATIONS["memfuse_dense_guard"].recipe].guard.lexical is False
    assert RECIPES["memfuse"].guard.lexical is True  # the default: hybrid's reserved slots
    assert MEMFUSE.recipe == "memfuse" and MEMFUSE.use_controller and MEMFUSE.use_constraints


# --- the compiled graph, its context and its pure parts --------------------------------


def test_compiled_graph_opens_the_store_from_the_context_once(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    opened: list[tuple[str, str]] = []

    def fake_open(data_dir: str, namespace: str = "default", **_: Any) -> MemoryStore:
        opened.append((str(data_dir), namespace))
        return store

    monkeypatch.setattr(MemoryStore, "open", staticmethod(fake_open))
    monkeypatch.setattr(resources, "_STORES", {})
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "household.sqlite").touch()  # a store is there to be read
    context = {
        "data_dir": str(tmp_path / "elsewhere"),
        "namespace": "household",
        "policy": "offline",
        "k": 4,
    }
    fresh = builder.compile()
    for _ in range(2):
        output = fresh.invoke(
            {"question": "Who arrived home from school?", "question_time": ASKED, "admin": True},
            context=context,
        )
        assert output["event_ids"][0] == "e11"
        assert len(output["context"]) == 4
    assert opened == [(str(tmp_path / "elsewhere"), "household")]
    assert graph.name == "retrieval"


def test_llm_policy_without_an_llm_is_a_configuration_error(store: MemoryStore) -> None:
    settings = MemFuseSettings(llm_model=None, _env_file=None)
    options = ControllerOptions(policy="llm", settings=settings)
    with pytest.raises(ConfigurationError, match="needs an LLM"):
        retrieve(store, "How did I sleep?", question_time=ASKED, admin=True, options=options)


def test_auto_policy_without_an_llm_runs_offline(store: MemoryStore) -> None:
    settings = MemFuseSettings(llm_model=None, _env_file=None)
    result = retrieve(
        store,
        "How did I sleep on Tuesday?",
        question_time=ASKED,
        requester="David",
        k=5,
        options=ControllerOptions(settings=settings),
    )
    assert {j.source for j in result.judgements} == {"offline"}


def test_context_validates_its_knobs() -> None:
    with pytest.raises(ConfigurationError, match="max_rounds"):
        RetrievalContext(min_rounds=3, max_rounds=2)
    with pytest.raises(UnknownRecipeError):
        RetrievalContext(recipe="nope")
    with pytest.raises(ConfigurationError, match="k must be"):
        RetrievalContext(k=0)
    with pytest.raises(ConfigurationError, match="followup_redundancy"):
        RetrievalContext(followup_redundancy=1.5)
    with pytest.raises(ConfigurationError, match="followup_evidence_weight"):
        RetrievalContext(followup_evidence_weight=-0.1)
    with pytest.raises(ConfigurationError, match="followup_evidence_events"):
        RetrievalContext(followup_evidence_events=-1)


def candidate(node_id: str, score: float) -> Candidate:
    return Candidate(
        node_id=node_id, kind="event", score=score, trace=ExpansionTrace(seed_id=node_id)
    )


def test_final_selection_pins_the_judged_ids_then_back_fills() -> None:
    pool = {
        c.node_id: c
        for c in [
            candidate("a", 0.9),
            candidate("b", 0.5),
            candidate("c", 0.7),
            candidate("d", 0.1),
        ]
    }
    found = {"c": (1, 0), "b": (1, 1), "a": (2, 0), "d": (2, 1)}
    # history: round 1's ranking (c, b) before what round 2 added (a)
    assert final_selection(["d", "ghost"], pool, 3, found, "history") == ["d", "c", "b"]
    assert final_selection(["d", "ghost"], pool, 3, found, "score") == ["d", "a", "c"]
    assert final_selection([], pool, 10, found) == ["c", "b", "a", "d"]
    assert final_selection([], pool, 10, None, "score") == ["a", "c", "b", "d"]


def test_pool_remembers_where_each_candidate_was_first_found() -> None:
    assert keep_first({"a": (1, 3)}, {"a": (2, 0), "b": (2, 1)}) == {"a": (1, 3), "b": (2, 1)}


def test_pool_keeps_each_ids_best_score_and_trace() -> None:
    merged = keep_best(
        {"a": candidate("a", 0.4), "b": candidate("b", 0.9)},
        {"a": candidate("a", 0.8), "b": candidate("b", 0.1)},
    )
    assert {k: v.score for k, v in merged.items()} == {"a": 0.8, "b": 0.9}


def test_a_saved_program_is_loaded_from_the_programs_dir(tmp_path: Path) -> None:
    saved = retrieval_nodes.llm_module("plan")
    demo = dspy.Example(question="q?", plan=RoundPlan(focus="q")).with_inputs("question")
    trained = saved.deepcopy()
    trained.plan_round.demos = [demo]
    trained.save(str(tmp_path / retrieval_nodes.PROGRAM_FILES["plan"]))
    loaded = retrieval_nodes.llm_module("plan", str(tmp_path))
    assert len(loaded.plan_round.demos) == 1
    assert retrieval_nodes.llm_module("plan").plan_round.demos == []


def test_a_causal_question_looks_back_from_the_effect(store: MemoryStore) -> None:
    """ "Why … on Tuesday evening?": the window ends with the effect's evening and reaches three
    days back, so Monday's open fridge door (the cause) is inside it and in the context."""
    result = retrieve(
        store,
        "Why did the fridge get warm on Tuesday evening?",
        question_time=ASKED,
        admin=True,
        k=6,
        options=ControllerOptions(policy="offline"),
    )
    window = result.plans[0].time_window
    assert window.bounds() == (datetime(2026, 5, 9, 17, 0), datetime(2026, 5, 12, 23, 59, 59))
    for plan in result.plans:  # no later round moves the window past the effect
        bounds = plan.time_window.bounds()
        assert bounds is None or bounds[1] <= datetime(2026, 5, 12, 23, 59, 59)
    assert {"e03", "e13"} <= set(result.event_ids)


def test_a_wrong_plan_and_judge_cannot_push_out_the_guarded_hits(store: MemoryStore) -> None:
    """An LLM planner sure of the wrong day and a judge picking unrelated events: the plain
    question's best hybrid hits (round 1's guard) are still in the final context."""
    from memory.retrieval import HYBRID_RRF, search
    from memory.search.config import GuardConfig
    from memory.search.guard import reserved_slots
    from memory.search.plan import TimeWindow

    question = "What did Lily do after school?"
    wrong_day = {
        "time_window": TimeWindow(enabled=True, date=datetime(2026, 5, 11).date(), confidence=1.0)
    }
    unrelated = ["e01", "e02", "e03", "e04", "e05"]
    lm = DummyLM(
        [
            {"plan": plan_json("weekend trip groceries", **wrong_day)},
            judgement(False, unrelated, plan_json("parcel courier", **wrong_day)),
            judgement(True, unrelated),
        ]
    )
    result = retrieve(
        store, question, question_time=ASKED, admin=True, k=5, options=llm_options(lm)
    )
    reserve = reserved_slots(5, 1.0, GuardConfig())
    hybrid = search(store, question, HYBRID_RRF.sized(30)).event_ids()[:reserve]
    assert reserve == 2 and {"e11", "e12"} & set(hybrid)
    assert set(hybrid) <= set(result.event_ids)
    assert result.event_ids[0] in unrelated  # the judge's head keeps its place


# --- rounds that find what the first could not -------------------------------------

SMOKE_EVENING = [
    *(
        (
            f"a{i}",
            f"2026-05-1{i % 3 + 1} 0{i}:00",
            "hall_alarm",
            "audio",
            f"Smoke alarm self test number {i}",
            "hallway",
            [],
        )
        for i in range(1, 7)
    ),
    (
        "s1",
        "2026-05-12 18:05",
        "kitchen_alarm",
        "audio",
        "Smoke alarm sounded loudly",
        "kitchen",
        [],
    ),
    (
        "o1",
        "2026-05-12 17:58",
        "kitchen_oven",
        "device_status",
        "Oven grill left on at 250 degrees with toast inside",
        "kitchen",
        [],
    ),
    ("g1", "2026-05-12 19:30", "garden_cam", "vision", "Fox crossed the lawn", "garden", []),
]


@pytest.fixture
def smoke_store(tmp_path: Path) -> Iterator[MemoryStore]:
    """On the default model (the bundled MiniLM): whether a later round's find may take a
    place from round 1 is decided by meaning (`graphs.retrieval.admission`), which hashed
    words do not measure."""
    opened = open_with(tmp_path / "smoke", SMOKE_EVENING, SentenceTransformerEmbedder())
    yield opened
    opened.close()


def test_the_pivot_round_finds_a_cause_on_another_device(smoke_store: MemoryStore) -> None:
    """The oven shares no word with the question: one search cannot rank it into a context
    of five, but it was recorded minutes before the alarm, in the same room."""
    asked = {"question_time": "2026-05-13T09:00:00", "admin": True, "k": 5}
    question = "Why did the smoke alarm sound?"
    single = retrieve(smoke_store, question, options=ABLATIONS["memfuse_no_ar"], **asked)
    assert "o1" not in single.event_ids
    full = retrieve(smoke_store, question, options=MEMFUSE, **asked)
    assert full.plans[1].pivot.enabled and "s1" in full.plans[1].pivot.anchors
    assert "o1" in full.event_ids
    assert "o1" in full.added[1]  # the trace says which round found it
    assert {i for added in full.added for i in added} == set(full.event_ids)


def test_when_the_question_names_no_time_a_last_round_searches_the_evidences_day(
    smoke_store: MemoryStore,
) -> None:
    """ "Why did the smoke alarm sound?" names no day, but after the pivot most of the best
    evidence falls on the 12th: a third round searches the question again over that day, from
    three days before it (a why-question looks back), and then the twin stops."""
    asked = {"question_time": "2026-05-13T09:00:00", "admin": True, "k": 5}
    full = retrieve(smoke_store, "Why did the smoke alarm sound?", options=MEMFUSE, **asked)
    assert full.round == 3 and "sufficient after round 3" in full.stop_reason
    window = full.plans[2].time_window
    assert window.bounds() == (datetime(2026, 5, 9), datetime(2026, 5, 12, 23, 59, 59))
    assert not full.plans[2].pivot.enabled
    assert full.plans[2].focus == full.plans[0].focus  # the question's own plan, dated
    named = retrieve(smoke_store, "Why did the smoke alarm sound on the 12th?", **asked)
    assert named.round == 2  # the question's own window: no evidence window


def chat(event_id: str, when: str, who: str, text: str) -> tuple[Any, ...]:
    return (event_id, when, f"chat_{who.lower()}", "dialogue", f"{who} said: {text}", "chat", [who])


GINAS_FLIGHT = [
    chat(
        "g1",
        "2026-05-10 19:00",
        "Gina",
        "I fly to Lisbon on Friday. Which book should I bring for the flight?",
    ),
    chat(
        "j1",
        "2026-05-10 19:01",
        "Jon",
        "Take Dune, best novel for a long plane journey to Portugal.",
    ),
    chat("g2", "2026-05-10 19:02", "Gina", "Great, thanks!"),
    *(
        chat(
            f"r{day}",
            f"2026-05-0{day} 18:00",
            "Gina",
            "Still looking for a good book for my flight to Lisbon.",
        )
        for day in range(3, 9)
    ),
    chat(
        "d1",
        "2026-05-03 18:00",
        "Gina",
        "I read three chapters of my book on the flight home from Madrid.",
    ),
    chat(
        "d2",
        "2026-05-04 20:00",
        "Gina",
        "On my last flight I could not read at all, the baby behind me cried for hours.",
    ),
    chat(
        "d3",
        "2026-05-06 21:00",
        "Gina",
        "I love to read on a flight, it is the only time nobody can reach me.",
    ),
    chat("d4", "2026-05-05 10:01", "Jon", "My sister adopted a puppy called Biscuit."),
    chat("d5", "2026-05-09 17:00", "Jon", "I watched a documentary about whales last night."),
    chat("d6", "2026-05-09 17:01", "Gina", "Whales are amazing."),
]


GINAS_QUESTION = "Which book was Gina told to bring to Lisbon?"


def ask_gina(
    tmp_path: Path, rows: list[tuple[Any, ...]], k: int, *options: Any
) -> list[RetrievalOutput]:
    """`GINAS_QUESTION` over `rows` (asked two days on) with each of `options`: the outputs."""
    store = open_with(tmp_path / "chat", rows, SentenceTransformerEmbedder())
    try:
        asked = {"question_time": "2026-05-12T10:00:00", "admin": True, "k": k}
        return [retrieve(store, GINAS_QUESTION, options=o, **asked) for o in options]
    finally:
        store.close()


def test_the_other_speakers_reply_is_read_with_the_question_it_answers(tmp_path: Path) -> None:
    """Jon's answer shares no word with the question (a novel to take for Portugal, not a book
    to bring to Lisbon, and no Gina): on its own it ranks below Gina's six near-identical
    laments and her flight stories; read with her question (its moment, fusion's reading of a
    conversation: `memory.moments`) it makes a context of nine."""
    alone, read = ask_gina(tmp_path, GINAS_FLIGHT, 9, ABLATIONS["memfuse_no_moments"], MEMFUSE)
    assert "j1" not in alone.event_ids
    assert "j1" in read.event_ids


def test_round_two_finds_the_other_speakers_reply_that_round_one_cannot_reach(
    tmp_path: Path,
) -> None:
    """Jon answers twelve minutes after Gina asks — too far apart to make a moment — and his
    answer shares no word with the question, so one round ranks it below a context of eight
    (her laments, her flight stories). Round 2 pivots on the best evidence, Gina's question,
    and reads the turns beside it: Jon's reply comes in, found by that round."""
    late = {
        "j1": chat("j1", "2026-05-10 19:12", "Jon", GINAS_FLIGHT[1][4].split(": ", 1)[1]),
        "g2": chat("g2", "2026-05-10 19:13", "Gina", "Great, thanks!"),
    }
    rows = [late.get(row[0], row) for row in GINAS_FLIGHT]
    one, full = ask_gina(tmp_path, rows, 8, ABLATIONS["memfuse_no_ar"], MEMFUSE)
    assert "j1" not in one.event_ids
    assert full.round == 2 and full.plans[1].pivot.enabled
    assert "g1" in full.plans[1].pivot.anchors
    assert "j1" in full.event_ids and "j1" in full.added[1]
    # what found it, in the output and in the context's provenance
    assert full.found_by["j1"] == "pivot:colocated"
    assert set(full.found_by) == set(full.added[1])
    (entry,) = [e for e in full.context if e.node_id == "j1"]
    assert entry.provenance.startswith("pivot:colocated of ")
    assert one.found_by == {}  # one round: nothing found later
    # the pool: every event found, with its round — the context's among them, and Jon's reply
    # found by round 2 only; one round pools nothing later than round 1
    assert set(full.event_ids) <= set(full.pooled) and full.pooled["j1"] == 2
    assert set(one.pooled.values()) == {1} and set(one.event_ids) <= set(one.pooled)


def phone_week() -> list[tuple[Any, ...]]:
    """Eve's phone over a week: a daily screen-time report at 21:48, three routine logs a day
    that share its device, person and much of its wording, and the TV each evening."""
    apps = ["news", "radio", "puzzle", "video", "chat", "maps", "music"]
    rows: list[tuple[Any, ...]] = []
    for day in range(11, 18):
        report = (
            f"Eve's phone daily report: {40 + 13 * (day % 5)} min on screen, mostly the "
            f"{apps[day - 11]} app, {60 + day} pickups"
        )
        rows.append(
            (f"st{day}", f"2026-05-{day} 21:48", "phone_eve", "app_usage", report, "home", ["Eve"])
        )
        for hour, text in [
            (
                "08:10",
                "Eve's phone connected to the home Wi-Fi; the screen had been unlocked 12 times",
            ),
            ("13:05", "Eve's phone on the home Wi-Fi after a short gap; 9 notifications waiting"),
            (
                "21:20",
                "Eve's phone was face down on the table with the screen on, 4 unread messages",
            ),
        ]:
            rows.append(
                (
                    f"w{day}_{hour[:2]}",
                    f"2026-05-{day} {hour}",
                    "phone_eve",
                    "device_status",
                    text,
                    "home",
                    ["Eve"],
                )
            )
        rows.append(
            (
                f"tv{day}",
                f"2026-05-{day} 20:00",
                "tv_living",
                "app_usage",
                "Eve watched a quiz show on the living room TV for 30 minutes",
                "living_room",
                ["Eve"],
            )
        )
    return rows


def one_round_and_all(
    tmp_path: Path, question: str, k: int = 10
) -> tuple[RetrievalOutput, RetrievalOutput]:
    """`question` over Eve's phone week (asked the next morning): memfuse_no_ar's output,
    then memfuse's."""
    store = open_with(tmp_path / "week", phone_week(), SentenceTransformerEmbedder())
    try:
        asked = {"question_time": "2026-05-18T10:00:00", "admin": True, "k": k}
        single = retrieve(store, question, options=ABLATIONS["memfuse_no_ar"], **asked)
        return single, retrieve(store, question, options=MEMFUSE, **asked)
    finally:
        store.close()


def test_over_a_week_the_pivot_round_finds_another_days_record(tmp_path: Path) -> None:
    """A question over a week: one search ranks only some of the seven daily reports into a
    context of ten (six; the TV's evenings share the question's words); the pivot round, asked
    for the anchors' series over the question's week, brings the rest — near copies of the
    reports above them, but of other days, so news to this question."""
    single, full = one_round_and_all(tmp_path, "How much was Eve on her phone each day last week?")
    reports = {f"st{day}" for day in range(11, 18)}
    assert full.plans[0].time_window.over_days(0.6)
    assert len(reports & set(single.event_ids)) < len(reports)
    assert full.round == 2 and full.plans[1].pivot.series
    gained = (reports & set(full.event_ids)) - set(single.event_ids)
    assert gained and gained <= set(full.added[1])
    assert reports & set(single.event_ids) < reports & set(full.event_ids)


def test_a_record_the_evidence_shows_recurring_is_followed_to_its_other_days(
    tmp_path: Path,
) -> None:
    """No time phrase, so no window over the week: the first round's best event is one of the
    phone's evening records, which the evidence holds on three days or more, and the pivot
    round follows it to the other days the evidence spans (the daily reports among what it
    brings), as it would over a window the question named.

    How many reports one round already ranks into nine places depends on the last digits of
    the model's vectors, which differ between CPUs (on an AMD EPYC, six of the seven, and the
    pivot adds the seventh day's in place of another; the two gains this test first asked for
    held on the machine it was written on): so it asks for a report of a day round 1 missed,
    found by the pivot round, and no fewer days than round 1 held."""
    single, full = one_round_and_all(
        tmp_path, "How much time did Eve spend on her phone each day?", k=9
    )
    reports = {f"st{day}" for day in range(11, 18)}
    assert full.plans[0].time_window.bounds() is None or full.plans[0].time_window.confidence < 0.6
    pivot = full.plans[1].pivot
    assert pivot.series and pivot.series_from is not None and pivot.series_to is not None
    gained = (reports & set(full.event_ids)) - set(single.event_ids)
    assert gained and gained <= set(full.added[1])
    assert len(reports & set(full.event_ids)) >= len(reports & set(single.event_ids))


def test_a_round_that_could_add_nothing_is_not_run(smoke_store: MemoryStore) -> None:
    """Round 1 already holds every event the question may read: no second round."""
    result = retrieve(
        smoke_store,
        "Why did the smoke alarm sound?",
        question_time="2026-05-13T09:00:00",
        admin=True,
        k=20,
        options=MEMFUSE,
    )
    assert result.round == 1
    assert "every event is already in the pool" in result.stop_reason
    assert any("not run" in note for note in result.notes)


def test_no_round_reads_past_the_question_time(smoke_store: MemoryStore) -> None:
    result = retrieve(
        smoke_store,
        "Why did the smoke alarm sound?",
        question_time="2026-05-12T18:30:00",
        admin=True,
        k=20,
        options=MEMFUSE,
    )
    assert "g1" not in result.event_ids
    assert {"s1", "o1"} <= set(result.event_ids)


@pytest.mark.parametrize(
    "question",
    ["How did I sleep on Tuesday?", "Why was Tom limping?", "What happened in the kitchen?"],
)
@pytest.mark.parametrize("options", [MEMFUSE, ABLATIONS["memfuse_no_ar"]], ids=lambda o: o.name)
def test_the_direct_runtime_returns_what_pregel_returns(
    store: MemoryStore, question: str, options: ControllerOptions
) -> None:
    """`retrieve` runs the graph's nodes in-process by default; through LangGraph's loop the
    same question gives the same output, every field (rounds, plans, judgements, context)."""
    asked = {"question_time": ASKED, "requester": "David", "k": 5}
    direct = retrieve(store, question, options=options, **asked)
    pregel = retrieve(store, question, options=replace(options, runtime="langgraph"), **asked)
    assert direct.model_dump() == pregel.model_dump()
    assert direct.round >= 1 and direct.event_ids


def test_the_direct_runtime_runs_the_llm_decisions_as_pregel_does(store: MemoryStore) -> None:
    def scripted() -> DummyLM:
        return DummyLM(
            [
                {"plan": plan_json("David sleep score Tuesday")},
                judgement(False, ["e06"], plan_json("David sleep Monday night")),
                judgement(True, ["e06"]),
            ]
        )

    asked = {"question_time": ASKED, "requester": "David", "k": 5}
    question = "How did I sleep on Tuesday?"
    direct = retrieve(store, question, options=llm_options(scripted()), **asked)
    pregel = retrieve(
        store, question, options=llm_options(scripted(), runtime="langgraph"), **asked
    )
    assert direct.round == 2 and direct.model_dump() == pregel.model_dump()


def test_an_unknown_runtime_is_refused(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="runtime must be 'direct' or 'langgraph'"):
        retrieve(store, "x", admin=True, options=replace(MEMFUSE, runtime="bogus"))  # type: ignore[arg-type]


def test_a_run_checks_its_request_once_and_builds_one_view(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However many rounds and nodes read the store, one request check and one view."""
    from graphs.retrieval import run as retrieval_run
    from memory import access

    calls = {"checks": 0, "views": 0}

    def counted(name: str, real: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(
        retrieval_run, "read_request", counted("checks", retrieval_run.read_request)
    )
    monkeypatch.setattr(
        retrieval_nodes, "read_request", counted("checks", retrieval_nodes.read_request)
    )
    monkeypatch.setattr(resources, "request_view", counted("views", access.request_view))
    lm = DummyLM(
        [
            {"plan": plan_json("David sleep score Tuesday")},
            judgement(False, ["e06"], plan_json("David sleep Monday night")),
            judgement(True, ["e06"]),
        ]
    )
    result = retrieve(
        store,
        "How did I sleep on Tuesday?",
        question_time=ASKED,
        requester="David",
        k=5,
        options=llm_options(lm),
    )
    assert result.round == 2
    assert calls == {"checks": 1, "views": 1}
    assert result.request is not None and result.request.requester == "David"


@pytest.mark.parametrize("runtime", ["direct", "langgraph"])
def test_a_reused_context_reads_each_run_afresh(store: MemoryStore, runtime: str) -> None:
    """A view remembers the searches it ran (a question's later rounds repeat the first's), so
    each run reads through a new one: a second run with the same context and the same reader
    finds what was stored after the first."""
    request = read_request("When was the piano lesson?", requester="Emma", k=6)
    context = ControllerOptions(policy="offline").context(store, 6).injecting(request=request)
    run = invoker(graph, runtime, RetrievalOutput)  # type: ignore[arg-type]
    given = request.model_dump()
    assert "e99" not in run(given, context).event_ids
    store.add_events(
        [
            Event(
                event_id="e99",
                timestamp=datetime(2026, 5, 13, 16, 0),
                device="phone_emma",
                modality="app_usage",
                description="Piano lesson with Mrs Kerr booked for Thursday",
                characters=("Emma",),
            )
        ]
    )
    assert "e99" in run(given, context).event_ids
