"""LLM faults on the graphs: a failing or babbling LLM never costs the evidence, never hides
who decided, and never spends more than its retry budget.

The endpoint is the local fake OpenAI server (tests/support/fake_openai.py) or DSPy's DummyLM;
the store is a real MemoryStore with the tiny hashed embedder. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.utils.dummies import DummyLM

from graphs.answer import answer_problem, answer_question
from graphs.fusion.context import FusionContext
from graphs.fusion.graph import builder as fusion_builder
from graphs.fusion.state import State as FusionState
from graphs.llm import LLMProviderError
from graphs.reader import read_answer
from graphs.retrieval import ControllerOptions, retrieve
from memfuse.settings import MemFuseSettings
from memory.models import Event
from memory.search.plan import RoundPlan
from memory.store import MemoryStore
from signatures.lm import lm_from_settings, model_names
from signatures.retry import forget_outages
from tests.support.embedders import tiny_embedder
from tests.support.fake_openai import Fail, start_fake_openai

ASKED = datetime(2026, 5, 13, 15, 0)


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_outages()
    with dspy.context(lm=None, adapter=None):
        yield
    forget_outages()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    opened = MemoryStore.open(tmp_path / "store", embedder=tiny_embedder())
    texts = [
        "Sleep score 82, 7h10m asleep",
        "Emma made coffee",
        "Lily arrived home from school",
        "Fridge ordered milk",
        "David left home for work",
    ]
    opened.add_events(
        [
            Event(
                event_id=f"e{i}",
                timestamp=datetime(2026, 5, 12, 6 + 2 * i),
                device="watch_david",
                modality="health",
                location="home",
                description=text,
                characters=("David",),
            )
            for i, text in enumerate(texts)
        ]
    )
    yield opened
    opened.close()


def settings_for(base_url: str, model: str = "fake-model", **extra: Any) -> MemFuseSettings:
    return MemFuseSettings(llm_model=model, llm_base_url=base_url, _env_file=None, **extra)


# --- one model name --------------------------------------------------------------------


@pytest.mark.parametrize(
    "configured", ["Qwen/Qwen2.5-7B-Instruct", "gpt-4o-mini", "openai/gpt-4o-mini"]
)
def test_reader_and_decisions_send_the_same_model_name(configured: str) -> None:
    with start_fake_openai(["decided", "answered"]) as fake:
        settings = settings_for(fake.base_url, configured)
        lm = lm_from_settings(settings)
        assert lm is not None and lm("ping") == ["decided"]
        answer = read_answer(
            ["[2026-05-12 06:00:00] [watch] [home] slept"],
            question="Sleep?",
            questioner="David",
            question_time=ASKED,
            settings=settings,
        )
    assert answer == "answered"
    assert fake.models == [model_names(configured).endpoint] * 2


# --- the retry budget -------------------------------------------------------------------


def test_the_reader_gives_up_within_its_budget() -> None:
    with start_fake_openai(lambda body: Fail(500)) as fake:
        started = time.monotonic()
        with pytest.raises(LLMProviderError, match="reader: provider error after 2 attempt"):
            read_answer(
                [],
                question="Sleep?",
                questioner=None,
                question_time=ASKED,
                settings=settings_for(fake.base_url, llm_retry_seconds=2.0),
            )
        assert time.monotonic() - started < 3.0
        assert fake.failures_served == 2


def test_a_down_endpoint_leaves_the_evidence_and_says_why(store: MemoryStore) -> None:
    with start_fake_openai(lambda body: Fail(500)) as fake:
        started = time.monotonic()
        out = answer_question(
            store,
            "How did I sleep?",
            question_time=ASKED,
            requester="David",
            k=3,
            settings=settings_for(fake.base_url, llm_retry_seconds=2.0),
        )
        spent = time.monotonic() - started
    # one budget (about 1 s of retries), then every later call is skipped without a request
    assert fake.failures_served == 2
    assert spent < 10.0
    assert out.answer is None
    assert out.reader_error.startswith("not sent: the endpoint failed")
    assert out.note.startswith("reader failed: ") and "\n" not in out.note
    assert [e.node_id for e in out.context] and len(out.context) == 3
    steps = [d.step for d in out.decisions]
    assert steps[0] == "round 1 planner" and steps[-1] == "reader"
    assert all(d.decided_by.startswith("offline fallback: ") for d in out.decisions)
    assert "provider error after 2 attempt" in out.decisions[0].decided_by


# --- garbage ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", "the reader returned an empty answer"),
        ("  \n ", "the reader returned an empty answer"),
        ("... ?!", "the reader's reply has no words"),
        ("<<<EVENTS\n[2026-05-12] slept\nEVENTS>>>", "echoes the prompt"),
    ],
)
def test_a_garbage_answer_is_flagged_not_returned(
    store: MemoryStore, reply: str, reason: str
) -> None:
    out = answer_question(
        store,
        "How did I sleep?",
        question_time=ASKED,
        admin=True,
        k=3,
        settings=MemFuseSettings(llm_model=None, _env_file=None),
        reader=lambda lines, **kw: reply,
    )
    assert out.answer is None
    assert reason in out.reader_error
    assert out.context
    assert out.decisions[-1].model_dump() == {
        "step": "reader",
        "decided_by": f"offline fallback: reader failed: {out.reader_error}",
    }


def test_a_reader_that_raises_is_one_line_and_the_evidence_stays(store: MemoryStore) -> None:
    def broken(lines: list[str], **kwargs: Any) -> str:
        raise RuntimeError("socket closed\nwhile reading")

    out = answer_question(
        store,
        "How did I sleep?",
        question_time=ASKED,
        admin=True,
        k=3,
        settings=MemFuseSettings(llm_model=None, _env_file=None),
        reader=broken,
    )
    assert out.reader_error == "RuntimeError: socket closed while reading"
    assert out.context


def test_a_real_answer_passes_and_says_the_llm_decided(store: MemoryStore) -> None:
    out = answer_question(
        store,
        "How did I sleep?",
        question_time=ASKED,
        admin=True,
        k=3,
        settings=MemFuseSettings(llm_model=None, _env_file=None),
        reader=lambda lines, **kw: "  82, 7h10m.  ",
    )
    assert out.answer == "82, 7h10m." and out.reader_error is None
    assert out.decisions[-1].model_dump() == {"step": "reader", "decided_by": "llm"}
    assert answer_problem("No.") is None


def test_without_an_llm_every_decision_says_offline(store: MemoryStore) -> None:
    out = answer_question(
        store,
        "How did I sleep?",
        question_time=ASKED,
        admin=True,
        k=3,
        settings=MemFuseSettings(llm_model=None, _env_file=None),
    )
    assert out.reader_error is None
    assert {d.decided_by for d in out.decisions} == {"offline"}
    assert out.decisions[-1].step == "reader"


def test_a_garbage_plan_is_an_offline_fallback_in_the_trace(store: MemoryStore) -> None:
    judged = {
        "coverage": json.dumps([{"facet": "sleep", "covered": True, "evidence_ids": ["e0"]}]),
        "sufficient": "true",
        "missing_facets": "[]",
        "selected_ids": json.dumps(["e0"]),
        "next_plan": "null",
    }
    lm = DummyLM(
        [
            {"plan": "I think you should look for sleep"},  # the chat adapter cannot read it …
            {"plan": "still no plan"},  # … nor the JSON adapter's retry
            judged,
            {**judged, "next_plan": RoundPlan(focus="sleep score").model_dump_json()},
        ]
    )
    result = retrieve(
        store,
        "How did I sleep?",
        question_time=ASKED,
        requester="David",
        k=3,
        options=ControllerOptions(policy="llm", lm=lm, min_rounds=2),  # two judge decisions
    )
    first = result.decisions[0]
    assert first.step == "round 1 planner"
    assert first.decided_by.startswith("offline fallback: LLM output unusable (expected fields")
    assert "still no plan" in first.decided_by
    assert [d.decided_by for d in result.decisions[1:]] == ["llm", "llm"]
    assert any(n.startswith("round 1 planner: LLM output unusable") for n in result.notes)


def run_fusion(event: Event, ctx: FusionContext) -> dict[str, Any]:
    """A fresh fusion graph's final full state (plan id included), typed."""
    final: dict[str, Any] = {}
    for values in fusion_builder.compile().stream(
        {"event": event}, context=ctx, stream_mode="values"
    ):
        final = values
    return dict(FusionState.model_validate(final))


def test_a_garbage_fusion_plan_is_rejected_with_what_came_back(tmp_path: Path) -> None:
    store = MemoryStore.open(tmp_path / "fusion", embedder=tiny_embedder())
    event = Event(
        event_id="f1",
        timestamp=datetime(2026, 5, 12, 8),
        device="cam_kitchen",
        modality="vision",
        location="kitchen",
        description="David spilled milk",
    )
    ctx = FusionContext(
        store=store,
        policy="llm",
        data_dir="unused",
        namespace="default",
        llm_model="dummy",
        llm_base_url="http://unused",
        llm_temperature=1.0,
        llm_max_tokens=100,
        lm=DummyLM([{"action": "dance"}, {"action": "dance again"}]),
    )
    try:
        state = run_fusion(event, ctx)
        status, reason = store.plan_status(state["plan_id"])
    finally:
        store.close()
    assert state["outcome"] == "rejected" and state["decided_by"] == "llm"
    violation = state["violations"][0]
    assert violation.startswith("malformed plan: LLM output unusable (expected fields action")
    assert "dance again" in violation and "\n" not in violation
    assert status == "rejected" and "dance again" in (reason or "")


def test_an_offline_fusion_plan_says_so(tmp_path: Path) -> None:
    store = MemoryStore.open(tmp_path / "fusion", embedder=tiny_embedder())
    event = Event(
        event_id="f1",
        timestamp=datetime(2026, 5, 12, 8),
        device="cam_kitchen",
        modality="vision",
        location="kitchen",
        description="David spilled milk",
    )
    ctx = FusionContext(
        store=store,
        policy="offline",
        data_dir="unused",
        namespace="default",
        llm_model="",
        llm_base_url="",
        llm_temperature=1.0,
        llm_max_tokens=100,
    )
    try:
        state = fusion_builder.compile().invoke({"event": event}, context=ctx)
    finally:
        store.close()
    assert state["outcome"] == "committed" and state["decided_by"] == "offline"
